import { describe, expect, it } from 'vitest';
import { basicUser, call, newTenant, unique } from './helpers/api';

async function allEntries(key: string, user: string) {
  const entries: any[] = [];
  for (let page = 1; ; page += 1) {
    const res = await call('GET', `/loyalty/points/${user}/history?limit=100&page=${page}`, { key });
    expect(res.status).toBe(200);
    entries.push(...res.body.entries);
    if (!res.body.has_more) return { entries, body: res.body };
  }
}

describe('loyalty points', () => {
  it('answers 404 "User points not found" before the first entry, for unknown and known users', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const mine = await call('GET', `/loyalty/points/${u.user_id}`, { key: u.key });
    expect(mine.status).toBe(404);
    expect(mine.body).toEqual({ detail: 'User points not found' });
    const unknown = await call('GET', `/loyalty/points/${unique('nobody')}`, { key: t.adminKey });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ detail: 'User points not found' });
  });

  it('awards points per action from the default rules and keeps the balance', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const rules = await call('GET', '/loyalty/rules', { key: u.key });
    expect(rules.body.rules).toMatchObject({ is_default: true, organization_id: t.organization_id });
    const perPurchase = rules.body.rules.actions.purchase;
    const award = await call('POST', `/loyalty/award-points/${u.idp_id}`, { key: u.key, json: { action_type: 'purchase' } });
    expect(award.status).toBe(200);
    expect(award.body).toMatchObject({ success: true, points_awarded: perPurchase, balance: perPurchase, duplicate: false, user_id: u.user_id, idp_id: u.idp_id });
    await call('POST', `/loyalty/award-points/${u.idp_id}`, { key: u.key, json: { action_type: 'daily_login', organization_id: t.organization_id } });
    const balance = await call('GET', `/loyalty/points/${u.user_id}?organization_id=${t.organization_id}`, { key: u.key });
    expect(balance.status).toBe(200);
    expect(balance.body).toMatchObject({ points: perPurchase + rules.body.rules.actions.daily_login, user_id: u.user_id, organization_id: t.organization_id });
    expect(new Date(balance.body.last_updated).toISOString()).toBe(balance.body.last_updated);
    const history = await call('GET', `/loyalty/points/${u.idp_id}/history`, { key: u.key });
    expect(history.body.entries.map((e: any) => e.description)).toEqual(['daily_login', 'purchase']);
    expect(history.body.entries[0]).toMatchObject({ reason: 'action', seq: 2, balance_after: balance.body.points });
  });

  it('refuses an unknown action with 422 naming the known ones, changing nothing', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const res = await call('POST', `/loyalty/award-points/${u.idp_id}`, { key: u.key, json: { action_type: 'free_money' } });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(/^action_type: unknown action "free_money"; known actions: .*purchase/);
    expect((await call('GET', `/loyalty/points/${u.user_id}`, { key: u.key })).status).toBe(404);
    const bad = await call('POST', `/loyalty/award-points/${u.idp_id}`, { key: u.key, json: { action_type: 42 } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toMatch(/^action_type/);
  });

  it('applies an operation once, whether the key comes in the body or the Idempotency-Key header', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const body = { action_type: 'review', operation_id: 'review-123' };
    const first = await call('POST', `/loyalty/award-points/${u.idp_id}`, { key: u.key, json: body });
    const again = await call('POST', `/loyalty/award-points/${u.idp_id}`, { key: u.key, json: body });
    expect(again.body).toMatchObject({ duplicate: true, points_awarded: first.body.points_awarded, entry_id: first.body.entry_id, balance: first.body.balance });
    const viaHeader = () => call('POST', `/loyalty/award-points/${u.idp_id}`, { key: u.key, json: { action_type: 'review' }, headers: { 'idempotency-key': 'hdr-1' } });
    const h1 = await viaHeader();
    const h2 = await viaHeader();
    expect(h1.body.duplicate).toBe(false);
    expect(h2.body).toMatchObject({ duplicate: true, entry_id: h1.body.entry_id });
    const { entries } = await allEntries(u.key, u.user_id);
    expect(entries).toHaveLength(2);
  });

  it('lands 50 concurrent awards for one user exactly', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const results = await Promise.all(
      Array.from({ length: 50 }, () => call('POST', `/loyalty/award-points/${u.idp_id}`, { key: t.adminKey, json: { action_type: 'purchase' } })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(50).fill(200));
    const per = results[0].body.points_awarded;
    const balance = await call('GET', `/loyalty/points/${u.user_id}`, { key: u.key });
    expect(balance.body.points).toBe(50 * per);
    const { entries } = await allEntries(u.key, u.user_id);
    expect(entries).toHaveLength(50);
    // The ledger invariant: the balance is the sum of the entries, seq numbers are dense.
    expect(entries.reduce((s, e) => s + e.amount, 0)).toBe(balance.body.points);
    expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: 50 }, (_, i) => 50 - i));
    expect(new Set(results.map((r) => r.body.balance)).size).toBe(50);
  });

  it('pages the history newest first', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    for (let i = 0; i < 5; i += 1) await call('POST', `/loyalty/award-points/${u.idp_id}`, { key: u.key, json: { action_type: 'social_share' } });
    const p1 = await call('GET', `/loyalty/points/${u.user_id}/history?limit=2`, { key: u.key });
    const p3 = await call('GET', `/loyalty/points/${u.user_id}/history?limit=2&page=3`, { key: u.key });
    expect(p1.body).toMatchObject({ page: 1, limit: 2, total: 5, has_more: true });
    expect(p1.body.entries.map((e: any) => e.seq)).toEqual([5, 4]);
    expect(p3.body.entries.map((e: any) => e.seq)).toEqual([1]);
    expect(p3.body.has_more).toBe(false);
    const beyond = await call('GET', `/loyalty/points/${u.user_id}/history?limit=2&page=9`, { key: u.key });
    expect(beyond.body.entries).toEqual([]);
    expect((await call('GET', `/loyalty/points/${u.user_id}/history?limit=500`, { key: u.key })).status).toBe(422);
  });
});

describe('loyalty rules', () => {
  it('lets an admin set them, a basic key only read them, and awards follow them', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const denied = await call('PUT', '/loyalty/rules', { key: u.key, json: { actions: { purchase: 1 } } });
    expect(denied.status).toBe(403);
    const set = await call('PUT', '/loyalty/rules', { key: t.adminKey, json: { actions: { purchase: 7, 'tree_planted': 30 }, referral_points: 200 } });
    expect(set.status).toBe(200);
    expect(set.body.rules).toMatchObject({ is_default: false, actions: { purchase: 7, tree_planted: 30 }, referral_points: 200, referred_points: 50 });
    const award = await call('POST', `/loyalty/award-points/${u.idp_id}`, { key: u.key, json: { action_type: 'tree_planted' } });
    expect(award.body.points_awarded).toBe(30);
    const gone = await call('POST', `/loyalty/award-points/${u.idp_id}`, { key: u.key, json: { action_type: 'daily_login' } });
    expect(gone.status).toBe(422);
    for (const bad of [{ actions: { purchase: -5 } }, { actions: { 'Bad.Name': 5 } }, { actions: {} }, { referral_points: 0 }]) {
      const res = await call('PUT', '/loyalty/rules', { key: t.adminKey, json: bad });
      expect(res.status, JSON.stringify(bad)).toBe(422);
    }
    expect((await call('GET', '/loyalty/rules', { key: u.key })).body.rules.actions).toEqual({ purchase: 7, tree_planted: 30 });
  });

  it("refuses another organization's key everywhere", async () => {
    const a = await newTenant();
    const b = await newTenant();
    const ub = await basicUser(b);
    await call('POST', `/loyalty/award-points/${ub.idp_id}`, { key: ub.key, json: { action_type: 'purchase' } });
    const q = `organization_id=${b.organization_id}`;
    for (const [method, path, json] of [
      ['GET', `/loyalty/points/${ub.user_id}?${q}`, undefined],
      ['GET', `/loyalty/points/${ub.user_id}/history?${q}`, undefined],
      ['POST', `/loyalty/award-points/${ub.idp_id}`, { action_type: 'purchase', organization_id: b.organization_id }],
      ['GET', `/loyalty/rules?${q}`, undefined],
      ['PUT', '/loyalty/rules', { organization_id: b.organization_id, referral_points: 1 }],
    ] as const) {
      const res = await call(method, path, { key: a.adminKey, json });
      expect(res.status, `${method} ${path}`).toBe(403);
    }
    // Without naming the organization, the same ids simply do not exist in the caller's.
    expect((await call('GET', `/loyalty/points/${ub.user_id}`, { key: a.adminKey })).status).toBe(404);
  });
});
