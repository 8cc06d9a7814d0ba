import http from 'node:http';

import { describe, expect, inject, it } from 'vitest';

import { adminKey, basicUser, call, edgeUrl, newTenant, unique } from '../helpers/api.ts';

/** A request from another loopback address (127.0.0.2): a second client as far as the edge can tell. */
function callFrom(
  localAddress: string,
  method: string,
  path: string,
  key: string,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }> {
  const url = new URL(path, edgeUrl());
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        localAddress,
        headers: { authorization: `Bearer ${key}` },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null'),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const env = () => inject('platformEnv') as Record<string, string | undefined>;
const keyCap = () => Number(env().MAX_KEYS_PER_USER ?? 10);

describe('authentication', () => {
  it('answers 401 without a key, with an unknown key and with a malformed header', async () => {
    for (const headers of [
      {},
      { authorization: 'Bearer pk_unknownunknownunknownunknown' },
      { 'x-api-key': 'nope' },
      { authorization: 'Basic abc' },
    ] as Record<string, string>[]) {
      const res = await call('POST', '/initialize_session', { json: { user_id: 'x' }, headers });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ detail: 'Not authenticated' });
    }
  });

  it('accepts the key as Bearer and as X-API-Key', async () => {
    const bearer = await call('GET', '/api/organizations/default', { key: adminKey() });
    const header = await call('GET', '/api/organizations/default', { headers: { 'x-api-key': adminKey() } });
    expect(bearer.status).toBe(200);
    expect(header.status).toBe(200);
    expect(header.body.organization).toMatchObject({ organization_id: 'default', tier: 'free' });
  });
});

describe('failed authentications', () => {
  it('answers 429 to an address past the failure budget, while other addresses and known keys go on', async () => {
    const budget = Number(env().AUTH_FAILURES_PER_MINUTE ?? 30);
    const t = await newTenant();
    const flood = '127.0.0.2';
    for (let i = 0; i < budget; i += 1) {
      const res = await callFrom(flood, 'GET', '/api/users/x', `pk_unknown${i}_${unique('guess')}`);
      expect(res.status, `attempt ${i + 1}`).toBe(401);
    }
    const limited = await callFrom(flood, 'GET', '/api/users/x', `pk_unknown_${unique('guess')}`);
    expect(limited.status).toBe(429);
    expect(limited.body.detail).toBe(`Too many failed authentications from this address: at most ${budget} per minute`);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    // Another client is not affected, with a valid key or an unknown one.
    expect((await call('GET', `/api/organizations/${t.organization_id}`, { key: t.adminKey })).status).toBe(200);
    expect(
      (await call('GET', `/api/organizations/${t.organization_id}`, { key: `pk_unknown_${unique('other')}` })).status,
    ).toBe(401);
    // A valid key always works from the limited address, also one the edge has never read
    // (test/identity/auth-limiter.test.ts checks that on an edge of its own); a wrong one stays 429.
    expect((await callFrom(flood, 'GET', `/api/organizations/${t.organization_id}`, t.adminKey)).status).toBe(200);
    const fresh = await basicUser(t);
    expect((await callFrom(flood, 'GET', `/api/users/${fresh.user_id}`, fresh.key)).status).toBe(200);
    expect((await callFrom(flood, 'GET', `/api/users/${fresh.user_id}`, `pk_unknown_${unique('late')}`)).status).toBe(
      429,
    );
  });
});

describe('key management', () => {
  it('never lets a key act on the keys of a user holding more rights: the bootstrap key survives', async () => {
    const boot = await call('POST', '/verify_api_key', { json: { api_key: adminKey() } });
    const root = boot.body.user_id as string;
    const admin = await call('POST', '/generate_api_key', {
      key: adminKey(),
      json: { user_id: unique('default-admin'), organization_id: 'default', permissions: ['admin'] },
    });
    expect(admin.status).toBe(200);
    const key = admin.body.api_key as string;
    const bootId = (await call('GET', `/list_api_keys/${root}`, { key: adminKey() })).body.api_keys.find(
      (k: any) => k.active && k.permissions.includes('system_admin'),
    ).key_id;
    expect((await call('GET', `/list_api_keys/${root}`, { key })).status).toBe(403);
    expect((await call('POST', '/generate_api_key', { key, json: { user_id: root } })).status).toBe(403);
    for (const api_key of [bootId, adminKey()]) {
      const revoke = await call('POST', '/revoke_api_key', { key, json: { user_id: root, api_key } });
      expect(revoke.status).toBe(403);
      expect(revoke.body.detail).toMatch(/more rights/);
    }
    expect((await call('GET', '/api/organizations/default', { key: adminKey() })).status).toBe(200);
    expect((await call('POST', '/verify_api_key', { json: { api_key: adminKey() } })).body.valid).toBe(true);

    // The same inside a tenant: a system_admin user there is out of its admins' reach.
    const t = await newTenant();
    const sys = await call('POST', '/generate_api_key', {
      key: adminKey(),
      json: { user_id: unique('tenant-root'), organization_id: t.organization_id, permissions: ['system_admin'] },
    });
    expect(sys.status).toBe(200);
    const refused = await call('POST', '/revoke_api_key', {
      key: t.adminKey,
      json: { user_id: sys.body.metadata.user_id, api_key: sys.body.metadata.key_id },
    });
    expect(refused.status).toBe(403);
    expect((await call('POST', '/verify_api_key', { json: { api_key: sys.body.api_key } })).body.valid).toBe(true);
    // Equal rights are fine: an admin manages another admin of its organization.
    const peer = await call('POST', '/generate_api_key', {
      key: t.adminKey,
      json: { user_id: unique('peer-admin'), permissions: ['admin'] },
    });
    const revoked = await call('POST', '/revoke_api_key', {
      key: t.adminKey,
      json: { user_id: peer.body.metadata.user_id, api_key: peer.body.api_key },
    });
    expect(revoked.body).toMatchObject({ success: true, message: 'API key revoked' });
  });

  it('caps the active keys of a user; revoking one frees its place', async () => {
    const cap = keyCap();
    const t = await newTenant();
    const u = await basicUser(t); // its first key
    for (let i = 1; i < cap; i += 1)
      expect((await call('POST', '/generate_api_key', { key: u.key, json: { user_id: u.user_id } })).status).toBe(200);
    const over = await call('POST', '/generate_api_key', { key: u.key, json: { user_id: u.user_id } });
    expect(over.status).toBe(409);
    expect(over.body.detail).toBe(
      `A user may hold at most ${cap} active API keys (MAX_KEYS_PER_USER); revoke one before creating another`,
    );
    expect((await call('POST', '/generate_api_key', { key: t.adminKey, json: { user_id: u.user_id } })).status).toBe(
      409,
    ); // whoever asks
    const keys = (await call('GET', `/list_api_keys/${u.user_id}`, { key: u.key })).body.api_keys;
    expect(keys.filter((k: any) => k.active)).toHaveLength(cap);
    await call('POST', '/revoke_api_key', { key: u.key, json: { user_id: u.user_id, api_key: keys[0].key_id } });
    expect((await call('POST', '/generate_api_key', { key: u.key, json: { user_id: u.user_id } })).status).toBe(200);
    expect((await call('POST', '/generate_api_key', { key: u.key, json: { user_id: u.user_id } })).status).toBe(409);
  });

  it('never exceeds the cap under 20 concurrent creations', async () => {
    const cap = keyCap();
    const t = await newTenant();
    const u = await basicUser(t);
    const results = await Promise.all(
      Array.from({ length: 20 }, () => call('POST', '/generate_api_key', { key: u.key, json: { user_id: u.user_id } })),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(cap - 1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(20 - (cap - 1));
    const keys = (await call('GET', `/list_api_keys/${u.user_id}`, { key: u.key })).body.api_keys;
    expect(keys.filter((k: any) => k.active)).toHaveLength(cap);
  });

  it("gives a new key at most its creator's rate limit", async () => {
    const t = await newTenant();
    const limited = await call('POST', '/generate_api_key', {
      key: t.adminKey,
      json: { user_id: unique('limited'), rate_limit_per_minute: 2 },
    });
    const user_id = limited.body.metadata.user_id;
    // The limited key mints two keys (its two requests this minute): one without a limit, one asking for more.
    const unlimited = await call('POST', '/generate_api_key', { key: limited.body.api_key, json: { user_id } });
    const more = await call('POST', '/generate_api_key', {
      key: limited.body.api_key,
      json: { user_id, rate_limit_per_minute: 100 },
    });
    for (const minted of [unlimited, more]) {
      expect(minted.status).toBe(200);
      const statuses: number[] = [];
      for (let i = 0; i < 3; i += 1)
        statuses.push((await call('GET', `/list_api_keys/${user_id}`, { key: minted.body.api_key })).status);
      expect(statuses).toEqual([200, 200, 429]);
    }
  });
});

describe('authorization', () => {
  it('never lets a key grant more than it holds', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const up = await call('POST', '/generate_api_key', {
      key: u.key,
      json: { user_id: u.user_id, permissions: ['admin'] },
    });
    expect(up.status).toBe(403);
    expect(up.body.detail).toMatch(/admin/);
    const sys = await call('POST', '/generate_api_key', {
      key: t.adminKey,
      json: { user_id: u.user_id, permissions: ['basic', 'system_admin'] },
    });
    expect(sys.status).toBe(403);
    expect(sys.body.detail).toMatch(/system_admin/);
    const ok = await call('POST', '/generate_api_key', {
      key: t.adminKey,
      json: { user_id: u.user_id, permissions: ['admin'] },
    });
    expect(ok.status).toBe(200);
  });

  it('keeps a basic key to its own user', async () => {
    const t = await newTenant();
    const a = await basicUser(t);
    const b = await basicUser(t);
    for (const [method, path, json] of [
      ['GET', `/list_api_keys/${b.user_id}`, undefined],
      ['POST', '/generate_api_key', { user_id: b.idp_id }],
      ['POST', '/initialize_session', { user_id: b.user_id }],
      ['POST', '/initialize_session', { user_id: unique('someone-new') }],
      ['GET', `/api/users/${b.idp_id}`, undefined],
    ] as const) {
      const res = await call(method, path, { key: a.key, json });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.detail).toMatch(/own user/);
    }
    const revoke = await call('POST', '/revoke_api_key', { key: a.key, json: { user_id: b.user_id, api_key: b.key } });
    expect(revoke.status).toBe(403);
    expect((await call('POST', '/verify_api_key', { json: { api_key: b.key } })).body.valid).toBe(true);
  });

  it("leaves a user's address on record to admin keys: a basic key cannot point the platform's mail elsewhere", async () => {
    const t = await newTenant();
    const a = await basicUser(t);
    const mine = `${unique('ana')}@example.com`;
    expect((await call('PATCH', `/api/users/${a.user_id}`, { key: t.adminKey, json: { email: mine } })).status).toBe(
      200,
    );
    for (const [method, path, json] of [
      ['PATCH', `/api/users/${a.user_id}`, { email: `${unique('victim')}@example.net` }],
      ['PATCH', `/api/users/${a.user_id}`, { email: null }],
      ['POST', '/api/users', { idp_id: a.idp_id, email: `${unique('victim')}@example.net` }],
    ] as const) {
      const res = await call(method, path, { key: a.key, json });
      expect(res.status, `${method} ${path} ${JSON.stringify(json)}`).toBe(403);
      expect(res.body.detail).toMatch(/^email: /);
    }
    // The rest of the profile is the user's own.
    const named = await call('PATCH', `/api/users/${a.user_id}`, { key: a.key, json: { display_name: 'Ana' } });
    expect(named.status).toBe(200);
    expect(named.body.user).toMatchObject({ email: mine, display_name: 'Ana' });
  });

  it('lets an admin act for any user of its organization, creating unknown ones', async () => {
    const t = await newTenant();
    const idp = unique('new-user');
    const init = await call('POST', '/initialize_session', { key: t.adminKey, json: { user_id: idp } });
    expect(init.status).toBe(200);
    expect(init.body.idp_id).toBe(idp);
    const user = await call('GET', `/api/users/${init.body.user_id}`, { key: t.adminKey });
    expect(user.body.user).toMatchObject({
      user_id: init.body.user_id,
      idp_id: idp,
      organization_id: t.organization_id,
    });
    // The same reference resolves to the same user, by idp_id and by user_id.
    const again = await call('POST', '/initialize_session', { key: t.adminKey, json: { user_id: init.body.user_id } });
    expect(again.body.user_id).toBe(init.body.user_id);
  });

  it("answers 404 to an admin naming an unknown usr_ id (another organization's user), creating no one", async () => {
    const a = await newTenant();
    const b = await newTenant();
    const stranger = await basicUser(a);
    for (const [method, path, json] of [
      ['POST', '/initialize_session', { user_id: stranger.user_id }],
      ['POST', '/generate_api_key', { user_id: stranger.user_id }],
      ['GET', `/list_api_keys/${stranger.user_id}`, undefined],
    ] as const) {
      const res = await call(method, path, { key: b.adminKey, json });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.detail).toBe(`User not found: ${stranger.user_id}`);
    }
    expect((await call('GET', `/api/users/${stranger.user_id}`, { key: b.adminKey })).status).toBe(404); // no phantom in b
    const made = await call('POST', '/api/users', { key: b.adminKey, json: { idp_id: stranger.user_id } });
    expect(made.status).toBe(422);
    expect(made.body.detail).toMatch(/^idp_id: usr_… is reserved/);
    // A basic key is not told whether the user exists.
    const basic = await basicUser(b);
    const res = await call('POST', '/initialize_session', {
      key: basic.key,
      json: { user_id: `usr_${unique('nobody')}` },
    });
    expect(res.status).toBe(403);
    // In a's organization the user is still the only one with that id, untouched.
    expect((await call('GET', `/api/users/${stranger.user_id}`, { key: a.adminKey })).body.user).toMatchObject({
      idp_id: stranger.idp_id,
    });
  });

  it('refuses requests naming another organization, except for a system admin', async () => {
    const a = await newTenant();
    const b = await newTenant();
    const cross = await call('POST', '/initialize_session', {
      key: a.adminKey,
      json: { user_id: 'x', organization_id: b.organization_id },
    });
    expect(cross.status).toBe(403);
    expect(cross.body.detail).toContain(b.organization_id);
    const read = await call('GET', `/api/organizations/${b.organization_id}`, { key: a.adminKey });
    expect(read.status).toBe(403);
    const sys = await call('POST', '/initialize_session', {
      key: adminKey(),
      json: { user_id: 'x', organization_id: b.organization_id },
    });
    expect(sys.status).toBe(200);
    expect(sys.body.organization_id).toBe(b.organization_id);
  });

  it('keeps users apart between organizations with the same idp_id', async () => {
    const a = await newTenant();
    const b = await newTenant();
    const ua = await call('POST', '/api/users', { key: a.adminKey, json: { idp_id: 'same-idp' } });
    const ub = await call('POST', '/api/users', { key: b.adminKey, json: { idp_id: 'same-idp' } });
    expect(ua.body.user.user_id).not.toBe(ub.body.user.user_id);
    const cross = await call('GET', `/api/users/${ub.body.user.user_id}`, { key: a.adminKey });
    expect(cross.status).toBe(404);
  });

  it('reserves organization management for system admins', async () => {
    const t = await newTenant();
    const create = await call('POST', '/api/organizations', { key: t.adminKey, json: { name: 'x', tier: 'free' } });
    expect(create.status).toBe(403);
    expect(create.body.detail).toMatch(/system_admin/);
    const patch = await call('PATCH', `/api/organizations/${t.organization_id}`, {
      key: t.adminKey,
      json: { tier: 'enterprise' },
    });
    expect(patch.status).toBe(403);
    const u = await basicUser(t);
    const read = await call('GET', `/api/organizations/${t.organization_id}`, { key: u.key });
    expect(read.status).toBe(403);
    const own = await call('GET', `/api/organizations/${t.organization_id}`, { key: t.adminKey });
    expect(own.status).toBe(200);
  });
});

describe('organizations and users', () => {
  it('creates, reads and updates organizations; duplicates are 409', async () => {
    const id = unique('acme');
    const created = await call('POST', '/api/organizations', {
      key: adminKey(),
      json: { organization_id: id, name: 'Acme', tier: 'business' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      success: true,
      organization: { organization_id: id, name: 'Acme', tier: 'business' },
    });
    const dup = await call('POST', '/api/organizations', {
      key: adminKey(),
      json: { organization_id: id, name: 'Acme 2', tier: 'free' },
    });
    expect(dup.status).toBe(409);
    const patched = await call('PATCH', `/api/organizations/${id}`, { key: adminKey(), json: { tier: 'enterprise' } });
    expect(patched.body.organization).toMatchObject({ name: 'Acme', tier: 'enterprise' });
    const bad = await call('POST', '/api/organizations', { key: adminKey(), json: { name: 'x', tier: 'gold' } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toMatch(/^tier/);
    const missing = await call('GET', `/api/organizations/${unique('nope')}`, { key: adminKey() });
    expect(missing.status).toBe(404);
  });

  it('creates users idempotently on idp_id and updates their profile', async () => {
    const t = await newTenant();
    const idp = unique('ana');
    const first = await call('POST', '/api/users', {
      key: t.adminKey,
      json: { idp_id: idp, email: 'ana@example.com' },
    });
    expect(first.status).toBe(201);
    expect(first.body.user).toMatchObject({
      idp_id: idp,
      email: 'ana@example.com',
      organization_id: t.organization_id,
    });
    expect(first.body.user.user_id).toMatch(/^usr_/);
    const second = await call('POST', '/api/users', { key: t.adminKey, json: { idp_id: idp, display_name: 'Ana' } });
    expect(second.status).toBe(200);
    expect(second.body.user).toMatchObject({
      user_id: first.body.user.user_id,
      email: 'ana@example.com',
      display_name: 'Ana',
    });
    const patched = await call('PATCH', `/api/users/${idp}`, { key: t.adminKey, json: { email: null } });
    expect(patched.body.user.email).toBeNull();
    const badEmail = await call('POST', '/api/users', {
      key: t.adminKey,
      json: { idp_id: idp, email: 'not-an-email' },
    });
    expect(badEmail.status).toBe(422);
    expect(badEmail.body.detail).toMatch(/^email/);
  });

  it('lets a sysadmin create users in an organization that exists only', async () => {
    const res = await call('POST', '/api/users', {
      key: adminKey(),
      json: { idp_id: 'x', organization_id: unique('ghost') },
    });
    expect(res.status).toBe(404);
    expect(res.body.detail).toMatch(/Organization not found/);
  });
});

describe('request errors', () => {
  it('answers malformed JSON with 400 and invalid fields with 422 naming the field, changing nothing', async () => {
    const t = await newTenant();
    const bad = await call('POST', '/generate_api_key', {
      key: t.adminKey,
      body: '{"user_id": ',
      contentType: 'application/json',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/Malformed JSON/);
    const wrongType = await call('POST', '/generate_api_key', { key: t.adminKey, json: { user_id: 42 } });
    expect(wrongType.status).toBe(422);
    expect(wrongType.body.detail).toMatch(/^user_id: /);
    const badPerm = await call('POST', '/generate_api_key', {
      key: t.adminKey,
      json: { user_id: 'u', permissions: ['root'] },
    });
    expect(badPerm.status).toBe(422);
    expect(badPerm.body.detail).toMatch(/^permissions\.0/);
    const keys = await call('GET', `/list_api_keys/${t.admin.user_id}`, { key: t.adminKey });
    expect(keys.body.api_keys).toHaveLength(1);
  });

  it('answers unknown routes with 404 and wrong methods with 405, in the detail shape', async () => {
    const res = await call('GET', '/no/such/route', { key: adminKey() });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'Not found' });
    const method = await call('DELETE', '/initialize_session', { key: adminKey() });
    expect(method.status).toBe(405);
    expect(method.body.detail).toBeTypeOf('string');
  });

  it('rate limits per key with 429 and Retry-After', async () => {
    const t = await newTenant();
    const res = await call('POST', '/generate_api_key', {
      key: t.adminKey,
      json: { user_id: unique('limited'), rate_limit_per_minute: 3 },
    });
    const key = res.body.api_key;
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1)
      statuses.push((await call('GET', `/list_api_keys/${res.body.metadata.user_id}`, { key })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const limited = await call('GET', `/list_api_keys/${res.body.metadata.user_id}`, { key });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(limited.body.detail).toMatch(/Rate limit/);
    // Other keys are not affected.
    expect((await call('GET', `/list_api_keys/${t.admin.user_id}`, { key: t.adminKey })).status).toBe(200);
  });

  it('refuses a per-key rate limit above the platform limit', async () => {
    const t = await newTenant();
    const res = await call('POST', '/generate_api_key', {
      key: t.adminKey,
      json: { user_id: 'x', rate_limit_per_minute: 10_000 },
    });
    expect(res.status).toBe(403);
  });
});
