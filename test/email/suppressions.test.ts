/**
 * Suppressions over HTTP: addresses an organization never mails. An admin lists, adds and lifts
 * them (a basic key none of it, another organization sees none of them); every message carries
 * List-Unsubscribe (a keyless, signed link) and List-Unsubscribe-Post (RFC 8058); the link's page
 * changes nothing, its POST suppresses, a tampered link is 404 and suppresses nothing; a recipient
 * the suite's SMTP server refuses for good at RCPT is suppressed as a hard bounce; a suppressed
 * address is refused (409) by every send, whatever its case; an erasure keeps it unmailed.
 */
import fs from 'node:fs';
import path from 'node:path';

import PostalMime from 'postal-mime';
import { describe, expect, inject, it } from 'vitest';

import { basicUser, call, newTenant, type Tenant, unique, until } from '../helpers/api.ts';
import { unzip } from '../helpers/zip.ts';

async function inbox(recipient: string) {
  const dir = inject('smtpDir');
  const out = [];
  for (const f of fs.readdirSync(dir).sort()) {
    const mail = await PostalMime.parse(fs.readFileSync(path.join(dir, f)));
    if (mail.to?.some((a) => a.address?.toLowerCase() === recipient.toLowerCase())) out.push(mail);
  }
  return out;
}

const ok = <T extends { status: number; body: unknown }>(what: string, res: T, status = 200): T => {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(status);
  return res;
};

const S = '/api/email/suppressions';
const mail = (t: Tenant, to: string, key = t.adminKey, extra: Record<string, unknown> = {}) =>
  call('POST', '/email/send', {
    key,
    json: {
      user_id: unique('u'),
      conversation_id: '-',
      email_type: 'notification',
      metadata: { recipient: to, subject: 'News', body: 'Hello.', ...extra },
    },
  });
const listOf = async (t: Tenant, q = '') =>
  ok('list', await call('GET', `${S}${q}`, { key: t.adminKey })).body.suppressions as {
    address: string | null;
    reason: string;
    source: string;
    detail: string | null;
  }[];

/** The path and query of a message's List-Unsubscribe link (the edge answers it under the suite's URL). */
async function unsubscribeLink(to: string): Promise<string> {
  const [m] = await inbox(to);
  const header = m.headers.find((h) => h.key === 'list-unsubscribe')?.value ?? '';
  const url = new URL(/^<([^>]+)>$/.exec(header)![1]);
  return `${url.pathname}${url.search}`;
}

describe('suppressions: the admin routes', () => {
  it('an admin adds, lists and lifts them; addresses are normalised; a suppressed address is refused by every send (409)', async () => {
    const t = await newTenant();
    const to = `${unique('Mixed')}@Example.COM`;
    const added = ok('add', await call('POST', S, { key: t.adminKey, json: { address: `  ${to} ` } })).body;
    expect(added).toMatchObject({
      created: true,
      suppression: { address: to.toLowerCase(), reason: 'manual', detail: null },
    });
    // Again, in another case and with another reason: one suppression, the first reason stays.
    const again = ok(
      'again',
      await call('POST', S, { key: t.adminKey, json: { address: to.toLowerCase(), reason: 'hard_bounce' } }),
    ).body;
    expect(again).toMatchObject({ created: false, suppression: { reason: 'manual' } });
    expect(await listOf(t)).toHaveLength(1);

    const refused = await mail(t, to.toLowerCase());
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/^metadata\.recipient: .* is suppressed in this organization \(manual\)/);
    expect(await inbox(to)).toEqual([]);

    // Another organization mails the address as before.
    const other = await newTenant();
    ok('other org sends', await mail(other, to));
    expect(await inbox(to)).toHaveLength(1);

    ok('lift', await call('DELETE', `${S}/${encodeURIComponent(to.toUpperCase())}`, { key: t.adminKey }));
    expect(await listOf(t)).toEqual([]);
    expect((await call('DELETE', `${S}/${encodeURIComponent(to)}`, { key: t.adminKey })).status).toBe(404);
    ok('sends again', await mail(t, to));
    expect(await inbox(to)).toHaveLength(2);

    const audit = ok('audit', await call('GET', '/api/audit?limit=50', { key: t.adminKey })).body.records as {
      action: string;
    }[];
    expect(audit.map((r) => r.action)).toEqual(
      expect.arrayContaining(['email_suppression.create', 'email_suppression.delete']),
    );
    // The trail never names the address.
    expect(JSON.stringify(audit)).not.toContain(to.toLowerCase().split('@')[0]);
  });

  it('a repeat of a key sent before the suppression answers its first send; a new key is refused and nothing is sent', async () => {
    const t = await newTenant();
    const to = `${unique('retry')}@example.com`;
    const keyed = (idempotency_key: string) =>
      call('POST', '/email/send', {
        key: t.adminKey,
        json: {
          user_id: 'retrier',
          conversation_id: '-',
          email_type: 'notification',
          metadata: { recipient: to, subject: 'News', body: 'Hello.', idempotency_key },
        },
      });
    const first = ok('send', await keyed('k1')).body;
    ok('suppress', await call('POST', S, { key: t.adminKey, json: { address: to } }));
    const repeat = ok('repeat', await keyed('k1')).body;
    expect(repeat).toMatchObject({ message_id: first.message_id, duplicate: true });
    expect((await keyed('k2')).status).toBe(409);
    expect(await inbox(to)).toHaveLength(1);
  });

  it('a basic key may not read, add or lift them, nor may another organization; bad input is 422; nothing changes', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const to = `${unique('kept')}@example.com`;
    ok('add', await call('POST', S, { key: t.adminKey, json: { address: to } }));
    const other = await newTenant();
    const org = `organization_id=${t.organization_id}`;
    const statuses = async (key: string, q = '') =>
      [
        await call('GET', `${S}${q ? `?${q}` : ''}`, { key }),
        await call('POST', S, {
          key,
          json: { address: `${unique('x')}@example.com`, ...(q && { organization_id: t.organization_id }) },
        }),
        await call('DELETE', `${S}/${encodeURIComponent(to)}${q ? `?${q}` : ''}`, { key }),
      ].map((r) => r.status);
    expect(await statuses(u.key)).toEqual([403, 403, 403]);
    expect(await statuses(other.adminKey, org)).toEqual([403, 403, 403]);
    // Its own list: not this organization's address (lifting it there is 404).
    const theirs = await statuses(other.adminKey);
    expect(theirs[0]).toBe(200);
    expect(theirs[2]).toBe(404);
    for (const json of [{ address: 'not-an-address' }, { address: to, reason: 'spam' }, {}]) {
      const res = await call('POST', S, { key: t.adminKey, json });
      expect(res.status, JSON.stringify(json)).toBe(422);
    }
    expect((await call('DELETE', `${S}/not-an-address`, { key: t.adminKey })).status).toBe(422);
    expect((await call('GET', `${S}?limit=0`, { key: t.adminKey })).status).toBe(422);
    expect((await listOf(t)).map((s) => s.address)).toEqual([to]);
    expect((await listOf(t, '?reason=unsubscribe')).length).toBe(0);
  });
});

describe('suppressions: the unsubscribe link', () => {
  it('every message carries it; its page changes nothing; its keyless POST (RFC 8058) suppresses; a repeat changes nothing', async () => {
    const t = await newTenant();
    const to = `${unique('unsub')}@example.com`;
    ok('send', await mail(t, to));
    const [first] = await inbox(to);
    expect(first.headers.find((h) => h.key === 'list-unsubscribe-post')?.value).toBe('List-Unsubscribe=One-Click');
    const link = await unsubscribeLink(to);
    expect(link).toMatch(/^\/email\/unsubscribe\?o=/);

    const page = ok('page', await call('GET', link));
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.raw.toString()).toContain('<form method="post"');
    expect(await listOf(t)).toEqual([]); // a mail scanner opening the link unsubscribes nobody

    const one = ok(
      'one-click',
      await call('POST', link, {
        body: 'List-Unsubscribe=One-Click',
        contentType: 'application/x-www-form-urlencoded',
      }),
    );
    expect(one.raw.toString()).toContain('Unsubscribed');
    ok('repeat', await call('POST', link));
    expect(await listOf(t)).toMatchObject([{ address: to, reason: 'unsubscribe', source: 'unsubscribe_link' }]);
    expect((await mail(t, to)).status).toBe(409);
    expect(await inbox(to)).toHaveLength(1);
  });

  it('a tampered link, one for another address or organization, or one without its signature is 404 and suppresses nothing', async () => {
    const t = await newTenant();
    const other = await newTenant();
    const to = `${unique('tamper')}@example.com`;
    ok('send', await mail(t, to));
    const link = new URL(await unsubscribeLink(to), 'http://x');
    const q = Object.fromEntries(link.searchParams);
    const flip = (s: string) => s.slice(0, -1) + (s.endsWith('0') ? '1' : '0');
    const bad: Record<string, string>[] = [
      { ...q, t: flip(q.t) },
      { ...q, a: `someone-else-${q.a}` },
      { ...q, a: q.a.toUpperCase(), t: flip(q.t) },
      { ...q, o: other.organization_id },
      { ...q, t: '' },
    ];
    for (const b of bad) {
      const url = `/email/unsubscribe?${new URLSearchParams(b)}`;
      expect((await call('GET', url)).status, JSON.stringify(b)).toBe(404);
      const res = await call('POST', url);
      expect(res.status, JSON.stringify(b)).toBe(404);
      expect(res.body.detail).toBe('Unsubscribe link not valid');
    }
    expect((await call('POST', '/email/unsubscribe')).status).toBe(422);
    expect(await listOf(t)).toEqual([]);
    expect(await listOf(other)).toEqual([]);
    ok('still sends', await mail(t, to));
  });
});

describe('suppressions: scheduled mail', () => {
  it("a scheduled email event's run to a suppressed address fails with the reason and sends nothing", async () => {
    const t = await newTenant();
    const to = `${unique('sched')}@example.com`;
    const B = '/api/scheduler-service/events';
    const ev = ok(
      'event',
      await call('POST', B, {
        key: t.adminKey,
        json: {
          idp_id: unique('mailer'),
          type_of_event: 'email',
          recurrency: 'weekly',
          start_event: new Date(Date.now() + 86_400_000).toISOString(),
          metadata: { recipient: to, subject: 'Weekly', body: 'Your week.' },
        },
      }),
    ).body.event;
    ok('suppress', await call('POST', S, { key: t.adminKey, json: { address: to, reason: 'unsubscribe' } }));
    ok('execute', await call('POST', `${B}/${ev.id}/execute`, { key: t.adminKey }));
    const seen = await until(
      'the run',
      () => call('GET', `/scheduler/events/${ev.id}/runs`, { key: t.adminKey }),
      (r) => r.body.runs?.length === 1,
      60_000,
    );
    expect(seen.body.runs[0]).toMatchObject({ outcome: 'failed', result: null });
    expect(seen.body.runs[0].error).toMatch(
      /^metadata\.recipient: .* is suppressed in this organization \(unsubscribe\)/,
    );
    expect(await inbox(to)).toEqual([]);
  });
});

describe('suppressions: hard bounces and erasure', () => {
  it('a recipient the SMTP server refuses for good at RCPT (the suite server rejects hard-bounce-* with 550) is suppressed as a hard bounce', async () => {
    const t = await newTenant();
    const to = `hard-bounce-${unique('x')}@example.com`;
    const res = await mail(t, to);
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.detail).toMatch(/^metadata\.recipient: the mail server refused .* suppressed as a hard bounce/);
    const [s] = await listOf(t, '?reason=hard_bounce');
    expect(s).toMatchObject({ address: to, reason: 'hard_bounce', source: 'smtp' });
    expect(s.detail).toMatch(/550/);
    const again = await mail(t, to, t.adminKey, { idempotency_key: 'another' });
    expect(again.status).toBe(409);
    expect(await inbox(to)).toEqual([]);
  });

  it("a user's export lists their suppressions; their erasure blanks the address and they are still never mailed", async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const own = `${unique('erased')}@example.com`;
    ok('email', await call('PATCH', `/api/users/${u.user_id}`, { key: t.adminKey, json: { email: own } }));
    ok(
      'send',
      await call('POST', '/email/send', {
        key: u.key,
        json: {
          user_id: u.user_id,
          conversation_id: '-',
          email_type: 'notification',
          metadata: { template: 'welcome' },
        },
      }),
    );
    ok('unsubscribe', await call('POST', await unsubscribeLink(own)));
    // The user's own key is refused too.
    const mine = await call('POST', '/email/send', {
      key: u.key,
      json: { user_id: u.user_id, conversation_id: '-', email_type: 'notification', metadata: { template: 'welcome' } },
    });
    expect(mine.status).toBe(409);

    const started = ok('export', await call('POST', `/api/users/${u.user_id}/export`, { key: u.key }), 202).body;
    const ready = await until(
      'the export',
      () => call('GET', `/api/users/${u.user_id}/exports/${started.export_id}`, { key: u.key }),
      (r) => r.body.export?.status !== 'processing',
      120_000,
      500,
    );
    expect(ready.body.export.status).toBe('ready');
    const zip = await unzip(
      ok('download', await call('GET', `/api/users/${u.user_id}/exports/${started.export_id}/download`, { key: u.key }))
        .raw,
    );
    const email = JSON.parse(zip.get('email.json')!.toString());
    expect(email.suppressions).toMatchObject([{ address: own, reason: 'unsubscribe' }]);

    ok('erase', await call('DELETE', `/api/users/${u.user_id}`, { key: t.adminKey, json: {} }), 202);
    await until(
      'the erasure completed',
      () => call('GET', `/api/users/${u.user_id}/erasure`, { key: t.adminKey }),
      (r) => r.body.erasure?.status === 'completed',
      180_000,
      500,
    );
    expect(await listOf(t)).toMatchObject([{ address: null, reason: 'unsubscribe' }]);
    const after = await mail(t, own.toUpperCase());
    expect(after.status).toBe(409);
    expect(await inbox(own)).toHaveLength(1);
  });
});
