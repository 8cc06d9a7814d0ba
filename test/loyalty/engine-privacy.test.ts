/**
 * The loyalty engine's part of a person's export and erasure, over HTTP (the database read in
 * process to see what is left): the export holds the member's tier, tier history (with the
 * admin's reason) and campaign records (limit uses, campaigns reached, each award's shares),
 * nothing of another member; the erasure deletes the tier standing and history and tombstones
 * the campaign records, so each campaign's report is unchanged. The
 * trust case: a person who had a campaign's first-purchase bonus and limited uses, erased and
 * joining again with the same idp_id, gets neither the bonus again nor more uses than the limit.
 */
import mongoose from 'mongoose';
import { describe, expect, it } from 'vitest';

import { basicUser, call, newTenant, type Tenant, until } from '../helpers/api.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';
import { unzip } from '../helpers/zip.ts';

useSuiteRuntime();

type User = Awaited<ReturnType<typeof basicUser>>;
const DAY = 86_400_000;

const ok = <T extends { status: number; body: unknown }>(what: string, res: T, status = 200): T => {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(status);
  return res;
};

interface Program {
  t: Tenant;
  /** the first purchase earns 50 more */
  first: string;
  /** 5 more per purchase, twice per member ever */
  limited: string;
}

async function program(): Promise<Program> {
  const t = await newTenant();
  ok(
    'tiers',
    await call('PUT', '/loyalty/tiers', {
      key: t.adminKey,
      json: {
        tiers: [
          { tier_id: 'silver', name: 'Silver', threshold: 10 },
          { tier_id: 'gold', name: 'Gold', threshold: 1000 },
        ],
        window: { type: 'rolling_months', months: 12 },
      },
    }),
  );
  const started = async (json: Record<string, unknown>) => {
    const c = ok(
      'campaign',
      await call('POST', '/loyalty/campaigns', {
        key: t.adminKey,
        json: { starts_at: new Date(Date.now() - 60_000).toISOString(), ...json },
      }),
      201,
    );
    ok(
      'start',
      await call('PATCH', `/loyalty/campaigns/${c.body.campaign_id}`, { key: t.adminKey, json: { status: 'active' } }),
    );
    return c.body.campaign_id as string;
  };
  const first = await started({
    name: 'Welcome',
    effect: { type: 'bonus', points: 50 },
    conditions: { action_types: ['purchase'], nth: 1 },
  });
  const limited = await started({
    name: 'Twice',
    effect: { type: 'bonus', points: 5 },
    limit_per_member: { max: 2, per: 'ever' },
  });
  return { t, first, limited };
}

/** A purchase (10 points by default) awarded by the organization. */
const purchase = async (t: Tenant, u: User) =>
  ok(
    'purchase',
    await call('POST', `/loyalty/award-points/${u.idp_id}`, { key: t.adminKey, json: { action_type: 'purchase' } }),
  ).body;
const report = async (t: Tenant, id: string) =>
  ok('report', await call('GET', `/loyalty/campaigns/${id}/report`, { key: t.adminKey })).body;
/** The campaign's report once it shows `expected` (its sums may be written a moment after the awards). */
const reportShowing = (t: Tenant, id: string, expected: Record<string, number>) =>
  until(
    `the report of ${id} showing ${JSON.stringify(expected)}`,
    () => report(t, id),
    (r) => Object.entries(expected).every(([k, v]) => r[k] === v),
    10_000,
  );

async function exportedLoyalty(u: User): Promise<any> {
  const started = ok('export', await call('POST', `/api/users/${u.user_id}/export`, { key: u.key }), 202).body;
  const ready = await until(
    'the export ready',
    () => call('GET', `/api/users/${u.user_id}/exports/${started.export_id}`, { key: u.key }),
    (r) => r.body.export?.status !== 'processing',
    120_000,
    500,
  );
  expect(ready.body.export.status, JSON.stringify(ready.body)).toBe('ready');
  const download = ok(
    'download',
    await call('GET', `/api/users/${u.user_id}/exports/${started.export_id}/download`, { key: u.key }),
  );
  const zip = await unzip(download.raw);
  return JSON.parse(zip.get('loyalty.json')!.toString());
}

/** The loyalty collections' documents of the organization under the user's id, per collection (none: `{}`). */
async function docsNaming(organization_id: string, user_id: string): Promise<Record<string, number>> {
  const db = mongoose.connection.db!;
  const out: Record<string, number> = {};
  for (const c of await db.listCollections().toArray()) {
    if (!c.name.startsWith('loyalty_')) continue;
    const n = await db.collection(c.name).countDocuments({ organization_id, user_id });
    if (n) out[c.name] = n;
  }
  return out;
}

/** Erases the user over HTTP and answers the loyalty step's report. */
async function erase(t: Tenant, u: User): Promise<Record<string, number>> {
  ok('erase', await call('DELETE', `/api/users/${u.user_id}`, { key: t.adminKey, json: {} }), 202);
  const done = await until(
    'the erasure completed',
    () => call('GET', `/api/users/${u.user_id}/erasure`, { key: t.adminKey }),
    (r) => r.body.erasure?.status === 'completed',
    180_000,
    500,
  );
  return done.body.erasure.steps.loyalty.report;
}

describe("the engine's data of one person", () => {
  it('is exported (tier, tier history, campaign uses and reach) and erased: the standing and history deleted, the campaign records tombstoned, the reports unchanged', async () => {
    const { t, first, limited } = await program();
    const a = await basicUser(t);
    const b = await basicUser(t);
    // A: the welcome bonus and both limited uses (65, 15, then 10 with the limit reached).
    expect((await purchase(t, a)).points_awarded).toBe(65);
    expect((await purchase(t, a)).points_awarded).toBe(15);
    const third = await purchase(t, a);
    expect(third.points_awarded).toBe(10);
    expect(third.breakdown.campaigns).toEqual([
      { campaign_id: limited, version: 1, points: 0, refused: 'limit_reached' },
    ]);
    expect((await purchase(t, b)).points_awarded).toBe(65);
    ok(
      'attributes',
      await call('PUT', `/loyalty/members/${a.idp_id}/attributes`, {
        key: t.adminKey,
        json: { attributes: { country: 'FR' } },
      }),
    );
    const until30 = new Date(Date.now() + 30 * DAY).toISOString();
    ok(
      'by hand',
      await call('PUT', `/loyalty/members/${a.idp_id}/tier`, {
        key: t.adminKey,
        json: { tier_id: 'gold', reason: 'complained about delivery', until: until30 },
      }),
    );

    // The reports' sums are written a moment after the awards (and the members reached with them).
    const before = {
      first: await reportShowing(t, first, { points_given: 100, awards: 2, members_reached: 2 }),
      limited: await reportShowing(t, limited, { points_given: 15, awards: 3, members_reached: 2 }),
    };

    const data = await exportedLoyalty(a);
    expect(data.tier).toHaveLength(1);
    expect(data.tier[0]).toMatchObject({
      tier_id: 'gold',
      set_by_hand: { reason: 'complained about delivery', until: until30 },
      attributes: { country: 'FR' },
    });
    expect(data.tier[0].since).toEqual(expect.any(String));
    expect(data.tier_history).toEqual([
      expect.objectContaining({ n: 1, from_tier: null, to_tier: 'silver', change: 'upgrade', earned_in_window: 65 }),
      expect.objectContaining({
        n: 2,
        from_tier: 'silver',
        to_tier: 'gold',
        change: 'manual',
        reason: 'complained about delivery',
      }),
    ]);
    // The campaigns' records of the person: the uses their limits count (the n-th award bonus is a
    // use of its own), the campaigns that reached them, and each award's shares on its entry.
    const uses = data.campaign_uses as { campaign_id: string; window: string; used: number }[];
    expect(uses.map((u) => [u.campaign_id, u.window, u.used]).sort()).toEqual(
      [
        [first, 'nth', 1],
        [limited, 'ever', 2],
      ].sort(),
    );
    for (const u of uses) expect(Object.keys(u)).not.toContain('_id');
    expect((data.campaigns_reached as { campaign_id: string }[]).map((r) => r.campaign_id).sort()).toEqual(
      [first, limited].sort(),
    );
    const shares = (data.entries as { breakdown: { campaigns: { campaign_id: string; points: number }[] } | null }[])
      .flatMap((e) => e.breakdown?.campaigns ?? [])
      .filter((c) => c.points > 0)
      .map((c) => [c.campaign_id, c.points]);
    expect(shares.sort()).toEqual(
      [
        [first, 50],
        [limited, 5],
        [limited, 5],
      ].sort(),
    );
    // The admin's key that set the tier is not the person's data.
    for (const c of data.tier_history) expect(Object.keys(c)).not.toContain('by');
    expect(JSON.stringify(data)).not.toContain(b.user_id);

    const bBefore = ok('b tier', await call('GET', `/loyalty/members/${b.user_id}/tier`, { key: t.adminKey })).body;
    const bDocs = await docsNaming(t.organization_id, b.user_id);
    // A's standing (with the attributes) and two tier changes, under A's id.
    expect(await docsNaming(t.organization_id, a.user_id)).toMatchObject({
      loyalty_members: 1,
      loyalty_tier_changes: 2,
    });

    const erased = await erase(t, a);
    expect(erased).toMatchObject({
      tier_records_deleted: 3,
      campaign_uses_tombstoned: 2,
      campaign_reach_tombstoned: 2,
    });
    // Nothing of the engine's is left under A's id: the tier records deleted, the campaign uses and
    // reach tombstoned.
    expect(await docsNaming(t.organization_id, a.user_id)).toEqual({});
    // The campaigns' books: the same points, awards and members reached.
    expect(await report(t, first)).toEqual(before.first);
    expect(await report(t, limited)).toEqual(before.limited);
    // B untouched.
    expect(ok('b tier', await call('GET', `/loyalty/members/${b.user_id}/tier`, { key: t.adminKey })).body).toEqual(
      bBefore,
    );
    expect(await docsNaming(t.organization_id, b.user_id)).toEqual(bDocs);
    expect((await call('GET', `/loyalty/members/${a.user_id}/tier`, { key: t.adminKey })).status).toBe(404);
    // The tier events name the tombstone now.
    const events = ok('events', await call('GET', '/api/events?type=tier.changed&limit=100', { key: t.adminKey })).body
      .events;
    expect(events.length).toBeGreaterThanOrEqual(3);
    expect(JSON.stringify(events)).not.toContain(a.user_id);
    expect(JSON.stringify(events)).not.toContain('complained');
  }, 300_000);

  it('does not give a person who was erased and joins again the first-purchase bonus again, nor more limited uses than the limit', async () => {
    const { t, first, limited } = await program();
    // A used the welcome bonus and both limited uses; P the welcome bonus and one use of two.
    const a = await basicUser(t);
    const p = await basicUser(t);
    expect((await purchase(t, a)).points_awarded).toBe(65);
    expect((await purchase(t, a)).points_awarded).toBe(15);
    expect((await purchase(t, p)).points_awarded).toBe(65);
    await Promise.all([erase(t, a), erase(t, p)]);

    const a2 = await basicUser(t, a.idp_id);
    const p2 = await basicUser(t, p.idp_id);
    expect(a2.user_id).not.toBe(a.user_id);
    expect(p2.user_id).not.toBe(p.user_id);
    // The dry run already says the first-purchase campaign does not apply: not the person's first.
    for (const u of [a2, p2]) {
      const ev = ok(
        'evaluate',
        await call('POST', '/loyalty/evaluate', {
          key: t.adminKey,
          json: { user_id: u.idp_id, action_type: 'purchase' },
        }),
      ).body;
      expect(ev.not_applied).toContainEqual({ campaign_id: first, reason: 'nth' });
    }

    // A: no welcome bonus, no use left.
    const a2First = await purchase(t, a2);
    expect(a2First.points_awarded, JSON.stringify(a2First)).toBe(10);
    expect(a2First.breakdown.campaigns).toEqual([
      { campaign_id: limited, version: 1, points: 0, refused: 'limit_reached' },
    ]);
    expect((await purchase(t, a2)).points_awarded).toBe(10);
    // P: no welcome bonus, the one use left, then none.
    const p2First = await purchase(t, p2);
    expect(p2First.points_awarded, JSON.stringify(p2First)).toBe(15);
    expect(p2First.breakdown.campaigns).toEqual([{ campaign_id: limited, version: 1, points: 5 }]);
    expect((await purchase(t, p2)).points_awarded).toBe(10);
    expect((await purchase(t, p2)).points_awarded).toBe(10);

    await reportShowing(t, first, { points_given: 100, awards: 2 });
    // A's two uses, P's first and P's second (under the new account): four in all.
    await reportShowing(t, limited, { points_given: 20, awards: 4 });
    // Someone new still gets both.
    const fresh = await basicUser(t);
    expect((await purchase(t, fresh)).points_awarded).toBe(65);
    // The returning person's tier is their new account's own: what it earned, no history before it.
    const tier = ok('tier', await call('GET', `/loyalty/members/${a2.user_id}/tier`, { key: a2.key })).body;
    expect(tier).toMatchObject({ tier: { tier_id: 'silver' }, earned_in_window: 20 });
    const history = ok('history', await call('GET', `/loyalty/members/${a2.user_id}/tier/history`, { key: t.adminKey }))
      .body.changes;
    expect(history).toHaveLength(1);
    expect(history[0]).toMatchObject({ n: 1, from_tier: null, to_tier: 'silver', earned_in_window: 10 });
  }, 300_000);
});
