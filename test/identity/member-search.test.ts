/**
 * GET /api/users: the organization's members for an operator, paged; `q` finds a user by its
 * platform id, or by the start of its idp_id or (case-insensitively) of its email, each from an
 * index: the queries are recorded and explained, so a scan of the users fails here.
 */
import { randomBytes } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { searchMembers } from '../../activities/identity/users.ts';
import { adminKey, basicUser, call, newTenant, type Tenant, until } from '../helpers/api.ts';
import { queriesOf, scans } from '../helpers/queries.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();

type Json = Record<string, any>;
const tag = () => randomBytes(4).toString('hex');

async function member(t: Tenant, idp_id: string, email?: string): Promise<Json> {
  const res = await call('POST', '/api/users', { key: t.adminKey, json: { idp_id, ...(email ? { email } : {}) } });
  expect(res.status).toBe(201);
  return res.body.user;
}

const search = (key: string, query: string) => call('GET', `/api/users?${query}`, { key });
const idps = (res: { body: Json }) => (res.body.users as Json[]).map((u) => u.idp_id);

describe('GET /api/users', () => {
  it('lists every member newest first, paged, with the user object of GET /api/users/{user_ref}', async () => {
    const t = await newTenant();
    const a = await member(t, `a-${tag()}`, 'a@example.com');
    await new Promise((r) => setTimeout(r, 5));
    const b = await member(t, `b-${tag()}`);
    await new Promise((r) => setTimeout(r, 5));
    const c = await member(t, `c-${tag()}`);
    const all = await search(t.adminKey, '');
    expect(all.status).toBe(200);
    // The admin's own user (made with the tenant's key) is a member too, the oldest.
    expect(all.body).toMatchObject({ success: true, page: 1, limit: 20, total: 4, has_more: false });
    expect(idps(all)).toEqual([c.idp_id, b.idp_id, a.idp_id, t.admin.idp_id]);
    const one = await call('GET', `/api/users/${a.user_id}`, { key: t.adminKey });
    expect(all.body.users[2]).toEqual(one.body.user);

    const p1 = await search(t.adminKey, 'limit=3');
    expect(p1.body).toMatchObject({ page: 1, limit: 3, total: 4, has_more: true });
    expect(idps(p1)).toEqual([c.idp_id, b.idp_id, a.idp_id]);
    const p2 = await search(t.adminKey, 'limit=3&page=2');
    expect(p2.body).toMatchObject({ page: 2, limit: 3, total: 4, has_more: false });
    expect(idps(p2)).toEqual([t.admin.idp_id]);
    const past = await search(t.adminKey, 'limit=3&page=3');
    expect(past.body).toMatchObject({ users: [], total: 4, has_more: false });
  });

  it('finds a user by platform id, by idp_id prefix (case-sensitive) and by email prefix (case-insensitive)', async () => {
    const t = await newTenant();
    const x = tag();
    const alice = await member(t, `sso|${x}-alice`, `Alice.${x}@Example.com`);
    const alan = await member(t, `sso|${x}-alan`, `alan.${x}@example.com`);
    const bob = await member(t, `sso|${x}-bob`);

    const byId = await search(t.adminKey, `q=${alice.user_id}`);
    expect(byId.body).toMatchObject({ total: 1, has_more: false });
    expect(byId.body.users).toEqual([alice]);
    expect((await search(t.adminKey, `q=usr_${x}`)).body).toMatchObject({ users: [], total: 0 });

    // A prefix of the idp_id, in idp_id order; the id as the provider wrote it.
    const al = await search(t.adminKey, `q=${encodeURIComponent(`sso|${x}-al`)}`);
    expect(idps(al)).toEqual([alan.idp_id, alice.idp_id]);
    expect(al.body.total).toBe(2);
    expect(idps(await search(t.adminKey, `q=${encodeURIComponent(`sso|${x}-`)}`))).toEqual([
      alan.idp_id,
      alice.idp_id,
      bob.idp_id,
    ]);
    expect((await search(t.adminKey, `q=${encodeURIComponent(`SSO|${x}-al`)}`)).body.total).toBe(0);
    // The whole idp_id is a prefix of itself; a prefix is not a substring.
    expect(idps(await search(t.adminKey, `q=${encodeURIComponent(bob.idp_id)}`))).toEqual([bob.idp_id]);
    expect((await search(t.adminKey, `q=${x}-al`)).body.total).toBe(0);

    // A prefix of the email in any case; the email answered as it was given.
    for (const q of [`alice.${x}`, `ALICE.${x}@EXAMPLE`, `Alice.${x}@example.com`]) {
      const res = await search(t.adminKey, `q=${encodeURIComponent(q)}`);
      expect(res.body.users, q).toEqual([alice]);
    }
    expect(idps(await search(t.adminKey, `q=al`))).toEqual([alan.idp_id, alice.idp_id]);
    // A changed email is found by the new address only; a removed one by none.
    await call('PATCH', `/api/users/${alan.user_id}`, { key: t.adminKey, json: { email: `Zed.${x}@example.com` } });
    expect(idps(await search(t.adminKey, `q=zed.${x}`))).toEqual([alan.idp_id]);
    expect((await search(t.adminKey, `q=alan.${x}`)).body.total).toBe(0);
    await call('PATCH', `/api/users/${alan.user_id}`, { key: t.adminKey, json: { email: null } });
    expect((await search(t.adminKey, `q=zed.${x}`)).body.total).toBe(0);
  });

  it('lists a user matched by both its idp_id and its email once, and pages across the two', async () => {
    const t = await newTenant();
    const x = tag();
    // An identity provider that uses the address as the id: found by both, listed once.
    const carol = await member(t, `carol.${x}@example.com`, `carol.${x}@example.com`);
    const both = await search(t.adminKey, `q=carol.${x}`);
    expect(both.body).toMatchObject({ total: 1, users: [carol] });

    // Three by idp_id, then two by email only: pages of two cut across the parts in that order.
    const p = `p${x}-`;
    for (const n of [1, 2, 3]) await member(t, `${p}${n}`);
    await member(t, `e-${x}-2`, `${p}mail-2@example.com`);
    await member(t, `e-${x}-1`, `${p}mail-1@example.com`);
    const pages: string[][] = [];
    for (const page of [1, 2, 3]) {
      const res = await search(t.adminKey, `q=${p}&limit=2&page=${page}`);
      expect(res.body).toMatchObject({ page, limit: 2, total: 5, has_more: page < 3 });
      pages.push(idps(res));
    }
    expect(pages).toEqual([[`${p}1`, `${p}2`], [`${p}3`, `e-${x}-1`], [`e-${x}-2`]]);
  });

  it("never lists another organization's users; a system admin names the organization", async () => {
    const t = await newTenant();
    const other = await newTenant();
    const x = tag();
    const mine = await member(t, `shared-${x}-mine`, `shared-${x}@example.com`);
    const theirs = await member(other, `shared-${x}-theirs`, `shared-${x}@example.com`);
    expect(idps(await search(t.adminKey, `q=shared-${x}`))).toEqual([mine.idp_id]);
    expect((await search(t.adminKey, `q=${theirs.user_id}`)).body.total).toBe(0);
    expect(idps(await search(t.adminKey, ''))).not.toContain(theirs.idp_id);
    const foreign = await search(t.adminKey, `organization_id=${other.organization_id}`);
    expect(foreign.status).toBe(403);
    expect(foreign.body).toEqual({ detail: `API key does not belong to organization ${other.organization_id}` });
    const sys = await search(adminKey(), `organization_id=${other.organization_id}&q=shared-${x}`);
    expect(sys.status).toBe(200);
    expect(idps(sys)).toEqual([theirs.idp_id]);
  });

  it('refuses a basic key (403) and bad paging or search text (422), in the component error shape', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const basic = await search(u.key, `q=${u.user_id}`);
    expect(basic.status).toBe(403);
    expect(basic.body).toEqual({ detail: 'This operation requires the admin permission' });
    for (const q of ['limit=1000', 'limit=0', 'page=0', 'page=10001', 'limit=x', `q=${'x'.repeat(201)}`]) {
      const res = await search(t.adminKey, q);
      expect(res.status, q).toBe(422);
      expect(res.body.detail, q).toMatch(/^(limit|page|q): /);
    }
    expect((await search(t.adminKey, 'limit=100')).status).toBe(200);
  });

  it('leaves out an erased user from the moment its erasure begins', async () => {
    const t = await newTenant();
    const x = tag();
    const gone = await member(t, `gone-${x}`, `gone-${x}@example.com`);
    const stays = await member(t, `gone-${x}-not`);
    const erase = await call('DELETE', `/api/users/${gone.user_id}`, { key: t.adminKey, json: { reason: 'asked' } });
    expect(erase.status).toBe(202);
    await until(
      'the erased user to leave the list',
      () => search(t.adminKey, `q=gone-${x}`),
      (r) => r.status === 200 && r.body.total === 1,
      60_000,
    );
    expect(idps(await search(t.adminKey, `q=gone-${x}`))).toEqual([stays.idp_id]);
    expect((await search(t.adminKey, `q=${gone.user_id}`)).body.total).toBe(0);
    expect(idps(await search(t.adminKey, ''))).not.toContain(gone.idp_id);
    // Its tombstone (del_…) is nobody's idp_id in the list either.
    expect((await search(t.adminKey, 'q=del_')).body.total).toBe(0);
  });

  it('reads every page from an index, never the whole collection', async () => {
    const t = await newTenant();
    const x = tag();
    await member(t, `idx-${x}`, `Idx-${x}@example.com`);
    await searchMembers(t.organization_id, `IDX-${x}@`, 1, 1); // the database's one-time lowering of older emails: done
    for (const q of [undefined, `usr_${x}`, `idx-${x}`, `IDX-${x}@`]) {
      const qs = await queriesOf(() => searchMembers(t.organization_id, q, 2, 1));
      expect(qs.filter((q1) => q1.collection === 'users').length, String(q)).toBeGreaterThan(0);
      expect(await scans(qs.filter((q1) => q1.collection === 'users')), String(q)).toEqual([]);
    }
  });
});
