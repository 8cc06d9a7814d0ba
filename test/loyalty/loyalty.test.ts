import { describe, expect, it } from 'vitest';

import { api, basicUser, type Body, call, newTenant, unique } from '../helpers/api.ts';

type HistoryEntry = Body<'/loyalty/points/{internal_user_id}/history', 'get'>['entries'][number];

async function allEntries(key: string, user: string) {
  const entries: HistoryEntry[] = [];
  for (let page = 1; ; page += 1) {
    const res = await api('get', '/loyalty/points/{internal_user_id}/history', {
      key,
      params: { internal_user_id: user },
      query: { limit: 100, page },
    });
    expect(res.status).toBe(200);
    entries.push(...res.body.entries);
    if (!res.body.has_more) return { entries, body: res.body };
  }
}

describe('loyalty points', () => {
  it('answers 404 "User points not found" before the first entry, for unknown and known users', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const mine = await api<'/loyalty/points/{internal_user_id}', 'get', 404>(
      'get',
      '/loyalty/points/{internal_user_id}',
      {
        key: u.key,
        params: { internal_user_id: u.user_id },
      },
    );
    expect(mine.status).toBe(404);
    expect(mine.body).toEqual({ detail: 'User points not found' });
    const unknown = await api<'/loyalty/points/{internal_user_id}', 'get', 404>(
      'get',
      '/loyalty/points/{internal_user_id}',
      {
        key: t.adminKey,
        params: { internal_user_id: unique('nobody') },
      },
    );
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ detail: 'User points not found' });
  });

  it('awards points per action from the default rules and keeps the balance', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const rules = await api('get', '/loyalty/rules', { key: u.key });
    expect(rules.body.rules).toMatchObject({ is_default: true, organization_id: t.organization_id });
    const perPurchase = rules.body.rules.actions.purchase;
    const award = await api('post', '/loyalty/award-points/{idp_id}', {
      key: t.adminKey,
      params: { idp_id: u.idp_id },
      json: { action_type: 'purchase' },
    });
    expect(award.status).toBe(200);
    expect(award.body).toMatchObject({
      success: true,
      points_awarded: perPurchase,
      balance: perPurchase,
      duplicate: false,
      user_id: u.user_id,
      idp_id: u.idp_id,
    });
    await call('POST', `/loyalty/award-points/${u.idp_id}`, {
      key: u.key,
      json: { action_type: 'daily_login', organization_id: t.organization_id },
    });
    const balance = await api('get', '/loyalty/points/{internal_user_id}', {
      key: u.key,
      params: { internal_user_id: u.user_id },
      query: { organization_id: t.organization_id },
    });
    expect(balance.status).toBe(200);
    expect(balance.body).toMatchObject({
      points: perPurchase + rules.body.rules.actions.daily_login,
      user_id: u.user_id,
      organization_id: t.organization_id,
    });
    expect(new Date(balance.body.last_updated).toISOString()).toBe(balance.body.last_updated);
    const history = await api('get', '/loyalty/points/{internal_user_id}/history', {
      key: u.key,
      params: { internal_user_id: u.idp_id },
    });
    expect(history.body.entries.map((e) => e.description)).toEqual(['daily_login', 'purchase']);
    expect(history.body.entries[0]).toMatchObject({ reason: 'action', seq: 2, balance_after: balance.body.points });
  });

  it('refuses an unknown action with 422 naming the known ones, changing nothing', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const res = await call('POST', `/loyalty/award-points/${u.idp_id}`, {
      key: u.key,
      json: { action_type: 'free_money' },
    });
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
    const first = await call('POST', `/loyalty/award-points/${u.idp_id}`, { key: t.adminKey, json: body });
    const again = await call('POST', `/loyalty/award-points/${u.idp_id}`, { key: t.adminKey, json: body });
    expect(again.body).toMatchObject({
      duplicate: true,
      points_awarded: first.body.points_awarded,
      entry_id: first.body.entry_id,
      balance: first.body.balance,
    });
    const viaHeader = () =>
      call('POST', `/loyalty/award-points/${u.idp_id}`, {
        key: t.adminKey,
        json: { action_type: 'review' },
        headers: { 'idempotency-key': 'hdr-1' },
      });
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
      Array.from({ length: 50 }, () =>
        call('POST', `/loyalty/award-points/${u.idp_id}`, { key: t.adminKey, json: { action_type: 'purchase' } }),
      ),
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
    for (let i = 0; i < 5; i += 1)
      await call('POST', `/loyalty/award-points/${u.idp_id}`, {
        key: t.adminKey,
        json: { action_type: 'social_share' },
      });
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
    const set = await call('PUT', '/loyalty/rules', {
      key: t.adminKey,
      json: { actions: { purchase: 7, tree_planted: 30 }, referral_points: 200 },
    });
    expect(set.status).toBe(200);
    expect(set.body.rules).toMatchObject({
      is_default: false,
      actions: { purchase: 7, tree_planted: 30 },
      referral_points: 200,
      referred_points: 50,
    });
    const award = await call('POST', `/loyalty/award-points/${u.idp_id}`, {
      key: t.adminKey,
      json: { action_type: 'tree_planted' },
    });
    expect(award.body.points_awarded).toBe(30);
    const gone = await call('POST', `/loyalty/award-points/${u.idp_id}`, {
      key: t.adminKey,
      json: { action_type: 'daily_login' },
    });
    expect(gone.status).toBe(422);
    for (const bad of [
      { actions: { purchase: -5 } },
      { actions: { 'Bad.Name': 5 } },
      { actions: {} },
      { referral_points: 0 },
    ]) {
      const res = await call('PUT', '/loyalty/rules', { key: t.adminKey, json: bad });
      expect(res.status, JSON.stringify(bad)).toBe(422);
    }
    expect((await call('GET', '/loyalty/rules', { key: u.key })).body.rules.actions).toEqual({
      purchase: 7,
      tree_planted: 30,
    });
  });

  it("refuses another organization's key everywhere", async () => {
    const a = await newTenant();
    const b = await newTenant();
    const ub = await basicUser(b);
    await call('POST', `/loyalty/award-points/${ub.idp_id}`, { key: b.adminKey, json: { action_type: 'purchase' } });
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

const award = (key: string, user: string, action_type: string, extra: Record<string, unknown> = {}) =>
  call('POST', `/loyalty/award-points/${user}`, { key, json: { action_type, ...extra } });
const pointsOf = async (key: string, user: string) => {
  const res = await call('GET', `/loyalty/points/${user}`, { key });
  return res.status === 404 ? 0 : res.body.points;
};

describe('earning policies', () => {
  it('lets a basic key report a self-service action once ever: the second is 409 naming the limit, crediting nothing', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const first = await award(u.key, u.idp_id, 'profile_completed', { operation_id: 'profile' });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ points_awarded: 50, balance: 50, duplicate: false });
    // a retry of the same request answers the first result, not the limit
    const retry = await award(u.key, u.idp_id, 'profile_completed', { operation_id: 'profile' });
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ duplicate: true, entry_id: first.body.entry_id, points_awarded: 50 });
    for (const extra of [{}, { operation_id: 'another' }]) {
      const again = await award(u.key, u.idp_id, 'profile_completed', extra);
      expect(again.status).toBe(409);
      expect(again.body.detail).toBe(
        'Limit reached for action "profile_completed": 1 time ever per user; nothing was credited',
      );
    }
    // the limit belongs to the action: an admin key cannot exceed it either
    expect((await award(t.adminKey, u.user_id, 'profile_completed')).status).toBe(409);
    expect(await pointsOf(u.key, u.user_id)).toBe(50);
    const history = await call('GET', `/loyalty/points/${u.user_id}/history`, { key: u.key });
    expect(history.body.total).toBe(1);
  });

  it('refuses a basic key an admin-only action with 403 naming it; an admin awards it repeatedly', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    for (const action of ['purchase', 'review', 'survey_completed', 'social_share']) {
      const res = await award(u.key, u.idp_id, action);
      expect(res.status, action).toBe(403);
      expect(res.body.detail).toMatch(new RegExp(`^Action "${action}" needs an admin key`));
    }
    expect(await pointsOf(u.key, u.user_id)).toBe(0);
    for (let i = 1; i <= 3; i += 1) {
      const res = await award(t.adminKey, u.idp_id, 'purchase');
      expect(res.status).toBe(200);
      expect(res.body.balance).toBe(10 * i);
    }
  });

  it('credits daily_login once a day (UTC)', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    expect((await award(u.key, u.idp_id, 'daily_login')).status).toBe(200);
    const again = await award(u.key, u.idp_id, 'daily_login');
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatch(/^Limit reached for action "daily_login": 1 time per day \(UTC\) per user/);
    expect(await pointsOf(u.key, u.user_id)).toBe(5);
    // other self-service actions have their own limits
    expect((await award(u.key, u.idp_id, 'app_download')).status).toBe(200);
    expect((await award(u.key, u.idp_id, 'newsletter_signup')).status).toBe(200);
    expect((await award(u.key, u.idp_id, 'newsletter_signup')).status).toBe(409);
    expect(await pointsOf(u.key, u.user_id)).toBe(5 + 25 + 10);
  });

  it('credits a once-ever action exactly once for 20 concurrent requests, and once for 10 concurrent copies of one request', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const results = await Promise.all(Array.from({ length: 20 }, () => award(u.key, u.idp_id, 'profile_completed')));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(19);
    expect(await pointsOf(u.key, u.user_id)).toBe(50);

    const v = await basicUser(t);
    const copies = await Promise.all(
      Array.from({ length: 10 }, () => award(v.key, v.idp_id, 'app_download', { operation_id: 'install-1' })),
    );
    expect(copies.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(copies.filter((r) => !r.body.duplicate)).toHaveLength(1);
    expect(new Set(copies.map((r) => r.body.entry_id)).size).toBe(1);
    expect(await pointsOf(v.key, v.user_id)).toBe(25);
  });

  it('shares earnings between concurrent requests up to a limit above one', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const set = await call('PUT', '/loyalty/rules', {
      key: t.adminKey,
      json: { actions: { quiz: { points: 3, self_service: true, limit: { max: 7, per: 'month' } } } },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    const results = await Promise.all(Array.from({ length: 12 }, () => award(u.key, u.idp_id, 'quiz')));
    expect(results.filter((r) => r.status === 200)).toHaveLength(7);
    expect(results.filter((r) => r.status === 409).map((r) => r.body.detail)[0]).toMatch(/7 times per month \(UTC\)/);
    expect(await pointsOf(u.key, u.user_id)).toBe(21);
    expect((await award(u.key, u.idp_id, 'quiz')).status).toBe(409);
  });
});

describe('loyalty rules with policies', () => {
  it('answers GET /loyalty/rules with the rules at the top level (and under rules)', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const res = await call('GET', '/loyalty/rules', { key: u.key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      organization_id: t.organization_id,
      referral_points: 100,
      referred_points: 50,
      max_points_per_scan: 500,
      is_default: true,
    });
    expect(res.body.actions).toMatchObject({ daily_login: 5, profile_completed: 50, purchase: 10 });
    expect(res.body.policies).toMatchObject({
      daily_login: { self_service: true, limit: { max: 1, per: 'day' } },
      profile_completed: { self_service: true, limit: { max: 1, per: 'ever' } },
      purchase: { self_service: false, limit: null },
    });
    expect(res.body.rules).toEqual({
      organization_id: res.body.organization_id,
      actions: res.body.actions,
      policies: res.body.policies,
      referral_points: 100,
      referred_points: 50,
      max_points_per_scan: 500,
      points_expire_after_days: null,
      pending_days: 0,
      referral_window_days: 30,
      earning: {},
      time_zone: 'UTC',
      referral_milestones: [],
      is_default: true,
      updated_at: null,
    });
  });

  it('sets policies in the actions or as a separate map, reads them back, and a GET answer can be PUT back', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const set = await call('PUT', '/loyalty/rules', {
      key: t.adminKey,
      json: {
        actions: {
          purchase: 7,
          tree_planted: { points: 30, self_service: true, limit: { max: 2, per: 'week' } },
          daily_login: { points: 3, limit: null },
          app_download: 20,
        },
        policies: { purchase: { self_service: true } },
        max_points_per_scan: 40,
      },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    const expected = {
      actions: { purchase: 7, tree_planted: 30, daily_login: 3, app_download: 20 },
      policies: {
        purchase: { self_service: true, limit: null },
        tree_planted: { self_service: true, limit: { max: 2, per: 'week' } },
        daily_login: { self_service: true, limit: null },
        app_download: { self_service: true, limit: { max: 1, per: 'ever' } },
      },
      max_points_per_scan: 40,
      is_default: false,
    };
    expect(set.body).toMatchObject(expected);
    const got = await call('GET', '/loyalty/rules', { key: u.key });
    expect(got.body).toMatchObject(expected);
    // the policies are enforced
    expect((await award(u.key, u.idp_id, 'purchase')).status).toBe(200);
    expect((await award(u.key, u.idp_id, 'daily_login')).status).toBe(200);
    expect((await award(u.key, u.idp_id, 'daily_login')).status).toBe(200);
    expect((await award(u.key, u.idp_id, 'tree_planted')).status).toBe(200);
    expect((await award(u.key, u.idp_id, 'tree_planted')).status).toBe(200);
    expect((await award(u.key, u.idp_id, 'tree_planted')).body.detail).toMatch(/2 times per week/);
    expect(await pointsOf(u.key, u.user_id)).toBe(7 + 3 + 3 + 30 + 30);

    const { actions, policies, referral_points, referred_points, max_points_per_scan } = got.body;
    const back = await call('PUT', '/loyalty/rules', {
      key: t.adminKey,
      json: { actions, policies, referral_points, referred_points, max_points_per_scan },
    });
    expect(back.status, JSON.stringify(back.body)).toBe(200);
    expect(back.body).toMatchObject(expected);

    // policies alone change only what they name
    const only = await call('PUT', '/loyalty/rules', {
      key: t.adminKey,
      json: { policies: { tree_planted: { limit: { max: 1, per: 'day' } } } },
    });
    expect(only.body.policies.tree_planted).toEqual({ self_service: true, limit: { max: 1, per: 'day' } });
    expect(only.body.policies.purchase).toEqual({ self_service: true, limit: null });
    // points alone (the earlier form): the name's default policy, admin-only and unlimited for a new name
    const plain = await call('PUT', '/loyalty/rules', {
      key: t.adminKey,
      json: { actions: { purchase: 7, tree_planted: 30, profile_completed: 50 } },
    });
    expect(plain.body.policies).toEqual({
      purchase: { self_service: false, limit: null },
      tree_planted: { self_service: false, limit: null },
      profile_completed: { self_service: true, limit: { max: 1, per: 'ever' } },
    });
    expect((await award(u.key, u.idp_id, 'tree_planted')).status).toBe(403);

    for (const bad of [
      { policies: { unknown_action: { self_service: true } } },
      { policies: { purchase: { limit: { max: 1, per: 'year' } } } },
      { policies: { purchase: { limit: { max: 0, per: 'day' } } } },
      { policies: { purchase: { selfservice: true } } },
      { actions: { purchase: { points: 0 } } },
      { actions: { purchase: { self_service: true } } },
      { max_points_per_scan: 0 },
    ]) {
      const res = await call('PUT', '/loyalty/rules', { key: t.adminKey, json: bad });
      expect(res.status, JSON.stringify(bad)).toBe(422);
    }
    expect((await call('GET', '/loyalty/rules', { key: u.key })).body.policies).toEqual(plain.body.policies);
  });
});
