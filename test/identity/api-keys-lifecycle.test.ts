/**
 * API keys over their life: expiry, rotation with a grace period, verify_api_key's reasons and
 * permission check, and the rate limit a user's keys share.
 */
import { describe, expect, inject, it } from 'vitest';

import { adminKey, basicUser, call, newTenant, unique } from '../helpers/api.ts';

const keyCap = () => Number((inject('platformEnv') as Record<string, string | undefined>).MAX_KEYS_PER_USER ?? 10);
const sleepUntil = (t: number) => new Promise((r) => setTimeout(r, Math.max(0, t - Date.now())));
const me = (u: { user_id: string }, key: string) => call('GET', `/api/users/${u.user_id}`, { key });
const verify = (api_key: string, permission?: string) =>
  call('POST', '/verify_api_key', { json: { api_key, ...(permission ? { permission } : {}) } });
const listed = async (user_id: string, key: string) => {
  const res = await call('GET', `/list_api_keys/${user_id}`, { key });
  expect(res.status).toBe(200);
  return new Map<string, any>(res.body.api_keys.map((k: any) => [k.key_id, k]));
};

describe('expiry', () => {
  it('refuses a key once expires_at has passed, also after the edge has cached it', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const at = new Date(Date.now() + 3000);
    const gen = await call('POST', '/generate_api_key', {
      key: t.adminKey,
      json: { user_id: u.user_id, expires_at: at.toISOString() },
    });
    expect(gen.status).toBe(200);
    expect(gen.body.metadata.expires_at).toBe(at.toISOString());
    const key = gen.body.api_key as string;
    expect((await me(u, key)).status).toBe(200); // cached from here on
    expect((await verify(key)).body.valid).toBe(true);
    expect((await listed(u.user_id, t.adminKey)).get(gen.body.metadata.key_id)).toMatchObject({
      status: 'active',
      active: true,
      expires_at: at.toISOString(),
    });

    await sleepUntil(at.getTime() + 100);
    const refused = await me(u, key);
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ detail: 'Not authenticated' });
    expect((await call('GET', `/list_api_keys/${u.user_id}`, { key })).status).toBe(401);
    expect((await verify(key)).body).toEqual({ valid: false, reason: 'expired' });
    expect((await listed(u.user_id, t.adminKey)).get(gen.body.metadata.key_id)).toMatchObject({
      status: 'expired',
      active: false,
    });
  });

  it('takes only a future date at most ten years ahead, and a new key never outlives its creator', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    for (const expires_at of [
      new Date(Date.now() - 1000).toISOString(),
      new Date(Date.now() + 11 * 365 * 86_400_000).toISOString(),
      'tomorrow',
    ]) {
      const res = await call('POST', '/generate_api_key', {
        key: t.adminKey,
        json: { user_id: u.user_id, expires_at },
      });
      expect(res.status, expires_at).toBe(422);
      expect(res.body.detail).toMatch(/^expires_at/);
    }
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const parent = await call('POST', '/generate_api_key', {
      key: t.adminKey,
      json: { user_id: u.user_id, expires_at: at },
    });
    const later = new Date(Date.now() + 7_200_000).toISOString();
    for (const json of [{ user_id: u.user_id }, { user_id: u.user_id, expires_at: later }]) {
      const child = await call('POST', '/generate_api_key', { key: parent.body.api_key, json });
      expect(child.status).toBe(200);
      expect(child.body.metadata.expires_at).toBe(at);
    }
    // An expired key frees its place under the cap.
    const cap = keyCap();
    const v = await basicUser(t);
    const soon = new Date(Date.now() + 5000); // room for cap - 1 creations on a loaded machine
    for (let i = 1; i < cap; i += 1)
      expect(
        (
          await call('POST', '/generate_api_key', {
            key: t.adminKey,
            json: { user_id: v.user_id, expires_at: soon.toISOString() },
          })
        ).status,
      ).toBe(200);
    expect((await call('POST', '/generate_api_key', { key: t.adminKey, json: { user_id: v.user_id } })).status).toBe(
      409,
    );
    await sleepUntil(soon.getTime() + 100);
    expect((await call('POST', '/generate_api_key', { key: t.adminKey, json: { user_id: v.user_id } })).status).toBe(
      200,
    );
  });
});

describe('rotation', () => {
  it('gives a new key; the old one works for the grace period, then is refused; the list shows both', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const oldId = [...(await listed(u.user_id, u.key)).keys()][0];
    expect((await me(u, u.key)).status).toBe(200); // cached before the rotation
    const rot = await call('POST', '/rotate_api_key', { key: u.key, json: { api_key: u.key, grace_seconds: 3 } });
    expect(rot.status).toBe(200);
    const fresh = rot.body.api_key as string;
    expect(fresh).toMatch(/^pk_/);
    expect(rot.body.metadata).toMatchObject({
      permissions: ['basic'],
      user_id: u.user_id,
      organization_id: t.organization_id,
      rotated_from: oldId,
      expires_at: null,
    });
    expect(rot.body.previous).toMatchObject({ key_id: oldId, status: 'expiring' });
    const graceEnd = Date.parse(rot.body.previous.expires_at);

    expect((await me(u, u.key)).status).toBe(200);
    expect((await me(u, fresh)).status).toBe(200);
    const during = await listed(u.user_id, fresh);
    expect(during.get(oldId)).toMatchObject({
      status: 'expiring',
      active: true,
      rotated_to: rot.body.metadata.key_id,
      expires_at: rot.body.previous.expires_at,
    });
    expect(during.get(rot.body.metadata.key_id)).toMatchObject({
      status: 'active',
      active: true,
      rotated_from: oldId,
      rotated_to: null,
    });
    // A key rotates once.
    expect((await call('POST', '/rotate_api_key', { key: fresh, json: { key_id: oldId } })).status).toBe(409);

    await sleepUntil(graceEnd + 100);
    expect((await me(u, u.key)).status).toBe(401);
    expect((await verify(u.key)).body).toEqual({ valid: false, reason: 'expired' });
    expect((await me(u, fresh)).status).toBe(200);
    const after = await listed(u.user_id, fresh);
    expect(after.get(oldId)).toMatchObject({ status: 'expired', active: false, rotated_to: rot.body.metadata.key_id });
  });

  it('keeps permissions, limits and expiry; the key in its grace keeps its place; rotating again ends the earlier grace and hands its place on', async () => {
    const cap = keyCap();
    const t = await newTenant();
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const first = await call('POST', '/generate_api_key', {
      key: t.adminKey,
      json: { user_id: unique('rotating'), rate_limit_per_minute: 3, expires_at: at },
    });
    const user_id = first.body.metadata.user_id;
    for (let i = 2; i < cap; i += 1)
      expect((await call('POST', '/generate_api_key', { key: t.adminKey, json: { user_id } })).status).toBe(200);

    const r1 = await call('POST', '/rotate_api_key', {
      key: t.adminKey,
      json: { user_id, key_id: first.body.metadata.key_id, grace_seconds: 600 },
    });
    expect(r1.status).toBe(200);
    expect(r1.body.metadata.expires_at).toBe(at);
    expect((await call('POST', '/generate_api_key', { key: t.adminKey, json: { user_id } })).status).toBe(409); // the key in its grace keeps its place
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1)
      statuses.push((await call('GET', `/api/users/${user_id}`, { key: r1.body.api_key })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);

    const r2 = await call('POST', '/rotate_api_key', {
      key: t.adminKey,
      json: { user_id, api_key: r1.body.api_key, grace_seconds: 600 },
    });
    expect(r2.status).toBe(200);
    expect((await verify(first.body.api_key)).body).toEqual({ valid: false, reason: 'expired' });
    expect((await verify(r1.body.api_key)).body.reason).toBe('rate_limited'); // still in its grace, its minute used up
    expect((await verify(r2.body.api_key)).body.valid).toBe(true);
    const keys = await listed(user_id, t.adminKey);
    expect(keys.get(first.body.metadata.key_id).status).toBe('expired');
    expect(keys.get(r1.body.metadata.key_id).status).toBe('expiring');
    expect([...keys.values()].filter((k) => k.status === 'active')).toHaveLength(cap - 1);
    expect([...keys.values()].filter((k) => k.active)).toHaveLength(cap); // r1, in its grace, still holds its place; r2 took first's
    expect((await call('POST', '/generate_api_key', { key: t.adminKey, json: { user_id } })).status).toBe(409);
  });

  it('follows the rules of revocation: a basic key rotates only its own keys, nobody those of a user with more rights', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const other = await basicUser(t);
    const theirs = await call('POST', '/rotate_api_key', {
      key: u.key,
      json: { user_id: other.user_id, api_key: other.key },
    });
    expect(theirs.status).toBe(403);
    const byKey = await call('POST', '/rotate_api_key', { key: u.key, json: { api_key: other.key } }); // not among its own user's keys
    expect(byKey.status).toBe(404);
    const sys = await call('POST', '/generate_api_key', {
      key: adminKey(),
      json: { user_id: unique('tenant-root'), organization_id: t.organization_id, permissions: ['system_admin'] },
    });
    const up = await call('POST', '/rotate_api_key', {
      key: t.adminKey,
      json: { user_id: sys.body.metadata.user_id, key_id: sys.body.metadata.key_id },
    });
    expect(up.status).toBe(403);
    expect((await verify(sys.body.api_key)).body.valid).toBe(true);
    expect((await verify(other.key)).body.valid).toBe(true);
    expect((await call('POST', '/rotate_api_key', { key: u.key, json: { grace_seconds: 5 } })).status).toBe(422);
  });
});

describe('verify_api_key', () => {
  it('says why a key is refused, checks a permission, and reports a spent budget without spending it', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    expect((await verify(`pk_${'x'.repeat(43)}`)).body).toEqual({ valid: false, reason: 'not_found' });
    expect((await verify('garbage')).body).toEqual({ valid: false, reason: 'not_found' });

    const gone = await basicUser(t);
    await call('POST', '/revoke_api_key', { key: t.adminKey, json: { user_id: gone.user_id, api_key: gone.key } });
    expect((await verify(gone.key)).body).toEqual({ valid: false, reason: 'revoked' });

    expect((await verify(u.key, 'admin')).body).toEqual({ valid: false, reason: 'forbidden' });
    expect((await verify(u.key, 'basic')).body).toMatchObject({
      valid: true,
      user_id: u.user_id,
      permissions: ['basic'],
    });
    expect((await verify(t.adminKey, 'basic')).body.valid).toBe(true);
    expect((await verify(t.adminKey, 'system_admin')).body).toEqual({ valid: false, reason: 'forbidden' });

    const limited = await call('POST', '/generate_api_key', {
      key: t.adminKey,
      json: { user_id: u.user_id, rate_limit_per_minute: 2 },
    });
    const key = limited.body.api_key as string;
    for (let i = 0; i < 3; i += 1) expect((await verify(key)).body.valid).toBe(true); // verifying spends nothing
    expect((await me(u, key)).status).toBe(200);
    expect((await me(u, key)).status).toBe(200);
    expect((await verify(key)).body).toEqual({ valid: false, reason: 'rate_limited' });
    expect((await me(u, key)).status).toBe(429);
  });
});

describe("a user's shared rate limit", () => {
  it("binds all of the user's keys together; only an admin sets it", async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const second = (await call('POST', '/generate_api_key', { key: u.key, json: { user_id: u.user_id } })).body
      .api_key as string;
    const self = await call('PATCH', `/api/users/${u.user_id}`, {
      key: u.key,
      json: { user_rate_limit_per_minute: 1000 },
    });
    expect(self.status).toBe(403);
    const set = await call('PATCH', `/api/users/${u.user_id}`, {
      key: t.adminKey,
      json: { user_rate_limit_per_minute: 3 },
    });
    expect(set.status).toBe(200);
    expect(set.body.user.user_rate_limit_per_minute).toBe(3);

    expect((await me(u, u.key)).status).toBe(200);
    expect((await me(u, u.key)).status).toBe(200);
    expect((await me(u, second)).status).toBe(200);
    const over = await me(u, second);
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await me(u, u.key)).status).toBe(429);
    expect((await verify(second)).body).toEqual({ valid: false, reason: 'rate_limited' });
    // A key minted now shares the same spent budget.
    const third = await call('POST', '/generate_api_key', { key: t.adminKey, json: { user_id: u.user_id } });
    expect((await me(u, third.body.api_key)).status).toBe(429);
    // Other users are not affected.
    const v = await basicUser(t);
    expect((await me(v, v.key)).status).toBe(200);
  });

  it('is not set by an admin on a user holding more rights, and null removes it', async () => {
    const t = await newTenant();
    const sys = await call('POST', '/generate_api_key', {
      key: adminKey(),
      json: { user_id: unique('tenant-root'), organization_id: t.organization_id, permissions: ['system_admin'] },
    });
    const refused = await call('PATCH', `/api/users/${sys.body.metadata.user_id}`, {
      key: t.adminKey,
      json: { user_rate_limit_per_minute: 1 },
    });
    expect(refused.status).toBe(403);
    const u = await basicUser(t);
    await call('PATCH', `/api/users/${u.user_id}`, { key: t.adminKey, json: { user_rate_limit_per_minute: 1 } });
    expect((await me(u, u.key)).status).toBe(200);
    expect((await me(u, u.key)).status).toBe(429);
    const cleared = await call('PATCH', `/api/users/${u.user_id}`, {
      key: t.adminKey,
      json: { user_rate_limit_per_minute: null },
    });
    expect(cleared.body.user.user_rate_limit_per_minute).toBeNull();
    expect((await me(u, u.key)).status).toBe(200);
  });
});
