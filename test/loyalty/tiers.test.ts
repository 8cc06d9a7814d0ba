/**
 * Member tiers over HTTP (and the scheduled review in process, on the suite's database): the
 * organization's tiers set by an admin only and held to their limits; a member's tier following
 * the points EARNED in the qualifying window (never the balance: spending lowers nothing, a
 * reversal lowers what was earned but downgrades nobody before their review); the multiplier of
 * the tier on the next award; who reads a member's tier and history; tiers set by hand; the
 * review re-qualifying exactly the members due; campaigns held to tiers and to a member's country.
 */
import { describe, expect, it } from 'vitest';

import { reviewTiers } from '../../activities/loyalty/index.ts';
import { basicUser, call, newTenant, type Tenant, until } from '../helpers/api.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();

type User = Awaited<ReturnType<typeof basicUser>>;
const DAY = 86_400_000;

const ok = <T extends { status: number; body: unknown }>(what: string, res: T, status = 200): T => {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(status);
  return res;
};

const TIERS = [
  { tier_id: 'silver', name: 'Silver', threshold: 100, multiplier: '1.5' },
  { tier_id: 'gold', name: 'Gold', threshold: 1000, multiplier: '2' },
];

/** An organization whose `grant` action gives 60 points and `purchase` 10, with tiers. */
async function tierTenant(
  tiers: Record<string, unknown>[] = TIERS,
  window: Record<string, unknown> = { type: 'rolling_months', months: 12 },
): Promise<Tenant> {
  const t = await newTenant();
  ok('rules', await call('PUT', '/loyalty/rules', { key: t.adminKey, json: { actions: { grant: 60, purchase: 10 } } }));
  ok('tiers', await call('PUT', '/loyalty/tiers', { key: t.adminKey, json: { tiers, window } }));
  return t;
}

const award = (t: Tenant, u: User, action_type: string, operation_id?: string) =>
  call('POST', `/loyalty/award-points/${u.idp_id}`, {
    key: t.adminKey,
    json: { action_type, ...(operation_id && { operation_id }) },
  });
const tierOf = (u: User, key: string) => call('GET', `/loyalty/members/${u.user_id}/tier`, { key });
const historyOf = (u: User, key: string) => call('GET', `/loyalty/members/${u.user_id}/tier/history`, { key });
const setTier = (t: Tenant, u: User, json: Record<string, unknown>, key = t.adminKey) =>
  call('PUT', `/loyalty/members/${u.idp_id}/tier`, { key, json });
const tierEvents = async (t: Tenant) =>
  ok('events', await call('GET', '/api/events?type=tier.changed&limit=100', { key: t.adminKey })).body.events as {
    data: Record<string, unknown>;
  }[];
const eventsOf = async (t: Tenant, u: User) => (await tierEvents(t)).filter((e) => e.data.user_id === u.user_id);

const campaign = async (t: Tenant, json: Record<string, unknown>) => {
  const c = ok(
    'campaign',
    await call('POST', '/loyalty/campaigns', {
      key: t.adminKey,
      json: { name: 'Promo', starts_at: new Date(Date.now() - 60_000).toISOString(), ...json },
    }),
    201,
  );
  ok(
    'start',
    await call('PATCH', `/loyalty/campaigns/${c.body.campaign_id}`, { key: t.adminKey, json: { status: 'active' } }),
  );
  return c.body.campaign_id as string;
};
const evaluate = async (t: Tenant, u: User) =>
  ok(
    'evaluate',
    await call('POST', '/loyalty/evaluate', { key: t.adminKey, json: { user_id: u.idp_id, action_type: 'purchase' } }),
  ).body;

describe('the organization tiers', () => {
  it('are set by an admin only, answered lowest threshold first, and held to their limits', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const none = ok('get', await call('GET', '/loyalty/tiers', { key: t.adminKey })).body;
    expect(none).toMatchObject({
      organization_id: t.organization_id,
      tiers: [],
      window: { type: 'rolling_months', months: 12 },
      grace_days: 0,
      updated_at: null,
    });

    const program = {
      tiers: [
        { tier_id: 'gold', name: 'Gold', threshold: 1000, multiplier: '2', unlocks: ['cmp_x', 'cmp_x'] },
        { tier_id: 'silver', name: 'Silver', threshold: 100 },
      ],
      window: { type: 'calendar_year' },
      grace_days: 30,
    };
    expect((await call('PUT', '/loyalty/tiers', { key: u.key, json: program })).status).toBe(403);
    const set = ok('put', await call('PUT', '/loyalty/tiers', { key: t.adminKey, json: program })).body;
    expect(set).toMatchObject({
      tiers: [
        { tier_id: 'silver', name: 'Silver', threshold: 100, multiplier: '1', unlocks: [] },
        { tier_id: 'gold', name: 'Gold', threshold: 1000, multiplier: '2', unlocks: ['cmp_x'] },
      ],
      window: { type: 'calendar_year' },
      grace_days: 30,
    });
    expect(set.updated_at).toEqual(expect.any(String));
    // A member's key reads them (its app shows the ladder).
    const read = ok('get by a member', await call('GET', '/loyalty/tiers', { key: u.key })).body;
    expect(read.tiers).toEqual(set.tiers);

    const tier = (n: number, over: Record<string, unknown> = {}) => ({
      tier_id: `t${n}`,
      name: `T${n}`,
      threshold: n * 100,
      ...over,
    });
    const refused: [string, Record<string, unknown>][] = [
      ['same tier_id twice', { tiers: [tier(1), tier(2, { tier_id: 't1' })] }],
      ['same threshold twice', { tiers: [tier(1), tier(2, { threshold: 100 })] }],
      ['eleven tiers', { tiers: Array.from({ length: 11 }, (_, i) => tier(i + 1)) }],
      ['a multiplier below 1', { tiers: [tier(1, { multiplier: '0.5' })] }],
      ['a multiplier as a number', { tiers: [tier(1, { multiplier: 1.5 })] }],
      ['a negative threshold', { tiers: [tier(1, { threshold: -1 })] }],
      ['a tier_id not a slug', { tiers: [tier(1, { tier_id: 'Gold Tier' })] }],
      ['a window of 0 months', { tiers: [tier(1)], window: { type: 'rolling_months', months: 0 } }],
    ];
    for (const [what, body] of refused) {
      const res = await call('PUT', '/loyalty/tiers', {
        key: t.adminKey,
        json: { window: { type: 'rolling_months', months: 12 }, ...body },
      });
      expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(422);
    }
    // Ten is the most, and nothing refused changed the tiers.
    expect(
      (
        await call('PUT', '/loyalty/tiers', {
          key: (await newTenant()).adminKey,
          json: { tiers: Array.from({ length: 10 }, (_, i) => tier(i + 1)), window: { type: 'calendar_year' } },
        })
      ).status,
    ).toBe(200);
    expect(ok('get', await call('GET', '/loyalty/tiers', { key: t.adminKey })).body).toMatchObject({
      tiers: set.tiers,
      window: { type: 'calendar_year' },
      grace_days: 30,
    });
    // Another organization's admin neither reads nor sets them.
    const other = await newTenant();
    expect(
      (await call('GET', `/loyalty/tiers?organization_id=${t.organization_id}`, { key: other.adminKey })).status,
    ).toBe(403);
    expect(
      (
        await call('PUT', '/loyalty/tiers', {
          key: other.adminKey,
          json: { ...program, organization_id: t.organization_id },
        })
      ).status,
    ).toBe(403);
  });
});

describe("a member's tier", () => {
  it('follows the points earned in the window, not the balance: spending keeps it, a reversal lowers what was earned without a downgrade', async () => {
    const t = await tierTenant();
    const u = await basicUser(t);
    const first = ok('award 1', await award(t, u, 'grant', 'g1')).body;
    expect(first.breakdown).toMatchObject({ base: 60, tier_id: null, tier_multiplier: '1' });
    expect(ok('tier', await tierOf(u, u.key)).body).toMatchObject({
      tier: null,
      earned_in_window: 60,
      next_tier: { tier_id: 'silver', threshold: 100, points_needed: 40 },
      valid_until: null,
    });

    // 120 earned: silver at once, with the award that reached it.
    const second = ok('award 2', await award(t, u, 'grant', 'g2')).body;
    expect(second).toMatchObject({ points_awarded: 60, balance: 120 });
    const silver = ok('tier', await tierOf(u, u.key)).body;
    expect(silver).toMatchObject({
      user_id: u.user_id,
      tier: { tier_id: 'silver', name: 'Silver', multiplier: '1.5' },
      earned_in_window: 120,
      window: { type: 'rolling_months' },
      next_tier: { tier_id: 'gold', name: 'Gold', threshold: 1000, points_needed: 880 },
      set_by_hand: null,
    });
    expect(Date.parse(silver.valid_until)).toBeGreaterThan(Date.now() + 360 * DAY);
    // 12 months in UTC: the current month and the 11 before it, from the 1st at midnight.
    const today = new Date();
    expect(silver.window.start).toBe(
      new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() - 11, 1)).toISOString(),
    );
    expect(silver.since).toEqual(expect.any(String));
    const upgrade = await until(
      'the tier.changed event',
      () => eventsOf(t, u),
      (e) => e.length === 1,
      10_000,
    );
    expect(upgrade[0].data).toMatchObject({
      user_id: u.user_id,
      to_tier: 'silver',
      change: 'upgrade',
      earned_in_window: 120,
      seq: 1,
    });

    // The next award's base is multiplied by the tier's multiplier.
    const third = ok('award 3', await award(t, u, 'purchase', 'p1')).body;
    expect(third).toMatchObject({
      points_awarded: 15,
      breakdown: { base: 10, tier_id: 'silver', tier_multiplier: '1.5', total: 15 },
    });
    const entry = ok('history', await call('GET', `/loyalty/points/${u.user_id}/history`, { key: u.key })).body
      .entries[0];
    expect(entry).toMatchObject({ amount: 15, operation_id: expect.stringContaining('p1') });

    // Spending: a redemption lowers the balance, never what was earned.
    const gift = ok(
      'gift',
      await call('POST', '/api/gifts/gifts', {
        key: t.adminKey,
        json: {
          gift_name: 'Electricity bill',
          gift_type: 'service_payments',
          country: 'CO',
          service_provider: 'Enel',
          points_value: 50,
        },
      }),
      201,
    ).body.gift.id;
    const redeemed = ok(
      'redeem',
      await call('POST', `/api/gifts/gifts/${gift}/redeem`, {
        key: u.key,
        json: { user_id: u.user_id, account_reference: 'ENEL-55-0192' },
      }),
    ).body;
    expect(redeemed.redemption).toMatchObject({ status: 'completed', points_spent: 50, balance_after: 85 });
    expect(ok('tier', await tierOf(u, u.key)).body).toMatchObject({
      tier: { tier_id: 'silver' },
      earned_in_window: 135,
      next_tier: { points_needed: 865 },
    });

    // A reversal takes back what was earned: below silver's threshold, still silver until the review.
    const reversed = ok(
      'reverse',
      await call('POST', '/loyalty/reverse', {
        key: t.adminKey,
        json: { operation_id: 'g1', user_id: u.user_id, reason: 'returned' },
      }),
    ).body;
    expect(reversed).toMatchObject({ points_reversed: 60, points: 25 });
    const after = ok('tier', await tierOf(u, u.key)).body;
    expect(after).toMatchObject({ tier: { tier_id: 'silver' }, earned_in_window: 75, valid_until: silver.valid_until });
    // An award after it earns at silver's rate and changes nothing.
    expect(ok('award 4', await award(t, u, 'purchase')).body.breakdown).toMatchObject({ tier_id: 'silver', total: 15 });
    const history = ok('history', await historyOf(u, t.adminKey)).body;
    expect(history.changes).toHaveLength(1);
    expect(history.changes[0]).toMatchObject({ n: 1, from_tier: null, to_tier: 'silver', change: 'upgrade' });
    expect(await eventsOf(t, u)).toHaveLength(1);
  });

  it('skips to the highest tier reached at once, and answers it to its member only', async () => {
    const t = await tierTenant();
    ok(
      'rules',
      await call('PUT', '/loyalty/rules', { key: t.adminKey, json: { actions: { big: 1200, purchase: 10 } } }),
    );
    const u = await basicUser(t);
    const v = await basicUser(t);
    ok(
      'award',
      await call('POST', `/loyalty/award-points/${u.idp_id}`, { key: t.adminKey, json: { action_type: 'big' } }),
    );
    const gold = ok('own tier', await tierOf(u, u.key)).body;
    expect(gold).toMatchObject({ tier: { tier_id: 'gold', multiplier: '2' }, earned_in_window: 1200, next_tier: null });
    expect(ok('by idp_id', await call('GET', `/loyalty/members/${u.idp_id}/tier`, { key: u.key })).body.tier).toEqual(
      gold.tier,
    );
    expect(ok('by admin', await tierOf(u, t.adminKey)).body.tier).toEqual(gold.tier);
    // Another member's key: 403, for a member with a tier and for one without.
    expect((await tierOf(u, v.key)).status).toBe(403);
    expect((await historyOf(u, v.key)).status).toBe(403);
    expect((await call('GET', `/loyalty/members/${u.idp_id}/tier`, { key: v.key })).status).toBe(403);
    // Another organization's admin does not find the user.
    const other = await tierTenant();
    expect((await tierOf(u, other.adminKey)).status).toBe(404);
    expect((await historyOf(u, other.adminKey)).status).toBe(404);
    // A member who earned nothing yet: no tier, the first tier's whole threshold to go.
    expect(ok('new member', await tierOf(v, v.key)).body).toMatchObject({
      tier: null,
      earned_in_window: 0,
      next_tier: { tier_id: 'silver', points_needed: 100 },
      valid_until: null,
      since: null,
    });
    const events = await eventsOf(t, u);
    expect(events.map((e) => [e.data.to_tier, e.data.change])).toEqual([['gold', 'upgrade']]);
  });

  it("counts a tier of threshold 0 as every member's, and is 404 while the organization has no tiers", async () => {
    const plain = await newTenant();
    const p = await basicUser(plain);
    const none = await tierOf(p, p.key);
    expect(none.status, JSON.stringify(none.body)).toBe(404);
    expect((await tierOf(p, plain.adminKey)).status).toBe(404);

    const t = await tierTenant([
      { tier_id: 'member', name: 'Member', threshold: 0 },
      { tier_id: 'silver', name: 'Silver', threshold: 100, multiplier: '1.5' },
    ]);
    const u = await basicUser(t);
    expect(ok('base tier', await tierOf(u, u.key)).body).toMatchObject({
      tier: { tier_id: 'member', multiplier: '1' },
      next_tier: { tier_id: 'silver', points_needed: 100 },
      valid_until: null,
      since: null,
    });
    expect(ok('award', await award(t, u, 'purchase')).body.breakdown).toMatchObject({
      tier_id: 'member',
      tier_multiplier: '1',
    });
  });
  it("rounds the multiplied base as the action's rule says: down for fixed points, the earning rule's rounding by amount", async () => {
    const t = await newTenant();
    ok(
      'rules',
      await call('PUT', '/loyalty/rules', {
        key: t.adminKey,
        json: {
          actions: { grant: 200, small: 5, purchase: 10 },
          earning: { purchase: { rate: '1', currency: 'EUR', rounding: 'up' } },
        },
      }),
    );
    ok(
      'tiers',
      await call('PUT', '/loyalty/tiers', {
        key: t.adminKey,
        json: {
          tiers: [{ tier_id: 'silver', name: 'Silver', threshold: 100, multiplier: '1.25' }],
          window: { type: 'rolling_months', months: 12 },
        },
      }),
    );
    const u = await basicUser(t);
    ok('grant', await award(t, u, 'grant'));
    // 5 × 1.25 = 6.25: 6
    expect(ok('small', await award(t, u, 'small')).body).toMatchObject({
      points_awarded: 6,
      breakdown: { base: 5, tier_id: 'silver', tier_multiplier: '1.25', total: 6 },
    });
    // 5.00 EUR at 1 a euro, × 1.25 = 6.25, rounded up: 7
    const byAmount = await call('POST', `/loyalty/award-points/${u.idp_id}`, {
      key: t.adminKey,
      json: { action_type: 'purchase', amount: '5.00', currency: 'EUR' },
    });
    expect(ok('purchase', byAmount).body).toMatchObject({
      points_awarded: 7,
      breakdown: { base: 5, tier_id: 'silver', tier_multiplier: '1.25', total: 7 },
    });
  });

  it('writes each change once when awards race across two thresholds', async () => {
    const t = await tierTenant([
      { tier_id: 'silver', name: 'Silver', threshold: 100 },
      { tier_id: 'gold', name: 'Gold', threshold: 1000 },
    ]);
    ok('rules', await call('PUT', '/loyalty/rules', { key: t.adminKey, json: { actions: { big: 200 } } }));
    const u = await basicUser(t);
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        call('POST', `/loyalty/award-points/${u.idp_id}`, { key: t.adminKey, json: { action_type: 'big' } }),
      ),
    );
    for (const a of answers) expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(ok('tier', await tierOf(u, t.adminKey)).body).toMatchObject({
      tier: { tier_id: 'gold' },
      earned_in_window: 1200,
    });
    const changes = ok('history', await historyOf(u, t.adminKey)).body.changes as {
      n: number;
      change: string;
      to_tier: string;
    }[];
    expect(changes.every((c) => c.change === 'upgrade')).toBe(true);
    expect(changes.map((c) => c.n)).toEqual(changes.map((_, i) => changes.length - i));
    expect(changes[0].to_tier).toBe('gold');
    expect(changes.length).toBeLessThanOrEqual(2);
    const events = await eventsOf(t, u);
    expect(events.map((e) => e.data.seq).sort()).toEqual(changes.map((c) => c.n).sort());
  });

  it('counts a member of a removed tier as the threshold-0 tier until an earning credit upgrades them; no tiers at all: 404, no multiplier', async () => {
    const t = await tierTenant();
    const u = await basicUser(t);
    ok('award', await award(t, u, 'grant'));
    ok('award', await award(t, u, 'grant'));
    expect(ok('tier', await tierOf(u, u.key)).body.tier.tier_id).toBe('silver');
    ok(
      'new tiers',
      await call('PUT', '/loyalty/tiers', {
        key: t.adminKey,
        json: {
          tiers: [
            { tier_id: 'member', name: 'Member', threshold: 0 },
            { tier_id: 'bronze', name: 'Bronze', threshold: 50, multiplier: '1.2' },
            { tier_id: 'gold', name: 'Gold', threshold: 1000, multiplier: '2' },
          ],
          window: { type: 'rolling_months', months: 12 },
        },
      }),
    );
    // Silver is gone: the threshold-0 tier, although the points reach bronze (an upgrade waits for a credit).
    expect(ok('tier', await tierOf(u, u.key)).body).toMatchObject({
      tier: { tier_id: 'member' },
      earned_in_window: 120,
      next_tier: { tier_id: 'bronze', points_needed: 0 },
      valid_until: null,
      since: null,
    });
    expect(ok('award', await award(t, u, 'purchase')).body.breakdown).toMatchObject({
      tier_id: 'member',
      tier_multiplier: '1',
      total: 10,
    });
    expect(ok('tier', await tierOf(u, u.key)).body).toMatchObject({
      tier: { tier_id: 'bronze' },
      earned_in_window: 130,
    });
    const changes = ok('history', await historyOf(u, t.adminKey)).body.changes;
    expect(
      changes.map((c: { from_tier: string; to_tier: string; change: string }) => [c.from_tier, c.to_tier, c.change]),
    ).toEqual([
      ['member', 'bronze', 'upgrade'],
      [null, 'silver', 'upgrade'],
    ]);
    expect(ok('award', await award(t, u, 'purchase')).body.breakdown).toMatchObject({
      tier_id: 'bronze',
      tier_multiplier: '1.2',
      total: 12,
    });

    ok(
      'no tiers',
      await call('PUT', '/loyalty/tiers', {
        key: t.adminKey,
        json: { tiers: [], window: { type: 'rolling_months', months: 12 } },
      }),
    );
    expect((await tierOf(u, u.key)).status).toBe(404);
    expect(ok('award', await award(t, u, 'purchase')).body.breakdown).toMatchObject({
      tier_id: null,
      tier_multiplier: '1',
      total: 10,
    });
  });
  // A member holds the threshold-0 tier before any change: their first change names it.
  it("names the threshold-0 tier as from_tier in a member's first change, also when an admin set their attributes before it", async () => {
    const t = await tierTenant([
      { tier_id: 'member', name: 'Member', threshold: 0 },
      { tier_id: 'silver', name: 'Silver', threshold: 100, multiplier: '1.5' },
    ]);
    const plain = await basicUser(t);
    const withAttributes = await basicUser(t);
    ok(
      'attributes',
      await call('PUT', `/loyalty/members/${withAttributes.idp_id}/attributes`, {
        key: t.adminKey,
        json: { attributes: { country: 'FR' } },
      }),
    );
    for (const u of [plain, withAttributes]) {
      ok('award', await award(t, u, 'grant'));
      ok('award', await award(t, u, 'grant'));
    }
    for (const [who, u] of [
      ['a member who earned below the threshold first', plain],
      ['a member whose attributes were set first', withAttributes],
    ] as const) {
      const changes = ok('history', await historyOf(u, t.adminKey)).body.changes;
      expect.soft(changes, who).toHaveLength(1);
      expect.soft(changes[0], who).toMatchObject({ n: 1, from_tier: 'member', to_tier: 'silver', change: 'upgrade' });
      const events = await eventsOf(t, u);
      expect
        .soft(
          events.map((e) => [e.data.from_tier, e.data.to_tier]),
          who,
        )
        .toEqual([['member', 'silver']]);
    }
  });
});

describe('a tier set by hand', () => {
  it('is set by an admin with a reason until a future date; the history lists it, a member reads it without the reason', async () => {
    const t = await tierTenant();
    const u = await basicUser(t);
    const until30 = new Date(Date.now() + 30 * DAY).toISOString();
    expect((await setTier(t, u, { tier_id: 'gold', reason: 'VIP', until: until30 }, u.key)).status).toBe(403);
    const past = await setTier(t, u, {
      tier_id: 'gold',
      reason: 'VIP',
      until: new Date(Date.now() - DAY).toISOString(),
    });
    expect(past.status, JSON.stringify(past.body)).toBe(422);
    expect(JSON.stringify(past.body)).toContain('until');
    const unknown = await setTier(t, u, { tier_id: 'platinum', reason: 'VIP', until: until30 });
    expect(unknown.status, JSON.stringify(unknown.body)).toBe(422);
    expect(JSON.stringify(unknown.body)).toContain('tier_id');
    expect((await setTier(t, u, { tier_id: 'gold', reason: '', until: until30 })).status).toBe(422);
    // Nothing refused wrote anything.
    expect(ok('history', await historyOf(u, t.adminKey)).body.changes).toEqual([]);

    const set = ok(
      'set',
      await setTier(t, u, { tier_id: 'gold', reason: 'Compensation for ticket #42', until: until30 }),
    ).body;
    expect(set).toMatchObject({
      user_id: u.user_id,
      tier: { tier_id: 'gold', multiplier: '2' },
      set_by_hand: { reason: 'Compensation for ticket #42' },
      earned_in_window: 0,
    });
    expect(Date.parse(set.valid_until)).toBe(Date.parse(until30));
    expect(Date.parse(set.set_by_hand.until)).toBe(Date.parse(until30));

    const asAdmin = ok('history', await historyOf(u, t.adminKey)).body.changes;
    expect(asAdmin).toHaveLength(1);
    expect(asAdmin[0]).toMatchObject({
      n: 1,
      from_tier: null,
      to_tier: 'gold',
      change: 'manual',
      earned_in_window: null,
      reason: 'Compensation for ticket #42',
    });
    expect(asAdmin[0].by).toEqual(expect.any(String));
    const own = ok('own history', await historyOf(u, u.key)).body.changes;
    expect(own).toHaveLength(1);
    expect(own[0]).toMatchObject({ change: 'manual', to_tier: 'gold', reason: null, by: null });
    const ownTier = ok('own tier', await tierOf(u, u.key)).body;
    expect(ownTier).toMatchObject({ tier: { tier_id: 'gold' }, set_by_hand: { reason: '' } });
    expect(JSON.stringify(ownTier)).not.toContain('ticket #42');

    // The tier's multiplier applies at once, and the change is told.
    expect(ok('award', await award(t, u, 'purchase')).body.breakdown).toMatchObject({
      tier_id: 'gold',
      tier_multiplier: '2',
      total: 20,
    });
    const events = await eventsOf(t, u);
    expect(events.map((e) => [e.data.to_tier, e.data.change])).toEqual([['gold', 'manual']]);
    // The admin's words and key stay out of the event.
    expect(events[0].data).toMatchObject({ earned_in_window: null, seq: 1 });
    expect(Date.parse(events[0].data.valid_until as string)).toBe(Date.parse(until30));
    expect(JSON.stringify(events[0])).not.toContain('ticket #42');
    expect(Object.keys(events[0].data)).not.toContain('by');
    expect(Object.keys(events[0].data)).not.toContain('reason');
    // Down to no tier by hand, and the history pages newest first.
    ok('unset', await setTier(t, u, { tier_id: null, reason: 'mistake', until: until30 }));
    const both = ok('history', await historyOf(u, t.adminKey)).body.changes;
    expect(both.map((c: { n: number; to_tier: string | null }) => [c.n, c.to_tier])).toEqual([
      [2, null],
      [1, 'gold'],
    ]);
    const page = ok(
      'page',
      await call('GET', `/loyalty/members/${u.user_id}/tier/history?limit=1&before=2`, { key: t.adminKey }),
    ).body.changes;
    expect(page.map((c: { n: number }) => c.n)).toEqual([1]);
  });
});

describe('the tier review', () => {
  it('re-qualifies the members due only: downgrades who earned nothing in the window, renews who still qualifies', async () => {
    const t = await tierTenant(TIERS, { type: 'rolling_months', months: 1 });
    const lapsed = await basicUser(t);
    const renewed = await basicUser(t);
    const overGranted = await basicUser(t);
    const notDue = await basicUser(t);
    for (const u of [lapsed, renewed, overGranted]) {
      ok('award', await award(t, u, 'grant'));
      ok('award', await award(t, u, 'grant'));
    }
    const before = ok('lapsed tier', await tierOf(lapsed, t.adminKey)).body;
    expect(before).toMatchObject({ tier: { tier_id: 'silver' }, earned_in_window: 120 });
    // A window of one month: the tier holds through the next month's end, counted from the upgrade.
    const validUntil = Date.parse(before.valid_until);
    expect(validUntil).toBeGreaterThan(Date.now() + 27 * DAY);
    expect(validUntil).toBeLessThan(Date.now() + 32 * DAY);

    // Two hand-set tiers that end in a moment: their review comes first, with the real clock (the
    // points just earned are in the window). One set to what the member earned, one above it.
    const soon = new Date(Date.now() + 1500).toISOString();
    ok('set', await setTier(t, renewed, { tier_id: 'silver', reason: 'goodwill', until: soon }));
    ok('set', await setTier(t, overGranted, { tier_id: 'gold', reason: 'trial', until: soon }));
    // A member whose hand-set tier holds for more than a year is not due at either review.
    const far = new Date(Date.now() + 400 * DAY).toISOString();
    ok('set', await setTier(t, notDue, { tier_id: 'silver', reason: 'partner', until: far }));
    const notDueBefore = ok('not due', await tierOf(notDue, t.adminKey)).body;
    await new Promise((r) => setTimeout(r, 2000));

    const first = await reviewTiers({ now: new Date().toISOString() });
    expect(first.reviewed).toBeGreaterThanOrEqual(2);
    const r = ok('renewed', await tierOf(renewed, t.adminKey)).body;
    expect(r).toMatchObject({ tier: { tier_id: 'silver' }, earned_in_window: 120, set_by_hand: null });
    expect(Date.parse(r.valid_until)).toBeGreaterThan(Date.now() + 27 * DAY);
    const rh = ok('renewed history', await historyOf(renewed, t.adminKey)).body.changes;
    expect(rh.map((c: { change: string; to_tier: string }) => [c.change, c.to_tier])).toEqual([
      ['renewal', 'silver'],
      ['manual', 'silver'],
      ['upgrade', 'silver'],
    ]);
    expect(rh[0]).toMatchObject({ from_tier: 'silver', earned_in_window: 120 });
    // Neither the hand-set tier to the one held nor the renewal changed the tier: no event.
    expect((await eventsOf(t, renewed)).map((e) => [e.data.to_tier, e.data.change, e.data.seq])).toEqual([
      ['silver', 'upgrade', 1],
    ]);
    const o = ok('over-granted', await tierOf(overGranted, t.adminKey)).body;
    expect(o).toMatchObject({ tier: { tier_id: 'silver' }, set_by_hand: null });
    const oh = ok('over-granted history', await historyOf(overGranted, t.adminKey)).body.changes;
    expect(oh[0]).toMatchObject({ change: 'downgrade', from_tier: 'gold', to_tier: 'silver', earned_in_window: 120 });
    expect((await eventsOf(t, overGranted)).map((e) => [e.data.from_tier, e.data.to_tier, e.data.change])).toEqual([
      [null, 'silver', 'upgrade'],
      ['silver', 'gold', 'manual'],
      ['gold', 'silver', 'downgrade'],
    ]);
    // The earned tier that has not ended yet was not reviewed.
    expect(ok('lapsed history', await historyOf(lapsed, t.adminKey)).body.changes).toHaveLength(1);

    // A day after the lapsed member's tier ended: the window is then the month holding that day,
    // which starts after the points were earned. Nothing earned in it: down to no tier.
    const later = new Date(validUntil + DAY);
    const second = await reviewTiers({ now: later.toISOString() });
    expect(second.reviewed).toBeGreaterThanOrEqual(1);
    const lh = ok('lapsed history', await historyOf(lapsed, t.adminKey)).body.changes;
    expect(lh).toHaveLength(2);
    expect(lh[0]).toMatchObject({
      n: 2,
      change: 'downgrade',
      from_tier: 'silver',
      to_tier: null,
      earned_in_window: 0,
      valid_until: null,
    });
    expect(Date.parse(lh[0].at)).toBe(later.getTime());
    expect(ok('lapsed tier', await tierOf(lapsed, t.adminKey)).body).toMatchObject({
      tier: null,
      valid_until: null,
    });
    const down = (await eventsOf(t, lapsed)).map((e) => e.data);
    expect(down).toHaveLength(2);
    expect(down[1]).toMatchObject({ from_tier: 'silver', to_tier: null, change: 'downgrade', seq: 2 });
    // The balance is the member's all the same.
    expect(ok('balance', await call('GET', `/loyalty/points/${lapsed.user_id}`, { key: t.adminKey })).body.points).toBe(
      120,
    );

    // The member not due: untouched by both reviews.
    expect(ok('not due history', await historyOf(notDue, t.adminKey)).body.changes).toHaveLength(1);
    const notDueAfter = ok('not due', await tierOf(notDue, t.adminKey)).body;
    expect(notDueAfter).toMatchObject({
      tier: { tier_id: 'silver' },
      valid_until: notDueBefore.valid_until,
      since: notDueBefore.since,
      set_by_hand: { reason: 'partner' },
    });
    // A second review at the same instant finds no one of this organization due.
    await reviewTiers({ now: later.toISOString() });
    expect(ok('lapsed history', await historyOf(lapsed, t.adminKey)).body.changes).toHaveLength(2);
  });
  it('on the calendar year in the program time zone: from 1 January there, valid through the next year plus grace; the review counts the year just ended', async () => {
    const t = await newTenant();
    ok(
      'rules',
      await call('PUT', '/loyalty/rules', {
        key: t.adminKey,
        json: { actions: { grant: 60, purchase: 10 }, time_zone: 'Europe/Paris' },
      }),
    );
    ok(
      'tiers',
      await call('PUT', '/loyalty/tiers', {
        key: t.adminKey,
        json: { tiers: TIERS, window: { type: 'calendar_year' }, grace_days: 30 },
      }),
    );
    // Local midnight on 1 January in Paris (UTC+1 in winter).
    const newYear = (y: number) => Date.UTC(y, 0, 1) - 3_600_000;
    const year = Number(
      new Intl.DateTimeFormat('en', { timeZone: 'Europe/Paris', year: 'numeric' }).format(new Date()),
    );
    const [reached, kept, lapsed] = [await basicUser(t), await basicUser(t), await basicUser(t)];
    for (const u of [reached, kept]) {
      ok('award', await award(t, u, 'grant'));
      ok('award', await award(t, u, 'grant'));
    }
    const view = ok('tier', await tierOf(reached, reached.key)).body;
    expect(view).toMatchObject({ tier: { tier_id: 'silver' }, window: { type: 'calendar_year' } });
    expect(Date.parse(view.window.start)).toBe(newYear(year));
    // Reached this year: holds through next year, plus 30 days.
    expect(Date.parse(view.valid_until)).toBe(newYear(year + 2) + 30 * DAY);

    // Two hand-set tiers ending on 15 January next year, reviewed on the 16th: one whose points of
    // the year just ended reach silver (renewed as if reached at that year's end), one with none.
    const jan15 = new Date(newYear(year + 1) + 14 * DAY).toISOString();
    ok('set', await setTier(t, kept, { tier_id: 'silver', reason: 'x', until: jan15 }));
    ok('set', await setTier(t, lapsed, { tier_id: 'silver', reason: 'x', until: jan15 }));
    await reviewTiers({ now: new Date(newYear(year + 1) + 15 * DAY).toISOString() });
    const kh = ok('kept history', await historyOf(kept, t.adminKey)).body.changes;
    expect(kh[0]).toMatchObject({ change: 'renewal', from_tier: 'silver', to_tier: 'silver', earned_in_window: 120 });
    expect(Date.parse(kh[0].valid_until)).toBe(newYear(year + 2) + 30 * DAY);
    const lh = ok('lapsed history', await historyOf(lapsed, t.adminKey)).body.changes;
    expect(lh[0]).toMatchObject({ change: 'downgrade', from_tier: 'silver', to_tier: null, earned_in_window: 0 });
    // The member who reached silver by earning is not due before 2 years' end.
    expect(ok('reached history', await historyOf(reached, t.adminKey)).body.changes).toHaveLength(1);
  });
  // The months are added in the program's time zone (calendar.ts addMonths): east of UTC a tier
  // reached or renewed early on the 1st (local) holds through the next window, not 1-3 days less.
  it('holds a tier reviewed in a rolling window n calendar months in the program time zone (east of UTC)', async () => {
    const TOKYO = 9 * 3_600_000; // Asia/Tokyo: UTC+9, no daylight saving
    const t = await newTenant();
    ok(
      'rules',
      await call('PUT', '/loyalty/rules', {
        key: t.adminKey,
        json: { actions: { grant: 60 }, time_zone: 'Asia/Tokyo' },
      }),
    );
    ok(
      'tiers',
      await call('PUT', '/loyalty/tiers', {
        key: t.adminKey,
        json: { tiers: TIERS, window: { type: 'rolling_months', months: 13 } },
      }),
    );
    const u = await basicUser(t);
    ok('award', await award(t, u, 'grant'));
    ok('award', await award(t, u, 'grant'));
    // The next 1st of a month (Tokyo) that follows a shorter month: 00:30 there is still the
    // previous month's last day in UTC (15:30), where UTC month arithmetic loses the days between.
    const local = new Date(Date.now() + TOKYO);
    const daysIn = (y: number, m: number) => new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
    let month = local.getUTCMonth() + 1;
    const year = local.getUTCFullYear();
    while (daysIn(year, month - 1) >= daysIn(year, month)) month += 1;
    const firstAt = (m: number) => Date.UTC(year, m, 1, 0, 30) - TOKYO;
    const now = firstAt(month);
    ok('set', await setTier(t, u, { tier_id: 'silver', reason: 'x', until: new Date(now - 60_000).toISOString() }));
    await reviewTiers({ now: new Date(now).toISOString() });
    const changes = ok('history', await historyOf(u, t.adminKey)).body.changes;
    // Today's points are in the 13 months ending that month: renewed.
    expect(changes[0]).toMatchObject({ change: 'renewal', to_tier: 'silver', earned_in_window: 120 });
    // 13 calendar months after 00:30 on the 1st in Tokyo: 00:30 on the 1st, 13 months later, in Tokyo.
    expect(changes[0].valid_until).toBe(new Date(firstAt(month + 13)).toISOString());
  });
});

describe('campaigns held to tiers and to attributes', () => {
  it('a campaign with conditions.tiers, or unlocked by a tier, applies to members of that tier only', async () => {
    const t = await tierTenant();
    const silverOnly = await campaign(t, { effect: { type: 'bonus', points: 7 }, conditions: { tiers: ['silver'] } });
    const goldPerk = await campaign(t, { name: 'Gold perk', effect: { type: 'bonus', points: 11 } });
    ok(
      'tiers',
      await call('PUT', '/loyalty/tiers', {
        key: t.adminKey,
        json: {
          tiers: [TIERS[0], { ...TIERS[1], unlocks: [goldPerk] }],
          window: { type: 'rolling_months', months: 12 },
        },
      }),
    );
    const nobody = await basicUser(t);
    const silver = await basicUser(t);
    const gold = await basicUser(t);
    const until30 = new Date(Date.now() + 30 * DAY).toISOString();
    ok('silver', await setTier(t, silver, { tier_id: 'silver', reason: 'x', until: until30 }));
    ok('gold', await setTier(t, gold, { tier_id: 'gold', reason: 'x', until: until30 }));

    const n = await evaluate(t, nobody);
    expect(n.campaigns).toEqual([]);
    expect(n.not_applied).toEqual(
      expect.arrayContaining([
        { campaign_id: silverOnly, reason: 'tier' },
        { campaign_id: goldPerk, reason: 'tier' },
      ]),
    );
    expect(n.total).toBe(10);
    const s = await evaluate(t, silver);
    expect(s).toMatchObject({ tier: { tier_id: 'silver' }, tier_multiplier: '1.5', total: 15 + 7 });
    expect(s.campaigns.map((c: { campaign_id: string }) => c.campaign_id)).toEqual([silverOnly]);
    expect(s.not_applied).toContainEqual({ campaign_id: goldPerk, reason: 'tier' });
    const g = await evaluate(t, gold);
    expect(g).toMatchObject({ tier: { tier_id: 'gold' }, tier_multiplier: '2', total: 20 + 11 });
    expect(g.campaigns.map((c: { campaign_id: string }) => c.campaign_id)).toEqual([goldPerk]);
    expect(g.not_applied).toContainEqual({ campaign_id: silverOnly, reason: 'tier' });
    // The award gives what the dry run said.
    expect(ok('award', await award(t, gold, 'purchase')).body).toMatchObject({
      points_awarded: 31,
      breakdown: { tier_id: 'gold', campaigns: [{ campaign_id: goldPerk, points: 11 }] },
    });
    expect(ok('award', await award(t, nobody, 'purchase')).body.points_awarded).toBe(10);
  });

  it('a campaign for a country applies to members whose country attribute is one of them, not to another', async () => {
    const t = await newTenant();
    const fr = await basicUser(t);
    const de = await basicUser(t);
    const unset = await basicUser(t);
    const id = await campaign(t, { effect: { type: 'bonus', points: 9 }, conditions: { countries: ['FR', 'BE'] } });
    const attrs = (u: User, attributes: Record<string, unknown>, key = t.adminKey) =>
      call('PUT', `/loyalty/members/${u.idp_id}/attributes`, { key, json: { attributes } });
    expect((await attrs(fr, { country: 'FR' }, fr.key)).status).toBe(403);
    expect((await attrs(fr, { country: 'fr' })).status).toBe(422);
    expect((await attrs(fr, { Country: 'FR' })).status).toBe(422);
    expect(ok('fr', await attrs(fr, { country: 'FR', segment: 'students' })).body).toEqual({
      success: true,
      user_id: fr.user_id,
      attributes: { country: 'FR', segment: 'students' },
    });
    ok('de', await attrs(de, { country: 'DE' }));

    const f = await evaluate(t, fr);
    expect(f.campaigns.map((c: { campaign_id: string }) => c.campaign_id)).toEqual([id]);
    expect(f.total).toBe(19);
    for (const u of [de, unset]) {
      const e = await evaluate(t, u);
      expect(e.campaigns).toEqual([]);
      expect(e.not_applied).toContainEqual({ campaign_id: id, reason: 'country' });
    }
    expect(ok('award fr', await award(t, fr, 'purchase')).body.points_awarded).toBe(19);
    expect(ok('award de', await award(t, de, 'purchase')).body.points_awarded).toBe(10);
    // Attributes are replaced as a whole: the country gone, the campaign no longer applies.
    ok('replace', await attrs(fr, { segment: 'students' }));
    expect((await evaluate(t, fr)).not_applied).toContainEqual({ campaign_id: id, reason: 'country' });
  });
});
