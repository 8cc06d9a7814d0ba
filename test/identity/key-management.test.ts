/** A key's name and meta set by an admin, shown in the listing, carried by rotation; its usage by day and outcome. */
import { describe, expect, it } from 'vitest';

import { adminKey, basicUser, call, newTenant, until } from '../helpers/api.ts';
import { useSuiteClients } from '../helpers/runtime.ts';
import { unzip } from '../helpers/zip.ts';

const suite = useSuiteClients();

const keyIdOf = async (adminKey: string, user_id: string, index = 0) =>
  (await call('GET', `/list_api_keys/${user_id}`, { key: adminKey })).body.api_keys[index].key_id as string;

const listed = async (key: string, user_id: string, key_id: string) =>
  (await call('GET', `/list_api_keys/${user_id}`, { key })).body.api_keys.find(
    (k: { key_id: string }) => k.key_id === key_id,
  );

describe('PATCH /api/keys/{key_id}', () => {
  it('sets a name and meta that the listing shows, audited; null removes, a field left out stays', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const key_id = await keyIdOf(t.adminKey, u.user_id);
    const res = await call('PATCH', `/api/keys/${key_id}`, {
      key: t.adminKey,
      json: { name: "Ana's phone", meta: { app: 'ios', build: 412 } },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      key_id,
      user_id: u.user_id,
      name: "Ana's phone",
      meta: { app: 'ios', build: 412 },
      credits: null,
    });
    // The user's own listing shows them, and its last use.
    expect(await listed(u.key, u.user_id, key_id)).toMatchObject({
      name: "Ana's phone",
      meta: { app: 'ios', build: 412 },
      credits: null,
    });
    expect((await listed(u.key, u.user_id, key_id)).last_used).not.toBeNull();
    const cleared = await call('PATCH', `/api/keys/${key_id}`, { key: t.adminKey, json: { meta: null } });
    expect(cleared.body).toMatchObject({ name: "Ana's phone", meta: null });
    const audit = await call('GET', `/api/audit?action=api_key.update&target_id=${key_id}`, { key: t.adminKey });
    expect(audit.body.records).toHaveLength(2);
  });

  it('refuses a basic key (its own key included) and another organization, and changes nothing', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const key_id = await keyIdOf(t.adminKey, u.user_id);
    const own = await call('PATCH', `/api/keys/${key_id}`, {
      key: u.key,
      json: { name: 'mine', credits: { remaining: 1_000_000 } },
    });
    expect(own.status).toBe(403);
    const other = await newTenant();
    const foreign = await call('PATCH', `/api/keys/${key_id}`, { key: other.adminKey, json: { name: 'theirs' } });
    expect(foreign.status).toBe(404);
    expect(foreign.body.detail).toContain('API key not found');
    const unknown = await call('PATCH', '/api/keys/key_nope', { key: t.adminKey, json: { name: 'x' } });
    expect(unknown.status).toBe(404);
    expect(await listed(t.adminKey, u.user_id, key_id)).toMatchObject({ name: null, credits: null });
  });

  it('refuses an admin the key of a user holding more rights than the calling key', async () => {
    const t = await newTenant();
    const boss = await call('POST', '/generate_api_key', {
      key: adminKey(),
      json: { user_id: 'boss-of-all', organization_id: t.organization_id, permissions: ['system_admin'] },
    });
    expect(boss.status).toBe(200);
    const res = await call('PATCH', `/api/keys/${boss.body.metadata.key_id}`, {
      key: t.adminKey,
      json: { credits: { remaining: 0 } },
    });
    expect(res.status).toBe(403);
    expect((await call('GET', '/api/sessions/policy', { key: boss.body.api_key })).status).toBe(200);
  });

  it('refuses bad input with 422 naming the field, and changes nothing', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const key_id = await keyIdOf(t.adminKey, u.user_id);
    const cases: [object, string][] = [
      [{}, 'name'],
      [{ name: '' }, 'name'],
      [{ name: 'x'.repeat(101) }, 'name'],
      [{ meta: { blob: 'x'.repeat(3000) } }, 'meta'],
      [{ meta: ['not', 'an', 'object'] }, 'meta'],
      [{ credits: { remaining: -1 } }, 'remaining'],
      [{ credits: { remaining: 5, refill: { amount: 5, interval: 'weekly' } } }, 'interval'],
      [{ credits: { remaining: 5, refill: { amount: 0, interval: 'daily' } } }, 'amount'],
    ];
    for (const [json, field] of cases) {
      const res = await call('PATCH', `/api/keys/${key_id}`, { key: t.adminKey, json });
      expect(res.status, JSON.stringify(json)).toBe(422);
      expect(JSON.stringify(res.body)).toContain(field);
    }
    expect(await listed(t.adminKey, u.user_id, key_id)).toMatchObject({ name: null, meta: null, credits: null });
  });

  it('refuses a revoked key with 409; a rotation hands name, meta and credits to the new key', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const key_id = await keyIdOf(t.adminKey, u.user_id);
    await call('PATCH', `/api/keys/${key_id}`, {
      key: t.adminKey,
      json: { name: 'tablet', meta: { seat: 3 }, credits: { remaining: 10 } },
    });
    const rotated = await call('POST', '/rotate_api_key', {
      key: t.adminKey,
      json: { user_id: u.user_id, key_id, grace_seconds: 600 },
    });
    expect(rotated.status).toBe(200);
    const successor = rotated.body.metadata.key_id as string;
    expect(await listed(t.adminKey, u.user_id, successor)).toMatchObject({
      name: 'tablet',
      meta: { seat: 3 },
      credits: { remaining: 10, refill: null },
    });
    // One pool: the old key in its grace and the new one spend the same credits.
    await call('GET', `/list_api_keys/${u.user_id}`, { key: u.key });
    await call('GET', `/list_api_keys/${u.user_id}`, { key: rotated.body.api_key });
    expect((await listed(t.adminKey, u.user_id, successor)).credits.remaining).toBe(8);
    expect((await listed(t.adminKey, u.user_id, key_id)).credits.remaining).toBe(8);

    await call('POST', '/revoke_api_key', { key: t.adminKey, json: { user_id: u.user_id, api_key: successor } });
    const res = await call('PATCH', `/api/keys/${successor}`, { key: t.adminKey, json: { name: 'again' } });
    expect(res.status).toBe(409);
    expect(res.body.detail).toContain('revoked');
    expect(await listed(t.adminKey, u.user_id, successor)).toMatchObject({ name: 'tablet', status: 'revoked' });
  });
});

describe('GET /api/keys/{key_id}/usage', () => {
  it('counts a key’s requests by day and outcome, written to the database within seconds', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const key_id = await keyIdOf(t.adminKey, u.user_id);
    expect((await call('GET', `/api/users/${u.user_id}`, { key: u.key })).status).toBe(200);
    expect((await call('GET', `/list_api_keys/${u.user_id}`, { key: u.key })).status).toBe(200);
    expect((await call('GET', '/api/sessions/policy', { key: u.key })).status).toBe(403);
    expect((await call('DELETE', '/api/sessions/ses_unknown', { key: u.key })).status).toBe(404);
    const today = new Date().toISOString().slice(0, 10);
    const usage = await until(
      'the usage counts',
      async () => (await call('GET', `/api/keys/${key_id}/usage?days=7`, { key: t.adminKey })).body,
      (b) => b.totals?.total >= 4,
      10_000,
    );
    expect(usage).toMatchObject({ success: true, key_id, days: 7, to: today });
    expect(usage.totals).toMatchObject({ success: 2, forbidden: 1, client_error: 1, rate_limited: 0, total: 4 });
    expect(usage.by_day).toHaveLength(7);
    expect(usage.by_day[6]).toMatchObject({ day: today, success: 2, total: 4 });
    expect(usage.by_day[0].total).toBe(0);
    const stored = await until(
      'the usage day written',
      () => suite.db.collection('api_key_usage_days').findOne({ _id: `${key_id}|${today}` as never }),
      (d) => d !== null && d.success === 2,
      15_000,
    );
    expect(stored).toMatchObject({ forbidden: 1, client_error: 1, organization_id: t.organization_id });
  });

  it('counts requests refused by the per-minute limit as rate_limited', async () => {
    const t = await newTenant();
    const idp = 'limited-user';
    const key = await call('POST', '/generate_api_key', {
      key: t.adminKey,
      json: { user_id: idp, rate_limit_per_minute: 2 },
    });
    const { api_key, metadata } = key.body;
    const statuses = [];
    for (let i = 0; i < 3; i += 1)
      statuses.push((await call('GET', `/api/users/${metadata.user_id}`, { key: api_key })).status);
    expect(statuses).toEqual([200, 200, 429]);
    const usage = await until(
      'the usage counts',
      async () => (await call('GET', `/api/keys/${metadata.key_id}/usage`, { key: t.adminKey })).body,
      (b) => b.totals?.total >= 3,
      10_000,
    );
    expect(usage.totals).toMatchObject({ success: 2, rate_limited: 1 });
    expect(usage.days).toBe(30);
  });

  it("shows a basic key its own user's keys only; another user's or organization's key is 404", async () => {
    const t = await newTenant();
    const a = await basicUser(t);
    const b = await basicUser(t);
    const aKey = await keyIdOf(t.adminKey, a.user_id);
    const bKey = await keyIdOf(t.adminKey, b.user_id);
    expect((await call('GET', `/api/keys/${aKey}/usage`, { key: a.key })).status).toBe(200);
    expect((await call('GET', `/api/keys/${bKey}/usage`, { key: a.key })).status).toBe(404);
    const other = await newTenant();
    expect((await call('GET', `/api/keys/${aKey}/usage`, { key: other.adminKey })).status).toBe(404);
    const bad = await call('GET', `/api/keys/${aKey}/usage?days=91`, { key: a.key });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body)).toContain('days');
  });
});

describe("a key's name, meta, credits and usage in the user's export and erasure", () => {
  it('exports name, meta and usage days; erasure deletes the usage days and credits and drops name and meta', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const key_id = await keyIdOf(t.adminKey, u.user_id);
    await call('PATCH', `/api/keys/${key_id}`, {
      key: t.adminKey,
      json: { name: 'Ana phone', meta: { device: 'pixel' }, credits: { remaining: 50 } },
    });
    expect((await call('GET', `/api/users/${u.user_id}`, { key: u.key })).status).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    await until(
      'the usage day written',
      () => suite.db.collection('api_key_usage_days').findOne({ _id: `${key_id}|${today}` as never }),
      (d) => d !== null,
      15_000,
    );
    const started = await call('POST', `/api/users/${u.user_id}/export`, { key: u.key });
    expect(started.status).toBe(202);
    await until(
      'the export ready',
      () => call('GET', `/api/users/${u.user_id}/exports/${started.body.export_id}`, { key: u.key }),
      (r) => r.body.export?.status === 'ready',
      120_000,
      500,
    );
    const zip = await unzip(
      (await call('GET', `/api/users/${u.user_id}/exports/${started.body.export_id}/download`, { key: u.key })).raw,
    );
    const identity = JSON.parse(zip.get('identity.json')!.toString());
    expect(identity.api_keys[0]).toMatchObject({ key_id, name: 'Ana phone', meta: { device: 'pixel' } });
    expect(identity.api_key_usage_days[0]).toMatchObject({ key_id, day: today });
    expect(identity.api_key_usage_days[0].success).toBeGreaterThanOrEqual(1);

    const erase = await call('DELETE', `/api/users/${u.user_id}`, { key: t.adminKey, json: { reason: 'asked' } });
    expect(erase.status).toBe(202);
    await until(
      'the erasure completed',
      () => call('GET', `/api/users/${u.user_id}/erasure`, { key: t.adminKey }),
      (r) => r.body.erasure?.status === 'completed',
      120_000,
      500,
    );
    expect(await suite.db.collection('api_key_usage_days').countDocuments({ key_id })).toBe(0);
    expect(await suite.db.collection('api_key_credits').findOne({ _id: key_id as never })).toBeNull();
    const doc = await suite.db.collection('api_keys').findOne({ key_id });
    expect(doc).toMatchObject({ status: 'revoked' });
    expect(doc!.name).toBeUndefined();
    expect(doc!.meta).toBeUndefined();
  }, 150_000);
});
