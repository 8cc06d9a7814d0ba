/**
 * GET /api/keys: the organization's keys for an operator, newest first, masked exactly as a
 * user's own list shows them, filtered by user and stored status, paged; never another
 * organization's, never a key of a user holding more rights than the caller.
 */
import { describe, expect, it } from 'vitest';

import { listOrganizationKeys } from '../../activities/identity/key-management.ts';
import { markUserErasing } from '../../activities/identity/store.ts';
import { adminKey, basicUser, call, newTenant } from '../helpers/api.ts';
import { queriesOf, scans } from '../helpers/queries.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();

type Json = Record<string, any>;

const keys = (key: string, query = '') => call('GET', `/api/keys${query ? `?${query}` : ''}`, { key });
const ids = (res: { body: Json }) => (res.body.api_keys as Json[]).map((k) => k.key_id);
const pause = () => new Promise((r) => setTimeout(r, 5));
/** Without what merely reading changes. */
const still = ({ last_used: _l, ...k }: Json) => k;

async function world() {
  const t = await newTenant();
  await pause();
  const ana = await basicUser(t);
  await pause();
  const bo = await basicUser(t);
  await pause();
  const second = await call('POST', '/generate_api_key', { key: t.adminKey, json: { user_id: bo.user_id } });
  expect(second.status).toBe(200);
  const revoked = await call('POST', '/revoke_api_key', {
    key: t.adminKey,
    json: { user_id: bo.user_id, api_key: bo.key },
  });
  expect(revoked.status).toBe(200);
  const own = async (user_id: string) =>
    (await call('GET', `/list_api_keys/${user_id}`, { key: t.adminKey })).body.api_keys as Json[];
  return {
    t,
    ana,
    bo,
    // newest first: bo's second key, bo's first (revoked), ana's, the admin's
    order: [
      ...(await own(bo.user_id)).map((k) => k.key_id),
      ...(await own(ana.user_id)).map((k) => k.key_id),
      ...(await own(t.admin.user_id)).map((k) => k.key_id),
    ],
    own,
  };
}

describe('GET /api/keys', () => {
  it("lists the organization's keys newest first, masked exactly as a user's list, each naming its user", async () => {
    const { t, ana, bo, order, own } = await world();
    const res = await keys(t.adminKey);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, page: 1, limit: 20, total: 4, has_more: false });
    expect(ids(res)).toEqual(order);
    const byId = new Map((res.body.api_keys as Json[]).map((k) => [k.key_id, k]));
    for (const [u, list] of [
      [bo, await own(bo.user_id)],
      [ana, await own(ana.user_id)],
    ] as const) {
      for (const k of list) {
        const { user_id, idp_id, ...rest } = byId.get(k.key_id)!;
        expect({ user_id, idp_id }).toEqual({ user_id: u.user_id, idp_id: u.idp_id });
        expect(still(rest)).toEqual(still(k));
      }
    }
    // Never a secret or a hash: the key is its first characters, masked.
    const text = JSON.stringify(res.body);
    for (const secret of [ana.key, bo.key, t.adminKey]) expect(text).not.toContain(secret.slice(3, 12));
    for (const k of res.body.api_keys) {
      expect(k.key).toMatch(/^pk_[A-Za-z0-9_-]{4}…$/);
      expect(Object.keys(k)).not.toContain('hash');
    }
  });

  it("lists a user being erased as the erasure leaves them: under the tombstone, the admin's name gone", async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const listed = await call('GET', '/list_api_keys/' + encodeURIComponent(u.idp_id), { key: t.adminKey });
    const key_id = listed.body.api_keys[0].key_id as string;
    expect((await call('PATCH', `/api/keys/${key_id}`, { key: t.adminKey, json: { name: 'Ana phone' } })).status).toBe(
      200,
    );
    // The erasure's first step, alone: the user is marked, its keys not yet tombstoned.
    await markUserErasing(t.organization_id, u.user_id, 'del_test_tombstone');
    const res = await keys(t.adminKey);
    const row = (res.body.api_keys as Json[]).find((k) => k.key_id === key_id)!;
    expect(row).toMatchObject({ user_id: 'del_test_tombstone', idp_id: 'del_test_tombstone', name: null });
    expect(JSON.stringify(res.body)).not.toContain(u.idp_id);
  });

  it('filters by user (user_id or idp_id) and by stored status, and pages', async () => {
    const { t, ana, bo, order } = await world();
    expect(ids(await keys(t.adminKey, `user_ref=${bo.user_id}`))).toEqual(order.slice(0, 2));
    expect(ids(await keys(t.adminKey, `user_ref=${encodeURIComponent(ana.idp_id)}`))).toEqual([order[2]]);
    const revoked = await keys(t.adminKey, 'status=revoked');
    expect(ids(revoked)).toEqual([order[1]]);
    expect(revoked.body.api_keys[0]).toMatchObject({ status: 'revoked', active: false, user_id: bo.user_id });
    expect(ids(await keys(t.adminKey, 'status=active'))).toEqual([order[0], order[2], order[3]]);
    const both = await keys(t.adminKey, `status=active&user_ref=${bo.idp_id}`);
    expect(both.body).toMatchObject({ total: 1, has_more: false });
    expect(ids(both)).toEqual([order[0]]);

    const p1 = await keys(t.adminKey, 'limit=3');
    expect(p1.body).toMatchObject({ page: 1, limit: 3, total: 4, has_more: true });
    const p2 = await keys(t.adminKey, 'limit=3&page=2');
    expect(p2.body).toMatchObject({ page: 2, limit: 3, total: 4, has_more: false });
    expect([...ids(p1), ...ids(p2)]).toEqual(order);
    expect((await keys(t.adminKey, 'limit=3&page=3')).body).toMatchObject({ api_keys: [], total: 4 });
  });

  it("never lists another organization's keys; naming it is 403 but for a system admin", async () => {
    const { t, order } = await world();
    const other = await newTenant();
    const stranger = await basicUser(other);
    const mine = await keys(t.adminKey);
    expect(ids(mine)).toEqual(order);
    expect(mine.body.api_keys.every((k: Json) => k.user_id !== stranger.user_id)).toBe(true);
    const foreign = await keys(t.adminKey, `organization_id=${other.organization_id}`);
    expect(foreign.status).toBe(403);
    expect(foreign.body).toEqual({ detail: `API key does not belong to organization ${other.organization_id}` });
    // Another organization's user named in the caller's own: not found (and not created).
    expect((await keys(t.adminKey, `user_ref=${stranger.user_id}`)).status).toBe(404);
    const sys = await keys(adminKey(), `organization_id=${other.organization_id}`);
    expect(sys.status).toBe(200);
    expect(sys.body.api_keys.map((k: Json) => k.user_id)).toEqual([stranger.user_id, other.admin.user_id]);
  });

  it('leaves out the keys of a user holding more rights than the caller', async () => {
    const { t, order } = await world();
    const boss = await call('POST', '/generate_api_key', {
      key: adminKey(),
      json: { user_id: 'operator-boss', organization_id: t.organization_id, permissions: ['system_admin'] },
    });
    expect(boss.status).toBe(200);
    // A basic key of the same user is left out too: the user holds more rights.
    const bossBasic = await call('POST', '/generate_api_key', {
      key: adminKey(),
      json: { user_id: 'operator-boss', organization_id: t.organization_id, permissions: ['basic'] },
    });
    expect(bossBasic.status).toBe(200);
    const res = await keys(t.adminKey);
    expect(ids(res)).toEqual(order);
    expect(res.body.total).toBe(4);
    const named = await keys(t.adminKey, 'user_ref=operator-boss');
    expect(named.status).toBe(403);
    const sys = await keys(adminKey(), `organization_id=${t.organization_id}`);
    expect(ids(sys)).toEqual([bossBasic.body.metadata.key_id, boss.body.metadata.key_id, ...order]);
  });

  it('refuses a basic key (403) and bad input (422); an unknown user is 404 and is not created', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const basic = await keys(u.key, `user_ref=${u.user_id}`);
    expect(basic.status).toBe(403);
    expect(basic.body).toEqual({ detail: 'This operation requires the admin permission' });
    for (const q of ['limit=1000', 'limit=0', 'page=0', 'status=expired', 'user_ref=']) {
      const res = await keys(t.adminKey, q);
      expect(res.status, q).toBe(422);
      expect(res.body.detail, q).toMatch(/^(limit|page|status|user_ref): /);
    }
    expect((await keys(t.adminKey, 'user_ref=nobody-here')).status).toBe(404);
    expect((await call('GET', '/api/users/nobody-here', { key: t.adminKey })).status).toBe(404);
  });

  it('reads each page from an index', async () => {
    const { t, bo } = await world();
    const admin = {
      key_id: 'test',
      user_id: t.admin.user_id,
      idp_id: t.admin.idp_id,
      organization_id: t.organization_id,
      permissions: ['admin' as const],
      level: 1,
    };
    for (const filter of [{}, { status: 'revoked' as const }, { user_id: bo.user_id }]) {
      const qs = (await queriesOf(() => listOrganizationKeys(admin, t.organization_id, filter, 1, 2))).filter(
        (q) => q.collection === 'api_keys',
      );
      expect(qs.length).toBeGreaterThan(0);
      expect(await scans(qs), JSON.stringify(filter)).toEqual([]);
    }
  });
});
