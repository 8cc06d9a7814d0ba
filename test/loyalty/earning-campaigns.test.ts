/**
 * The loyalty engine over HTTP: earning by amount (exact, every bad amount a 422 that credits
 * nothing), the dry run that writes nothing, campaigns with budgets that concurrent awards cannot
 * overspend, reversals that give a campaign's points back to its budget, and what a basic key and
 * another organization may not do.
 */
import { describe, expect, it } from 'vitest';

import { basicUser, call, newTenant, type Tenant, until } from '../helpers/api.ts';

const award = (t: Tenant, idp: string, json: Record<string, unknown>, key = t.adminKey) =>
  call('POST', `/loyalty/award-points/${idp}`, { key, json: { action_type: 'purchase', ...json } });

async function earningTenant() {
  const t = await newTenant();
  const rules = await call('PUT', '/loyalty/rules', {
    key: t.adminKey,
    json: {
      earning: {
        purchase: {
          rate: '1',
          currency: 'EUR',
          rounding: 'down',
          min_amount: '5',
          max_points: 500,
          categories: { tobacco: '0', wine: '2.5' },
        },
      },
    },
  });
  expect(rules.status, JSON.stringify(rules.body)).toBe(200);
  return t;
}

const campaign = (t: Tenant, json: Record<string, unknown>) =>
  call('POST', '/loyalty/campaigns', {
    key: t.adminKey,
    json: { name: 'Promo', starts_at: new Date(Date.now() - 60_000).toISOString(), ...json },
  });

async function started(t: Tenant, json: Record<string, unknown>) {
  const c = await campaign(t, json);
  expect(c.status, JSON.stringify(c.body)).toBe(201);
  const on = await call('PATCH', `/loyalty/campaigns/${c.body.campaign_id}`, {
    key: t.adminKey,
    json: { status: 'active' },
  });
  expect(on.status, JSON.stringify(on.body)).toBe(200);
  expect(on.body.status).toBe('active');
  return c.body.campaign_id as string;
}

describe('earning by amount', () => {
  it('earns from the amount: categories at their rates, excluded ones nothing, rounded once, capped', async () => {
    const t = await earningTenant();
    const u = await basicUser(t);
    // 12.99 of which wine 2 × 2.00 (2.5/unit) and tobacco 5.00 (excluded): 3.99 × 1 + 4 × 2.5 = 13.99 → 13
    const a = await award(t, u.idp_id, {
      amount: '12.99',
      currency: 'EUR',
      items: [
        { category: 'wine', amount: '2.00', quantity: 2 },
        { category: 'tobacco', amount_minor: 500 },
      ],
    });
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(a.body).toMatchObject({ points_awarded: 13, breakdown: { base: 13, tier_multiplier: '1', capped: false } });
    const capped = await award(t, u.idp_id, { amount_minor: 100_000, currency: 'EUR' });
    expect(capped.body).toMatchObject({ points_awarded: 500, breakdown: { capped: true } });
    // below the minimum: nothing earned, nothing written
    const small = await award(t, u.idp_id, { amount: '4.99', currency: 'EUR' });
    expect(small.status).toBe(200);
    expect(small.body).toMatchObject({ points_awarded: 0, entry_id: null, balance: 513 });
    const history = await call('GET', `/loyalty/points/${u.user_id}/history`, { key: u.key });
    expect(history.body.total).toBe(2);
  });

  it('refuses every bad amount with a 422 naming the field, and credits nothing', async () => {
    const t = await earningTenant();
    const u = await basicUser(t);
    const cases: [Record<string, unknown>, string][] = [
      [{ amount: 12.5, currency: 'EUR' }, 'amount'],
      [{ amount: '-3', currency: 'EUR' }, 'amount'],
      [{ amount: '1.234', currency: 'EUR' }, 'amount'],
      [{ amount: '12,50', currency: 'EUR' }, 'amount'],
      [{ amount_minor: 12.5, currency: 'EUR' }, 'amount_minor'],
      [{ amount: '10', currency: 'XXY' }, 'currency'],
      [{ amount: '10', currency: 'USD' }, 'currency'],
      [{ amount: '10' }, 'currency'],
      [{}, 'amount'],
      [{ amount: '10', amount_minor: 1000, currency: 'EUR' }, 'amount'],
      [{ amount: '10', currency: 'EUR', items: [{ amount: '11' }] }, 'items'],
    ];
    for (const [body, field] of cases) {
      const res = await award(t, u.idp_id, body);
      expect(res.status, `${JSON.stringify(body)} → ${JSON.stringify(res.body)}`).toBe(422);
      expect(JSON.stringify(res.body), JSON.stringify(body)).toContain(field);
    }
    // an amount on an action that earns fixed points
    const fixed = await award(t, u.idp_id, { action_type: 'review', amount: '10', currency: 'EUR' });
    expect(fixed.status).toBe(422);
    expect(JSON.stringify(fixed.body)).toContain('amount');
    const balance = await call('GET', `/loyalty/points/${u.user_id}`, { key: u.key });
    expect(balance.status).toBe(404);
  });

  it('keeps amounts to the back end: an earning rule on a self-service action is refused', async () => {
    const t = await earningTenant();
    const mixed = await call('PUT', '/loyalty/rules', {
      key: t.adminKey,
      json: { policies: { purchase: { self_service: true } } },
    });
    expect(mixed.status).toBe(422);
    expect(JSON.stringify(mixed.body)).toContain('earning.purchase');
    const direct = await call('PUT', '/loyalty/rules', {
      key: t.adminKey,
      json: { earning: { daily_login: { rate: '1', currency: 'EUR' } } },
    });
    expect(direct.status).toBe(422);
  });

  it('answers the dry run with the breakdown and writes nothing', async () => {
    const t = await earningTenant();
    const u = await basicUser(t);
    const id = await started(t, { effect: { type: 'bonus', points: 7 }, conditions: { action_types: ['purchase'] } });
    const ev = await call('POST', '/loyalty/evaluate', {
      key: t.adminKey,
      json: { user_id: u.idp_id, action_type: 'purchase', amount: '20.00', currency: 'EUR' },
    });
    expect(ev.status, JSON.stringify(ev.body)).toBe(200);
    expect(ev.body).toMatchObject({
      rule: 'by_amount',
      amount: '20.00',
      base: 20,
      total: 27,
      campaigns: [{ campaign_id: id, version: 1, points: 7 }],
    });
    expect((await call('GET', `/loyalty/points/${u.user_id}`, { key: u.key })).status).toBe(404);
    const report = await call('GET', `/loyalty/campaigns/${id}/report`, { key: t.adminKey });
    expect(report.body).toMatchObject({ points_given: 0, awards: 0 });
    // a basic key may ask for itself, not for another member
    const other = await basicUser(t);
    const mine = await call('POST', '/loyalty/evaluate', {
      key: u.key,
      json: { user_id: u.idp_id, action_type: 'daily_login' },
    });
    expect(mine.status, JSON.stringify(mine.body)).toBe(200);
    const theirs = await call('POST', '/loyalty/evaluate', {
      key: u.key,
      json: { user_id: other.idp_id, action_type: 'daily_login' },
    });
    expect(theirs.status).toBe(403);
  });
});

describe('campaigns', () => {
  it('never overspends a budget: 50 awards racing for the last 100 points give exactly 100, each refusal says why', async () => {
    const t = await newTenant();
    const id = await started(t, { effect: { type: 'bonus', points: 30 }, budget: 100 });
    const users = await Promise.all(Array.from({ length: 50 }, () => basicUser(t)));
    const answers = await Promise.all(users.map((u) => award(t, u.idp_id, {})));
    let bonus = 0;
    let refused = 0;
    for (const a of answers) {
      expect(a.status, JSON.stringify(a.body)).toBe(200);
      const line = a.body.breakdown.campaigns.find((c: { campaign_id: string }) => c.campaign_id === id);
      bonus += line.points;
      if (line.refused) {
        expect(line).toMatchObject({ points: 0, refused: 'budget_exhausted' });
        refused += 1;
      }
      // every award still earns its base
      expect(a.body.points_awarded).toBe(10 + line.points);
    }
    expect(bonus).toBe(100);
    expect(refused).toBe(46); // 3 × 30, one partial 10, 46 with nothing
    // The report's sums are written within about a second.
    const report = await until(
      'the report',
      () => call('GET', `/loyalty/campaigns/${id}/report`, { key: t.adminKey }),
      (r) => r.body.members_reached === 4,
      5000,
    );
    expect(report.body).toMatchObject({ points_given: 100, budget_left: 0, awards: 4, members_reached: 4 });
    const events = await call('GET', '/api/events?type=campaign.budget_exhausted', { key: t.adminKey });
    expect(events.body.events).toHaveLength(1);
  });

  it('reversing an award takes its bonus back and returns it to the budget; a repeat returns nothing more', async () => {
    const t = await newTenant();
    const id = await started(t, { effect: { type: 'bonus', points: 40 }, budget: 50 });
    const u = await basicUser(t);
    const a = await award(t, u.idp_id, { operation_id: 'order-1' });
    expect(a.body.points_awarded).toBe(50);
    const again = await award(t, u.idp_id, { operation_id: 'order-1' });
    expect(again.body).toMatchObject({ duplicate: true, points_awarded: 50 });
    let c = await call('GET', `/loyalty/campaigns/${id}`, { key: t.adminKey });
    expect(c.body.budget_left).toBe(10);
    for (let i = 0; i < 2; i += 1) {
      const r = await call('POST', '/loyalty/reverse', {
        key: t.adminKey,
        json: { operation_id: 'order-1', user_id: u.user_id, reason: 'returned' },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.points_reversed).toBe(50);
    }
    c = await call('GET', `/loyalty/campaigns/${id}`, { key: t.adminKey });
    expect(c.body.budget_left).toBe(50);
    const report = await until(
      'the report',
      () => call('GET', `/loyalty/campaigns/${id}/report`, { key: t.adminKey }),
      (r) => r.body.points_returned === 40,
      5000,
    );
    expect(report.body).toMatchObject({ points_given: 0, points_returned: 40, awards: 1, members_reached: 1 });
  });

  it('versions edits of a started campaign, and each award names the version that gave its points', async () => {
    const t = await newTenant();
    const id = await started(t, { effect: { type: 'bonus', points: 5 } });
    const u = await basicUser(t);
    const first = await award(t, u.idp_id, {});
    expect(first.body.breakdown.campaigns).toEqual([{ campaign_id: id, version: 1, points: 5 }]);
    const edit = await call('PATCH', `/loyalty/campaigns/${id}`, {
      key: t.adminKey,
      json: { effect: { type: 'multiplier', factor: '3' } },
    });
    expect(edit.status, JSON.stringify(edit.body)).toBe(200);
    expect(edit.body.version).toBe(2);
    const second = await award(t, u.idp_id, {});
    expect(second.body.breakdown.campaigns).toEqual([{ campaign_id: id, version: 2, points: 20 }]);
    expect(second.body.points_awarded).toBe(30);
    const got = await call('GET', `/loyalty/campaigns/${id}`, { key: t.adminKey });
    expect(got.body.versions).toHaveLength(1);
    expect(got.body.versions[0]).toMatchObject({ version: 1, campaign: { effect: { type: 'bonus', points: 5 } } });
  });

  it('moves through its states; a paused one gives nothing; an ended one changes no more; only a draft is deleted', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const future = await campaign(t, {
      effect: { type: 'bonus', points: 5 },
      starts_at: new Date(Date.now() + 86_400_000).toISOString(),
    });
    const fid = future.body.campaign_id;
    expect(future.body.status).toBe('draft');
    const sched = await call('PATCH', `/loyalty/campaigns/${fid}`, { key: t.adminKey, json: { status: 'active' } });
    expect(sched.body.status).toBe('scheduled');
    expect((await award(t, u.idp_id, {})).body.points_awarded).toBe(10);
    const id = await started(t, { effect: { type: 'bonus', points: 5 } });
    expect((await award(t, u.idp_id, {})).body.points_awarded).toBe(15);
    await call('PATCH', `/loyalty/campaigns/${id}`, { key: t.adminKey, json: { status: 'paused' } });
    expect((await award(t, u.idp_id, {})).body.points_awarded).toBe(10);
    const end = await call('PATCH', `/loyalty/campaigns/${id}`, { key: t.adminKey, json: { status: 'ended' } });
    expect(end.body.status).toBe('ended');
    const after = await call('PATCH', `/loyalty/campaigns/${id}`, { key: t.adminKey, json: { status: 'active' } });
    expect(after.status).toBe(409);
    expect((await call('DELETE', `/loyalty/campaigns/${id}`, { key: t.adminKey })).status).toBe(409);
    const draft = await campaign(t, { effect: { type: 'bonus', points: 1 } });
    expect((await call('DELETE', `/loyalty/campaigns/${draft.body.campaign_id}`, { key: t.adminKey })).status).toBe(
      200,
    );
    const events = await call('GET', '/api/events?type=campaign.status_changed', { key: t.adminKey });
    expect(events.body.events.map((e: { data: { to_status: string } }) => e.data.to_status).sort()).toEqual(
      ['active', 'ended', 'paused', 'scheduled'].sort(),
    );
  });

  it('stacks by priority: an exclusive campaign first in line applies alone, otherwise it gives way', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const a = await started(t, { effect: { type: 'bonus', points: 1 }, priority: 1 });
    const b = await started(t, { effect: { type: 'bonus', points: 2 }, priority: 2 });
    const x = await started(t, { effect: { type: 'bonus', points: 100 }, priority: 0, stacking: 'exclusive' });
    let r = await award(t, u.idp_id, {});
    expect(r.body.points_awarded).toBe(13);
    const ev = await call('POST', '/loyalty/evaluate', {
      key: t.adminKey,
      json: { user_id: u.idp_id, action_type: 'purchase' },
    });
    expect(ev.body.not_applied).toContainEqual({ campaign_id: x, reason: 'exclusive' });
    await call('PATCH', `/loyalty/campaigns/${x}`, { key: t.adminKey, json: { priority: 5 } });
    r = await award(t, u.idp_id, {});
    expect(r.body.points_awarded).toBe(110);
    expect(r.body.breakdown.campaigns.map((c: { campaign_id: string }) => c.campaign_id)).toEqual([x]);
    expect([a, b]).toHaveLength(2);
  });

  it('lets an exclusive campaign whose member limit is used up give way to the stackable ones', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const x = await started(t, {
      effect: { type: 'bonus', points: 50 },
      stacking: 'exclusive',
      priority: 10,
      limit_per_member: { max: 1, per: 'ever' },
    });
    await started(t, { effect: { type: 'bonus', points: 3 } });
    expect((await award(t, u.idp_id, {})).body.points_awarded).toBe(60);
    expect((await award(t, u.idp_id, {})).body.points_awarded).toBe(13);
    const ev = await call('POST', '/loyalty/evaluate', {
      key: t.adminKey,
      json: { user_id: u.idp_id, action_type: 'purchase' },
    });
    expect(ev.body.not_applied).toContainEqual({ campaign_id: x, reason: 'limit_reached' });
  });

  it('meets a category condition only with a paid line of the category', async () => {
    const t = await earningTenant();
    const u = await basicUser(t);
    await started(t, {
      effect: { type: 'bonus', points: 20 },
      conditions: { action_types: ['purchase'], categories: ['wine'] },
    });
    const free = await award(t, u.idp_id, {
      amount: '10.00',
      currency: 'EUR',
      items: [{ category: 'wine', amount: '0' }],
    });
    expect(free.body.points_awarded).toBe(10);
    const paid = await award(t, u.idp_id, {
      amount: '10.00',
      currency: 'EUR',
      items: [{ category: 'wine', amount: '2.00' }],
    });
    expect(paid.body.points_awarded).toBe(13 + 20); // 8 × 1 + 2 × 2.5, and the bonus
  });

  it('holds a member to the per-member limit and gives the n-th award bonus once', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    await started(t, { effect: { type: 'bonus', points: 3 }, limit_per_member: { max: 2, per: 'day' } });
    await started(t, { effect: { type: 'bonus', points: 50 }, conditions: { action_types: ['purchase'], nth: 1 } });
    const answers = [];
    for (let i = 0; i < 4; i += 1) answers.push((await award(t, u.idp_id, {})).body.points_awarded);
    expect(answers).toEqual([63, 13, 10, 10]);
  });

  it("refuses a limited action past its limit and leaves the campaign's budget as it was", async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const id = await started(t, { effect: { type: 'bonus', points: 10 }, budget: 100 });
    const first = await award(t, u.idp_id, { action_type: 'daily_login' }, u.key);
    expect(first.body.points_awarded).toBe(15);
    const again = await Promise.all(
      Array.from({ length: 20 }, () => award(t, u.idp_id, { action_type: 'daily_login' }, u.key)),
    );
    expect(again.map((r) => r.status)).toEqual(Array(20).fill(409));
    const c = await call('GET', `/loyalty/campaigns/${id}`, { key: t.adminKey });
    expect(c.body.budget_left).toBe(90);
  });

  it('is out of reach of a basic key and of another organization', async () => {
    const t = await newTenant();
    const other = await newTenant();
    const u = await basicUser(t);
    const id = await started(t, { effect: { type: 'bonus', points: 3 } });
    expect((await campaign(t, { effect: { type: 'bonus', points: 1 } }).then(() => 0)) === 0).toBe(true);
    expect(
      (
        await call('POST', '/loyalty/campaigns', {
          key: u.key,
          json: { name: 'x', starts_at: new Date().toISOString(), effect: { type: 'bonus', points: 1 } },
        })
      ).status,
    ).toBe(403);
    expect((await call('GET', '/loyalty/campaigns', { key: u.key })).status).toBe(403);
    expect((await call('PATCH', `/loyalty/campaigns/${id}`, { key: u.key, json: { status: 'ended' } })).status).toBe(
      403,
    );
    expect((await call('GET', `/loyalty/campaigns/${id}`, { key: other.adminKey })).status).toBe(404);
    expect(
      (await call('PATCH', `/loyalty/campaigns/${id}`, { key: other.adminKey, json: { status: 'ended' } })).status,
    ).toBe(404);
    expect((await call('GET', `/loyalty/campaigns/${id}/report`, { key: other.adminKey })).status).toBe(404);
    // another organization's awards never see it
    const stranger = await basicUser(other);
    expect((await award(other, stranger.idp_id, {})).body.points_awarded).toBe(10);
  });
});
