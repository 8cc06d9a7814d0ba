/**
 * Mail templates per organization over HTTP: an admin creates, reads, replaces, previews and
 * deletes them (audited; a basic key may do none of it, another organization sees none of them);
 * sends and scheduled email events name one by template_id with variables and a locale (the
 * locale, else its language, else the default); a variable left unfilled, an unknown template or
 * a bad template is a clear 4xx and nothing is sent or changed.
 */
import fs from 'node:fs';
import path from 'node:path';

import PostalMime from 'postal-mime';
import { describe, expect, inject, it } from 'vitest';

import { basicUser, call, newTenant, type Tenant, unique, until } from '../helpers/api.ts';

async function inbox(recipient: string) {
  const dir = inject('smtpDir');
  const out = [];
  for (const f of fs.readdirSync(dir).sort()) {
    const mail = await PostalMime.parse(fs.readFileSync(path.join(dir, f)));
    if (mail.to?.some((a) => a.address === recipient)) out.push(mail);
  }
  return out;
}

const ok = <T extends { status: number; body: unknown }>(what: string, res: T, status = 200): T => {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(status);
  return res;
};

const T = '/api/email/templates';
const WELCOME = {
  template_id: 'welcome-back',
  name: 'Welcome back',
  default_locale: 'en',
  versions: [
    {
      locale: 'en',
      subject: 'Welcome back, {{ first_name }}',
      text: 'Hello {{first_name}}, you have {{points}} points.\nUnsubscribe: {{unsubscribe_url}}',
      html: '<p>Hello <b>{{first_name}}</b>, you have {{points}} points.</p>',
    },
    { locale: 'fr', subject: 'Bon retour, {{first_name}}', text: 'Bonjour {{first_name}}, {{points}} points.' },
  ],
};

const create = (t: Tenant, json: Record<string, unknown> = WELCOME, key = t.adminKey) => call('POST', T, { key, json });
const send = (key: string, json: Record<string, unknown>) => call('POST', '/email/send', { key, json });
const templateSend = (to: string, metadata: Record<string, unknown>) => ({
  user_id: unique('u'),
  conversation_id: '-',
  email_type: 'notification',
  metadata: { recipient: to, template_id: 'welcome-back', ...metadata },
});

describe('mail templates: the admin routes', () => {
  it('are created, listed, read, replaced and deleted by an admin, with the variables they use, each change audited', async () => {
    const t = await newTenant();
    const made = ok('create', await create(t), 201).body.template;
    expect(made).toMatchObject({
      template_id: 'welcome-back',
      name: 'Welcome back',
      default_locale: 'en',
      variables: ['first_name', 'points', 'unsubscribe_url'],
      versions: [
        { locale: 'en', subject: 'Welcome back, {{ first_name }}' },
        { locale: 'fr', text: 'Bonjour {{first_name}}, {{points}} points.', html: null },
      ],
    });
    // An id the platform chooses when the admin gives none.
    const auto = ok('create without id', await create(t, { ...WELCOME, template_id: undefined }), 201).body.template;
    expect(auto.template_id).toMatch(/^tpl_[0-9a-f]{16}$/);
    const list = ok('list', await call('GET', T, { key: t.adminKey })).body.templates;
    expect(list.map((x: { template_id: string }) => x.template_id).sort()).toEqual(
      [auto.template_id, 'welcome-back'].sort(),
    );
    expect(ok('get', await call('GET', `${T}/welcome-back`, { key: t.adminKey })).body.template).toEqual(made);

    const replaced = ok(
      'put',
      await call('PUT', `${T}/welcome-back`, {
        key: t.adminKey,
        json: { name: 'Hi', default_locale: 'fr', versions: [WELCOME.versions[1]] },
      }),
    ).body.template;
    expect(replaced).toMatchObject({ name: 'Hi', default_locale: 'fr', variables: ['first_name', 'points'] });
    expect(replaced.created_at).toBe(made.created_at);

    ok('delete', await call('DELETE', `${T}/${auto.template_id}`, { key: t.adminKey }));
    expect((await call('GET', `${T}/${auto.template_id}`, { key: t.adminKey })).status).toBe(404);
    expect((await call('DELETE', `${T}/${auto.template_id}`, { key: t.adminKey })).status).toBe(404);
    expect((await call('PUT', `${T}/${auto.template_id}`, { key: t.adminKey, json: WELCOME })).status).toBe(404);

    const audit = ok('audit', await call('GET', '/api/audit?limit=100', { key: t.adminKey })).body;
    const actions = audit.records.map((r: { action: string }) => r.action);
    expect(actions).toEqual(
      expect.arrayContaining(['email_template.create', 'email_template.update', 'email_template.delete']),
    );
  });

  it('refuse a basic key (403) and another organization (404 or 403), changing nothing', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    ok('create', await create(t), 201);
    const tries = (key: string, org = '') =>
      Promise.all([
        create(t, { ...WELCOME, template_id: 'other' }, key),
        call('GET', `${T}${org ? `?organization_id=${org}` : ''}`, { key }),
        call('GET', `${T}/welcome-back${org ? `?organization_id=${org}` : ''}`, { key }),
        call('PUT', `${T}/welcome-back`, {
          key,
          json: { ...WELCOME, template_id: undefined, name: 'Mine', ...(org && { organization_id: org }) },
        }),
        call('DELETE', `${T}/welcome-back${org ? `?organization_id=${org}` : ''}`, { key }),
        call('POST', `${T}/welcome-back/preview`, {
          key,
          json: { variables: { first_name: 'x', points: 1 }, ...(org && { organization_id: org }) },
        }),
      ]);
    expect((await tries(u.key)).map((r) => r.status)).toEqual([403, 403, 403, 403, 403, 403]);
    const other = await newTenant();
    // Its own organization has no such template; naming this one is refused.
    const own = await tries(other.adminKey);
    expect(own.map((r) => r.status).slice(2)).toEqual([404, 404, 404, 404]);
    expect(own[1].body.templates).toEqual([]);
    expect((await tries(other.adminKey, t.organization_id)).map((r) => r.status).slice(1)).toEqual([
      403, 403, 403, 403, 403,
    ]);
    const still = ok('get', await call('GET', `${T}/welcome-back`, { key: t.adminKey })).body.template;
    expect(still.name).toBe('Welcome back');
    expect(
      ok('list', await call('GET', T, { key: t.adminKey })).body.templates.map(
        (x: { template_id: string }) => x.template_id,
      ),
    ).toEqual(['welcome-back']);
  });

  it('refuse bad templates with 422 naming the field, and a taken template_id with 409, creating nothing', async () => {
    const t = await newTenant();
    const v = (over: Record<string, unknown>) => ({ ...WELCOME, versions: [{ ...WELCOME.versions[0], ...over }] });
    const refused: [string, Record<string, unknown>, RegExp][] = [
      ['a brace that is no variable', v({ text: 'Hi {{ first name }}' }), /^versions\.0\.text: /],
      ['an expression', v({ html: '<p>{{constructor.constructor("x")()}}</p>' }), /^versions\.0\.html: /],
      ['no version of the default locale', { ...WELCOME, default_locale: 'de' }, /^default_locale: de has no version/],
      [
        'the same locale twice',
        { ...WELCOME, versions: [WELCOME.versions[0], { ...WELCOME.versions[0], locale: 'EN' }] },
        /^versions\.1\.locale: en is given twice/,
      ],
      ['neither text nor html', v({ text: null, html: null }), /^versions\.0\.text: /],
      ['a subject of two lines', v({ subject: 'a\nb' }), /^versions\.0\.subject/],
      ['not a locale', v({ locale: 'english!' }), /^versions\.0\.locale/],
      ['an id not a slug', { ...WELCOME, template_id: 'Welcome Back' }, /^template_id/],
      ['no versions', { ...WELCOME, versions: [] }, /^versions/],
    ];
    for (const [what, json, field] of refused) {
      const res = await create(t, json);
      expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(422);
      expect(res.body.detail, what).toMatch(field);
    }
    expect(ok('list', await call('GET', T, { key: t.adminKey })).body.templates).toEqual([]);
    ok('create', await create(t), 201);
    const taken = await create(t, { ...WELCOME, name: 'Another' });
    expect(taken.status).toBe(409);
    expect(taken.body.detail).toMatch(/^template_id: welcome-back exists already/);
    // Two creations of one id at once: one template, the other 409.
    const racing = await Promise.all([
      create(t, { ...WELCOME, template_id: 'race' }),
      create(t, { ...WELCOME, template_id: 'race', name: 'Second' }),
    ]);
    expect(racing.map((r) => r.status).sort()).toEqual([201, 409]);
    // A bad replacement changes nothing either.
    expect((await call('PUT', `${T}/welcome-back`, { key: t.adminKey, json: v({ text: '{{' }) })).status).toBe(422);
    expect(ok('get', await call('GET', `${T}/welcome-back`, { key: t.adminKey })).body.template.versions).toHaveLength(
      2,
    );
  });
});

describe('mail templates: preview and locales', () => {
  it('render the locale asked, else its language, else the default; HTML values escaped, values never read as templates', async () => {
    const t = await newTenant();
    ok('create', await create(t), 201);
    const preview = (json: Record<string, unknown>) =>
      call('POST', `${T}/welcome-back/preview`, { key: t.adminKey, json });
    const vars = { first_name: '<Ana> {{points}}', points: 120 };
    const en = ok('en', await preview({ variables: vars })).body;
    expect(en).toMatchObject({ locale: 'en', subject: 'Welcome back, <Ana> {{points}}' });
    expect(en.html).toBe('<p>Hello <b>&lt;Ana&gt; {{points}}</b>, you have 120 points.</p>');
    expect(en.text).toMatch(/^Hello <Ana> \{\{points\}\}, you have 120 points\.\nUnsubscribe: http/);
    const fr = ok('fr-CA', await preview({ variables: vars, locale: 'fr-CA' })).body;
    expect(fr).toMatchObject({ locale: 'fr', subject: 'Bon retour, <Ana> {{points}}' });
    expect(fr.text).toBe('Bonjour <Ana> {{points}}, 120 points.');
    // No html in the fr version: the text, in paragraphs, escaped.
    expect(fr.html).toContain('<p>Bonjour &lt;Ana&gt; {{points}}, 120 points.</p>');
    expect(ok('de', await preview({ variables: vars, locale: 'de-AT' })).body.locale).toBe('en');

    const missing = await preview({ variables: { first_name: 'Ana' }, locale: 'fr' });
    expect(missing.status).toBe(422);
    expect(missing.body.detail).toMatch(/^variables\.points: the template welcome-back \(fr\) uses \{\{points\}\}/);
    const multiline = await preview({ variables: { first_name: 'A\nBcc: x@evil.test', points: 1 } });
    expect(multiline.status).toBe(422);
    expect(multiline.body.detail).toMatch(/^variables\.first_name: is in the subject/);
    expect((await preview({ variables: vars, locale: 'not a locale' })).status).toBe(422);
    expect((await call('POST', `${T}/nope/preview`, { key: t.adminKey, json: {} })).status).toBe(404);
  });
});

describe('sends by template', () => {
  it('send the rendered version over SMTP, to a basic key its own address too; the headers carry the unsubscribe link', async () => {
    const t = await newTenant();
    ok('create', await create(t), 201);
    const to = `${unique('tpl')}@example.com`;
    const res = ok(
      'send',
      await send(t.adminKey, templateSend(to, { variables: { first_name: 'Ana', points: 5 }, locale: 'fr' })),
    );
    expect(res.body).toMatchObject({ duplicate: false, transport: 'smtp' });
    const [mail] = await inbox(to);
    expect(mail.subject).toBe('Bon retour, Ana');
    expect(mail.text).toContain('Bonjour Ana, 5 points.');
    const header = (name: string) => mail.headers.find((h) => h.key === name.toLowerCase())?.value;
    expect(header('List-Unsubscribe')).toMatch(
      /^<https?:\/\/[^>]+\/email\/unsubscribe\?o=[^&]+&a=[^&]+&t=[0-9a-f]{32}>$/,
    );
    expect(header('List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');

    // A basic key sends an organization's template to its own address (its text is the admin's).
    const u = await basicUser(t);
    const own = `${unique('own')}@example.com`;
    ok('email', await call('PATCH', `/api/users/${u.user_id}`, { key: t.adminKey, json: { email: own } }));
    ok(
      'basic send',
      await send(u.key, {
        user_id: u.user_id,
        conversation_id: '-',
        email_type: 'notification',
        metadata: { template_id: 'welcome-back', variables: { first_name: 'Bo', points: 1 } },
      }),
    );
    const [mine] = await inbox(own);
    expect(mine.subject).toBe('Welcome back, Bo');
    expect(mine.text).toContain(`Unsubscribe: http`);
    // ...but never to another address.
    const elsewhere = await send(u.key, {
      user_id: u.user_id,
      conversation_id: '-',
      email_type: 'notification',
      metadata: { recipient: to, template_id: 'welcome-back', variables: { first_name: 'Bo', points: 1 } },
    });
    expect(elsewhere.status).toBe(403);
  });

  it('refuse an unfilled variable (422 naming it), an unknown or foreign template (404) and mixed fields (422): nothing sent', async () => {
    const t = await newTenant();
    ok('create', await create(t), 201);
    const other = await newTenant();
    ok('other create', await create(other, { ...WELCOME, template_id: 'theirs' }), 201);
    const to = `${unique('none')}@example.com`;
    const cases: [string, Record<string, unknown>, number, RegExp][] = [
      ['points left unfilled', { variables: { first_name: 'Ana' } }, 422, /^metadata\.variables\.points: /],
      ['no variables at all', {}, 422, /^metadata\.variables\.first_name: /],
      [
        'an object as a value',
        { variables: { first_name: { a: 1 }, points: 1 } },
        422,
        /^metadata\.variables\.first_name/,
      ],
      ['an unknown template', { template_id: 'nope', variables: {} }, 404, /Template not found: nope/],
      ["another organization's template", { template_id: 'theirs', variables: {} }, 404, /Template not found/],
      ['a subject too', { subject: 'x', variables: { first_name: 'A', points: 1 } }, 422, /^metadata\.subject: /],
      [
        'a built-in template too',
        { template: 'welcome', variables: { first_name: 'A', points: 1 } },
        422,
        /^metadata\.template: /,
      ],
      ['a bad locale', { locale: 'xx yy', variables: { first_name: 'A', points: 1 } }, 422, /^metadata\.locale/],
    ];
    for (const [what, metadata, status, detail] of cases) {
      const res = await send(t.adminKey, templateSend(to, metadata));
      expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(status);
      expect(res.body.detail, what).toMatch(detail);
    }
    const summary = await send(t.adminKey, {
      ...templateSend(to, { variables: { first_name: 'A', points: 1 } }),
      email_type: 'conversation_summary',
    });
    expect(summary.status).toBe(422);
    expect(await inbox(to)).toEqual([]);
  });

  it('scheduled email events name a template: checked when saved (404 / 422), rendered at each run', async () => {
    const t = await newTenant();
    ok('create', await create(t), 201);
    const to = `${unique('sched')}@example.com`;
    const B = '/api/scheduler-service/events';
    const event = (metadata: Record<string, unknown>) =>
      call('POST', B, {
        key: t.adminKey,
        json: {
          idp_id: unique('mailer'),
          type_of_event: 'email',
          recurrency: 'weekly',
          start_event: new Date(Date.now() + 86_400_000).toISOString(),
          metadata: { recipient: to, template_id: 'welcome-back', ...metadata },
        },
      });
    const unknown = await event({ template_id: 'nope', variables: {} });
    expect(unknown.status).toBe(404);
    const unfilled = await event({ variables: { first_name: 'Ana' } });
    expect(unfilled.status).toBe(422);
    expect(unfilled.body.detail).toMatch(/^metadata\.variables\.points/);
    const ev = ok('event', await event({ variables: { first_name: 'Ana', points: 7 }, locale: 'en-GB' }), 200).body
      .event;
    ok('execute', await call('POST', `${B}/${ev.id}/execute`, { key: t.adminKey }));
    const mails = await until(
      'the scheduled mail',
      () => inbox(to),
      (m) => m.length === 1,
      60_000,
    );
    expect(mails[0].subject).toBe('Welcome back, Ana');
    expect(mails[0].text).toContain('you have 7 points.');
  });
});
