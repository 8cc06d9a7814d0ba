import fs from 'node:fs';
import path from 'node:path';

import PostalMime from 'postal-mime';
import { describe, expect, inject, it } from 'vitest';

import { basicUser, call, newTenant, unique } from '../helpers/api.ts';

/** Messages the test SMTP server received for a recipient (parsed). */
async function inbox(recipient: string) {
  const dir = inject('smtpDir');
  const out = [];
  for (const f of fs.readdirSync(dir).sort()) {
    const mail = await PostalMime.parse(fs.readFileSync(path.join(dir, f)));
    if (mail.to?.some((a) => a.address === recipient)) out.push(mail);
  }
  return out;
}

const send = (key: string, json: unknown, headers?: Record<string, string>) =>
  call('POST', '/email/send', { key, json, headers });

describe('POST /email/send', () => {
  it('sends a notification over SMTP with subject, recipient and both parts', async () => {
    const t = await newTenant();
    const to = `${unique('ana')}@example.com`;
    const res = await send(t.adminKey, {
      user_id: unique('ana'),
      conversation_id: 'c1',
      email_type: 'notification',
      metadata: {
        recipient: to,
        subject: 'Your order shipped',
        body: 'It is on its way.\n\nThanks for shopping <with us>!',
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      duplicate: false,
      transport: 'smtp',
      metadata: { recipient: to, email_type: 'notification' },
    });
    expect(new Date(res.body.metadata.sent_at).toISOString()).toBe(res.body.metadata.sent_at);
    const [mail, ...more] = await inbox(to);
    expect(more).toHaveLength(0);
    expect(mail.subject).toBe('Your order shipped');
    expect(mail.messageId).toBe(res.body.message_id);
    expect(mail.from?.address).toBe('tests@platform.test');
    expect(mail.text).toContain('It is on its way.');
    expect(mail.html).toContain('Thanks for shopping &lt;with us&gt;!');
  });

  it('renders the templates', async () => {
    const t = await newTenant();
    const to = `${unique('tpl')}@example.com`;
    await send(t.adminKey, {
      user_id: 'u1',
      conversation_id: 'c',
      email_type: 'notification',
      metadata: { recipient: to, template: 'points_awarded', points: 50, balance: 120 },
    });
    await send(t.adminKey, {
      user_id: 'u1',
      conversation_id: 'c',
      email_type: 'notification',
      metadata: { recipient: to, template: 'reminder', title: 'Dentist', when: '2026-12-01 10:00' },
    });
    const subjects = (await inbox(to)).map((m) => m.subject);
    expect(subjects).toEqual(['You earned 50 points', 'Reminder: Dentist']);
  });

  it('sends once per idempotency key, even when the request is repeated concurrently', async () => {
    const t = await newTenant();
    const to = `${unique('once')}@example.com`;
    const body = {
      user_id: 'u2',
      conversation_id: 'c',
      email_type: 'notification',
      metadata: { recipient: to, subject: 'Once', body: 'Only once.', idempotency_key: 'promo-42' },
    };
    const results = await Promise.all([send(t.adminKey, body), send(t.adminKey, body), send(t.adminKey, body)]);
    expect(new Set(results.map((r) => r.body.message_id)).size).toBe(1);
    expect(results.filter((r) => !r.body.duplicate)).toHaveLength(1);
    const viaHeader = () =>
      send(
        t.adminKey,
        { ...body, metadata: { ...body.metadata, idempotency_key: undefined } },
        { 'idempotency-key': 'hdr-9' },
      );
    const h1 = await viaHeader();
    const h2 = await viaHeader();
    expect(h2.body).toMatchObject({ duplicate: true, message_id: h1.body.message_id });
    expect(await inbox(to)).toHaveLength(2);
  });

  it("summarises a conversation to the user's profile email", async () => {
    const t = await newTenant();
    const email = `${unique('profile')}@example.com`;
    const idp = unique('summary-user');
    await call('POST', '/api/users', { key: t.adminKey, json: { idp_id: idp, email } });
    const init = await call('POST', '/initialize_session', { key: t.adminKey, json: { user_id: idp } });
    const conv = init.body.conversation_id;
    await call('POST', '/process_text', {
      key: t.adminKey,
      json: { text: 'I would like to change my delivery address.', user_id: idp, conversation_id: conv },
    });
    await call('POST', '/process_text', {
      key: t.adminKey,
      json: { text: 'Also please cancel the second order.', user_id: idp, conversation_id: conv },
    });
    const res = await send(t.adminKey, {
      user_id: idp,
      conversation_id: conv,
      email_type: 'conversation_summary',
      metadata: {},
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.metadata).toMatchObject({ recipient: email, email_type: 'conversation_summary' });
    const [mail] = await inbox(email);
    expect(mail.subject).toBe('Summary of your conversation (2 items)');
    expect(mail.text).toContain(conv);
    expect(mail.text!.indexOf('delivery address')).toBeLessThan(mail.text!.indexOf('second order'));
    expect(mail.html).toContain('<li>');
    const empty = await send(t.adminKey, {
      user_id: idp,
      conversation_id: 'conv_empty',
      email_type: 'conversation_summary',
      metadata: {},
    });
    expect(empty.status).toBe(404);
  });

  it.each([
    [{ email_type: 'notification', metadata: { subject: 's', body: 'b' } }, /^metadata\.recipient: no recipient/],
    [
      { email_type: 'notification', metadata: { recipient: 'not-an-address', subject: 's', body: 'b' } },
      /^metadata\.recipient/,
    ],
    [
      {
        email_type: 'notification',
        metadata: { recipient: 'a@example.com\r\nBcc: evil@example.com', subject: 's', body: 'b' },
      },
      /^metadata\.recipient/,
    ],
    [
      {
        email_type: 'notification',
        metadata: { recipient: 'a@example.com', subject: 'Hi\r\nBcc: evil@example.com', body: 'b' },
      },
      /^metadata\.subject: must not contain line breaks/,
    ],
    [{ email_type: 'notification', metadata: { recipient: 'a@example.com', subject: 'Hi' } }, /^metadata\.body/],
    [
      { email_type: 'notification', metadata: { recipient: 'a@example.com', template: 'fireworks' } },
      /^metadata\.template/,
    ],
    [{ email_type: 'newsletter', metadata: { recipient: 'a@example.com' } }, /^email_type/],
  ])('refuses bad input with 422 and sends nothing (%#)', async (extra, message) => {
    const t = await newTenant();
    const before = fs.readdirSync(inject('smtpDir')).length;
    const res = await send(t.adminKey, { user_id: unique('nomail'), conversation_id: 'c', ...extra });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(message);
    expect(fs.readdirSync(inject('smtpDir')).length).toBe(before);
  });

  it("lets a basic key mail only its user's own address, with the platform's templates", async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const mine = `${unique('mine')}@example.com`;
    await call('PATCH', `/api/users/${u.user_id}`, { key: t.adminKey, json: { email: mine } });
    const outside = `${unique('victim')}@example.net`;
    const before = fs.readdirSync(inject('smtpDir')).length;
    const refused: [Record<string, unknown>, RegExp][] = [
      [
        { email_type: 'notification', metadata: { recipient: outside, template: 'welcome' } },
        /^metadata\.recipient: a basic API key sends only to its user's own email address; another recipient requires the admin permission$/,
      ],
      [
        { email_type: 'notification', metadata: { recipient: outside, subject: 'Invoice', body: 'Pay here' } },
        /^metadata\.recipient/,
      ],
      [
        { email_type: 'notification', metadata: { subject: 'Invoice', body: 'Pay here' } },
        /^metadata\.template: the generic template \(free subject and body\) requires the admin permission/,
      ],
      [
        { email_type: 'notification', metadata: { template: 'welcome', subject: 'Invoice: pay here' } },
        /^metadata\.subject: a free subject requires the admin permission$/,
      ],
    ];
    for (const [extra, message] of refused) {
      const res = await send(u.key, { user_id: u.user_id, conversation_id: 'c', ...extra });
      expect(res.status, JSON.stringify(extra)).toBe(403);
      expect(res.body.detail).toMatch(message);
    }
    expect(fs.readdirSync(inject('smtpDir')).length).toBe(before);
    expect(await inbox(outside)).toEqual([]);
    const ok = await send(u.key, {
      user_id: u.user_id,
      conversation_id: 'c',
      email_type: 'notification',
      metadata: { template: 'welcome', name: 'Ana' },
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.metadata.recipient).toBe(mine);
    const named = await send(u.key, {
      user_id: u.user_id,
      conversation_id: 'c',
      email_type: 'notification',
      metadata: { template: 'reminder', title: 'Dentist', recipient: mine.toUpperCase() },
    });
    expect(named.status).toBe(200);
    expect((await inbox(mine)).map((m) => m.subject).sort()).toEqual([
      'Reminder: Dentist',
      expect.stringMatching(/^Welcome to /),
    ]);
  });

  it('limits what a basic key sends per user and hour; repeats of a key cost nothing', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const mine = `${unique('busy')}@example.com`;
    await call('PATCH', `/api/users/${u.user_id}`, { key: t.adminKey, json: { email: mine } });
    const mail = (key: string) =>
      send(u.key, {
        user_id: u.user_id,
        conversation_id: 'c',
        email_type: 'notification',
        metadata: { template: 'welcome', idempotency_key: key },
      });
    const first = await mail('k-0');
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    // 19 more at once (20 is the default limit), and the first again, concurrently
    const burst = await Promise.all([...Array.from({ length: 19 }, (_, i) => mail(`k-${i + 1}`)), mail('k-0')]);
    expect(burst.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect((await mail('k-0')).body).toMatchObject({ duplicate: true, message_id: first.body.message_id });
    const over = await mail('k-20');
    expect(over.status).toBe(429);
    expect(over.body.detail).toBe('Email limit reached: 20 messages per hour for this user');
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(over.headers.get('retry-after'))).toBeLessThanOrEqual(3600);
    expect(await inbox(mine)).toHaveLength(20);
    // Concurrent new sends at the limit never get through.
    expect((await Promise.all([mail('k-21'), mail('k-22')])).map((r) => r.status)).toEqual([429, 429]);
    // An admin key is not limited.
    const admin = await send(t.adminKey, {
      user_id: u.user_id,
      conversation_id: 'c',
      email_type: 'notification',
      metadata: { template: 'welcome' },
    });
    expect(admin.status).toBe(200);
  });

  it('keeps organizations apart', async () => {
    const a = await newTenant();
    const b = await newTenant();
    const res = await send(a.adminKey, {
      user_id: 'x',
      organization_id: b.organization_id,
      conversation_id: 'c',
      email_type: 'notification',
      metadata: { recipient: 'a@example.com', subject: 's', body: 'b' },
    });
    expect(res.status).toBe(403);
  });
});
