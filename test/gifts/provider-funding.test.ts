/**
 * Gift funding over HTTP, on the sandbox provider (its account is the organization's own, set by
 * its admin): the balance read by admins only; a redemption the account cannot pay for refused
 * at once (409, nothing held, nothing recorded); two redemptions racing for the last funds never
 * both delivered; `gifts.low_balance` once per fall under the threshold, however many reads see
 * it; denominations (an amount outside the list or range is 400 naming `amount`, holding nothing);
 * a top-up to a number the provider places with another operator refused before anything is held.
 */
import { describe, expect, it } from 'vitest';

import { basicUser, call, newTenant, type Tenant, until } from '../helpers/api.ts';

type User = Awaited<ReturnType<typeof basicUser>>;

const ok = <T extends { status: number; body: unknown }>(what: string, res: T, status = 200): T => {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(status);
  return res;
};

/** A tenant whose `grant` gives 1000 points, with one member holding them. */
async function funded(): Promise<{ t: Tenant; ana: User }> {
  const t = await newTenant();
  ok('rules', await call('PUT', '/loyalty/rules', { key: t.adminKey, json: { actions: { grant: 1000 } } }));
  const ana = await basicUser(t);
  ok(
    'grant',
    await call('POST', `/loyalty/award-points/${ana.user_id}`, { key: t.adminKey, json: { action_type: 'grant' } }),
  );
  return { t, ana };
}

const card = {
  gift_name: 'Books card',
  gift_type: 'electronic_pins',
  country: 'US',
  supplier: 'Books',
  denominations: { type: 'fixed', currency: 'usd', amounts: [10, 25] },
  points_per_unit: 10,
};
const gift = async (t: Tenant, g: object) =>
  ok('gift', await call('POST', '/api/gifts/gifts', { key: t.adminKey, json: g }), 201).body.gift.id as string;
const pointsOf = async (t: Tenant, u: User) =>
  ok('balance', await call('GET', `/loyalty/points/${u.user_id}`, { key: t.adminKey })).body.points as number;
const redemptionsOf = async (t: Tenant) =>
  ok('redemptions', await call('GET', '/api/gifts/redemptions?limit=100', { key: t.adminKey })).body.redemptions as {
    status: string;
  }[];
const setSandbox = (t: Tenant, balance: number, key = t.adminKey) =>
  call('PUT', '/api/gifts/provider/sandbox-balance', { key, json: { balance, currency: 'USD' } });
const lowEvents = async (t: Tenant) =>
  ok('events', await call('GET', '/api/events?type=gifts.low_balance&limit=100', { key: t.adminKey })).body.events as {
    data: Record<string, unknown>;
  }[];

describe('gift funding (sandbox provider)', () => {
  it('the balance is read and the sandbox account set by admins only: a basic key and another organization admin get 403 and change nothing', async () => {
    const { t, ana } = await funded();
    const read = ok('balance', await call('GET', '/api/gifts/provider/balance', { key: t.adminKey }));
    expect(read.body).toMatchObject({
      success: true,
      provider: 'sandbox',
      balance: 1_000_000,
      currency: 'USD',
      low_balance_threshold: null,
      low: false,
    });
    const other = await newTenant();
    const q = `?organization_id=${t.organization_id}`;
    for (const [key, what] of [
      [ana.key, 'basic key'],
      [other.adminKey, "another organization's admin"],
    ] as const) {
      const get = await call('GET', `/api/gifts/provider/balance${q}`, { key });
      expect(get.status, what).toBe(403);
      expect(get.body.success).toBe(false);
      const put = await call('PUT', '/api/gifts/provider/sandbox-balance', {
        key,
        json: { organization_id: t.organization_id, balance: 0 },
      });
      expect(put.status, what).toBe(403);
      const settings = await call('PUT', '/api/gifts/settings', {
        key,
        json: { organization_id: t.organization_id, low_balance_threshold: 5, catalogue_sync: null },
      });
      expect(settings.status, what).toBe(403);
      expect((await call('GET', `/api/gifts/settings${q}`, { key })).status, what).toBe(403);
    }
    expect((await call('GET', '/api/gifts/provider/balance', { key: t.adminKey })).body.balance).toBe(1_000_000);
    expect(ok('settings', await call('GET', '/api/gifts/settings', { key: t.adminKey })).body).toMatchObject({
      low_balance_threshold: null,
      catalogue_sync: null,
      last_sync: null,
    });
    // Bad input: 400 naming the field, nothing set.
    const bad = await setSandbox(t, -1);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^balance/);
    const badCurrency = await call('PUT', '/api/gifts/provider/sandbox-balance', {
      key: t.adminKey,
      json: { balance: 5, currency: 'dollars' },
    });
    expect(badCurrency.status).toBe(400);
    expect(badCurrency.body.error).toMatch(/^currency/);
    expect((await call('GET', '/api/gifts/provider/balance', { key: t.adminKey })).body.balance).toBe(1_000_000);
  });

  it('an unfunded account refuses a redemption at once: 409, nothing held, nothing recorded; a funded one delivers and pays from it', async () => {
    const { t, ana } = await funded();
    const id = await gift(t, card);
    const set = ok('sandbox', await setSandbox(t, 15));
    expect(set.body).toMatchObject({ balance: 15, currency: 'USD' });
    const audit = ok('audit', await call('GET', '/api/audit?action=gift_sandbox_balance.set', { key: t.adminKey }));
    expect(audit.body.records).toHaveLength(1);

    const refused = await call('POST', `/api/gifts/gifts/${id}/redeem`, {
      key: ana.key,
      json: { user_id: ana.user_id, amount: 25 },
    });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({
      success: false,
      error: expect.stringMatching(/does not cover it \(nothing was held\)/),
    });
    expect(refused.body.error).not.toMatch(/15/); // the account's figure stays with admins
    expect(await pointsOf(t, ana)).toBe(1000);
    expect(await redemptionsOf(t)).toHaveLength(0);

    const paid = ok(
      'redeem 10',
      await call('POST', `/api/gifts/gifts/${id}/redeem`, { key: ana.key, json: { user_id: ana.user_id, amount: 10 } }),
    );
    expect(paid.body.redemption).toMatchObject({ status: 'completed', points_spent: 100, amount: 10, currency: 'USD' });
    expect(await pointsOf(t, ana)).toBe(900);
    expect((await call('GET', '/api/gifts/provider/balance', { key: t.adminKey })).body.balance).toBe(5);
  });

  it('two redemptions racing for the last funds: never both delivered, the account never below zero, every refused one holds nothing', async () => {
    const { t, ana } = await funded();
    const id = await gift(t, card);
    ok('sandbox', await setSandbox(t, 10));
    const answers = await Promise.all(
      [1, 2, 3].map(() =>
        call('POST', `/api/gifts/gifts/${id}/redeem`, { key: ana.key, json: { user_id: ana.user_id, amount: 10 } }),
      ),
    );
    const completed = answers.filter((a) => a.status === 200 && a.body.redemption.status === 'completed');
    expect(completed).toHaveLength(1);
    for (const a of answers.filter((x) => !completed.includes(x))) {
      // Refused before the hold (409), or by the provider itself after it (refunded): never kept.
      if (a.status === 409) expect(a.body.error).toMatch(/does not cover it/);
      else expect(a.body.redemption).toMatchObject({ status: 'refunded', points_refunded: 100 });
    }
    expect((await call('GET', '/api/gifts/provider/balance', { key: t.adminKey })).body.balance).toBe(0);
    expect(await pointsOf(t, ana)).toBe(900);
  });

  it('gifts.low_balance is recorded once per fall under the threshold (five reads at once: one event), and again after the balance rose above it', async () => {
    const { t } = await funded();
    const put = ok(
      'settings',
      await call('PUT', '/api/gifts/settings', {
        key: t.adminKey,
        json: { low_balance_threshold: 100, catalogue_sync: null },
      }),
    );
    expect(put.body).toMatchObject({ organization_id: t.organization_id, low_balance_threshold: 100 });
    const audited = ok('audit', await call('GET', '/api/audit?action=gift_settings.update', { key: t.adminKey }));
    expect(audited.body.records).toHaveLength(1);
    expect(await lowEvents(t)).toHaveLength(0);

    ok('sandbox', await setSandbox(t, 50));
    const reads = await Promise.all(
      [1, 2, 3, 4, 5].map(() => call('GET', '/api/gifts/provider/balance', { key: t.adminKey })),
    );
    for (const r of reads) expect(r.body).toMatchObject({ balance: 50, low: true, low_balance_threshold: 100 });
    const first = await until(
      'one low-balance event',
      () => lowEvents(t),
      (e) => e.length >= 1,
      20_000,
    );
    expect(first).toHaveLength(1);
    expect(first[0].data).toEqual({ provider: 'sandbox', balance: 50, currency: 'USD', threshold: 100 });

    ok('sandbox', await setSandbox(t, 500)); // back above: the next fall alerts again
    expect((await call('GET', '/api/gifts/provider/balance', { key: t.adminKey })).body.low).toBe(false);
    ok('sandbox', await setSandbox(t, 20));
    ok('sandbox', await setSandbox(t, 10));
    const both = await until(
      'a second low-balance event',
      () => lowEvents(t),
      (e) => e.length >= 2,
      20_000,
    );
    expect(both.map((e) => e.data.balance).sort()).toEqual([20, 50]);
    // Bad input changes nothing.
    const bad = await call('PUT', '/api/gifts/settings', {
      key: t.adminKey,
      json: { low_balance_threshold: 'lots', catalogue_sync: null },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^low_balance_threshold/);
    expect((await call('GET', '/api/gifts/settings', { key: t.adminKey })).body.low_balance_threshold).toBe(100);
  });
});

describe('denominations and operators', () => {
  it('an amount outside the range, not in the list, missing, or given to a single-amount gift is 400 naming amount and holds nothing; within it costs ceil(amount × points_per_unit)', async () => {
    const { t, ana } = await funded();
    const range = await gift(t, {
      gift_name: 'Music MXN',
      gift_type: 'electronic_pins',
      country: 'MX',
      supplier: 'Music',
      denominations: { type: 'range', currency: 'MXN', min: 100, max: 2000 },
      points_per_unit: 0.25,
    });
    const fixed = await gift(t, card);
    const single = await gift(t, {
      gift_name: 'Steam 20',
      gift_type: 'electronic_pins',
      supplier: 'Steam',
      electronic_pin_amount: 20,
      points_value: 200,
    });
    const cases: [string, Record<string, unknown>, RegExp][] = [
      [range, { amount: 50 }, /^amount: 50 is outside this gift's range: from 100 to 2000 MXN/],
      [range, { amount: 2001 }, /^amount: .*outside/],
      [range, {}, /^amount: required: from 100 to 2000 MXN/],
      [fixed, { amount: 11 }, /^amount: 11 is not a denomination of this gift: one of 10, 25 USD/],
      [single, { amount: 20 }, /^amount: .*single amount/],
      [range, { amount: 'ten' }, /^amount/],
    ];
    for (const [g, extra, error] of cases) {
      const res = await call('POST', `/api/gifts/gifts/${g}/redeem`, {
        key: ana.key,
        json: { user_id: ana.user_id, ...extra },
      });
      expect(res.status, JSON.stringify(extra)).toBe(400);
      expect(res.body.error).toMatch(error);
    }
    expect(await pointsOf(t, ana)).toBe(1000);
    expect(await redemptionsOf(t)).toHaveLength(0);

    const r = ok(
      'redeem',
      await call('POST', `/api/gifts/gifts/${range}/redeem`, {
        key: ana.key,
        json: { user_id: ana.user_id, amount: 101 },
      }),
    );
    expect(r.body.redemption).toMatchObject({ status: 'completed', points_spent: 26, amount: 101, currency: 'MXN' });

    // A gift's denominations are checked when it is written too.
    const badGift = await call('POST', '/api/gifts/gifts', {
      key: t.adminKey,
      json: { ...card, denominations: { type: 'range', currency: 'USD', min: 50, max: 10 } },
    });
    expect(badGift.status).toBe(400);
    expect(badGift.body.error).toMatch(/^denominations\.max: min must not exceed max/);
    const noPrice = await call('POST', '/api/gifts/gifts', {
      key: t.adminKey,
      json: { ...card, points_per_unit: undefined },
    });
    expect(noPrice.status).toBe(400);
    expect(noPrice.body.error).toMatch(/^points_per_unit: required with denominations/);
  });

  it('a top-up to a number the provider places with another operator is 400 naming phone_number before anything is held; its own operator delivers', async () => {
    const { t, ana } = await funded();
    const id = await gift(t, {
      gift_name: 'Telcel 100',
      gift_type: 'mobile_top-ups',
      country: 'MX',
      telco_supplier: 'Telcel',
      operator_id: 'telcel-mx',
      recharge_amount: 100,
      points_value: 50,
    });
    // The sandbox places numbers ending in 0002 with "Sandbox Other Mobile".
    const other = await call('POST', `/api/gifts/gifts/${id}/redeem`, {
      key: ana.key,
      json: { user_id: ana.user_id, phone_number: '+525512340002' },
    });
    expect(other.status).toBe(400);
    expect(other.body.error).toMatch(/^phone_number: .*another operator than this gift's \(Telcel\)/);
    expect(other.body.error).not.toContain('Sandbox Other Mobile');
    // A member who cannot pay is refused on points before the provider is asked anything.
    const poor = await basicUser(t);
    const short = await call('POST', `/api/gifts/gifts/${id}/redeem`, {
      key: poor.key,
      json: { user_id: poor.user_id, phone_number: '+525512340002' },
    });
    expect(short.status).toBe(409);
    expect(short.body.error).toMatch(/^Not enough points: balance 0, needed 50/);
    expect(await pointsOf(t, ana)).toBe(1000);
    expect(await redemptionsOf(t)).toHaveLength(0);
    const own = ok(
      'redeem',
      await call('POST', `/api/gifts/gifts/${id}/redeem`, {
        key: ana.key,
        json: { user_id: ana.user_id, phone_number: '+525512345678' },
      }),
    );
    expect(own.body.redemption).toMatchObject({ status: 'completed', points_spent: 50 });
  });
});
