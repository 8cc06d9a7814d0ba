import { describe, expect, it } from 'vitest';

import { api, basicUser, call, newTenant, type Tenant } from '../helpers/api.ts';

const topUp = {
  gift_name: 'Telcel 100 MXN',
  gift_type: 'mobile_top-ups',
  country: 'mx',
  telco_supplier: 'Telcel',
  recharge_amount: 100,
  points_value: 500,
  url_photo: 'https://cdn.example.com/telcel.png',
};
const pin = {
  gift_name: 'Steam 20 USD',
  gift_type: 'electronic_pins',
  country: 'US',
  supplier: 'Steam',
  electronic_pin_amount: 20,
  points_value: 2000,
};
/** A number the sandbox provider serves at once (0000 and 0001 endings have their own rules). */
const PHONE = '+5215512345678';
const bill = { gift_name: 'Electricity bill', gift_type: 'service_payments', country: 'CO', service_provider: 'Enel' };

async function give(t: Tenant, user: string, action: string, times: number) {
  for (let i = 0; i < times; i += 1)
    await call('POST', `/loyalty/award-points/${user}`, { key: t.adminKey, json: { action_type: action } });
}

describe('gift catalogue', () => {
  it('creates, reads, replaces and deletes gifts of each type', async () => {
    const t = await newTenant();
    const created = await api('post', '/api/gifts/gifts', { key: t.adminKey, json: topUp });
    expect(created.status).toBe(201);
    expect(created.body.success).toBe(true);
    expect(created.body.gift).toMatchObject({ ...topUp, country: 'MX', organization_id: t.organization_id });
    const id = created.body.gift.id;
    const read = await api('get', '/api/gifts/gifts/{gift_id}', { key: t.adminKey, params: { gift_id: id } });
    expect(read.body.gift).toEqual(created.body.gift);
    for (const g of [pin, bill])
      expect((await call('POST', '/api/gifts/gifts', { key: t.adminKey, json: g })).status).toBe(201);

    const replaced = await api('put', '/api/gifts/gifts/{gift_id}', {
      key: t.adminKey,
      params: { gift_id: id },
      json: { ...pin, gift_name: 'Now a PIN' },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.gift).toMatchObject({
      id,
      gift_type: 'electronic_pins',
      gift_name: 'Now a PIN',
      supplier: 'Steam',
    });
    expect(replaced.body.gift.telco_supplier).toBeUndefined();
    expect(Date.parse(replaced.body.gift.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.body.gift.updated_at));

    const del = await api('delete', '/api/gifts/gifts/{gift_id}', { key: t.adminKey, params: { gift_id: id } });
    expect(del.body).toMatchObject({ success: true });
    const gone = await api<'/api/gifts/gifts/{gift_id}', 'get', 404>('get', '/api/gifts/gifts/{gift_id}', {
      key: t.adminKey,
      params: { gift_id: id },
    });
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ success: false, error: `Gift not found: ${id}` });
    expect((await call('DELETE', `/api/gifts/gifts/${id}`, { key: t.adminKey })).status).toBe(404);
    expect((await call('PUT', `/api/gifts/gifts/${id}`, { key: t.adminKey, json: pin })).status).toBe(404);
  });

  it.each([
    [{ ...topUp, gift_type: 'vouchers' }, /^gift_type/],
    [
      { gift_name: 'x', gift_type: 'mobile_top-ups', telco_supplier: 'T', points_value: 5 },
      /^recharge_amount: required for gift_type mobile_top-ups/,
    ],
    [
      { gift_name: 'x', gift_type: 'electronic_pins', supplier: 'S', electronic_pin_amount: 5 },
      /^points_value: required/,
    ],
    [{ gift_name: 'x', gift_type: 'service_payments' }, /^service_provider: required/],
    [{ ...topUp, recharge_amount: 0 }, /^recharge_amount/],
    [{ ...topUp, points_value: -3 }, /^points_value/],
    [{ ...topUp, points_value: 2.5 }, /^points_value/],
    [{ ...topUp, country: 'XX' }, /^country: must be an ISO 3166-1/],
    [{ ...topUp, country: 'Mexico' }, /^country/],
    [{ ...topUp, url_photo: 'javascript:alert(1)' }, /^url_photo/],
    [{ ...topUp, recharge_amount: '100' }, /^recharge_amount/],
    [{ ...topUp, gift_name: '' }, /^gift_name/],
  ])('refuses invalid gifts with 400 {success:false, error} (%#)', async (body, message) => {
    const t = await newTenant();
    const res = await call('POST', '/api/gifts/gifts', { key: t.adminKey, json: body });
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
    expect(res.body.error).toMatch(message);
    expect((await call('GET', '/api/gifts/gifts', { key: t.adminKey })).body.total).toBe(0);
  });

  it('answers malformed JSON and auth failures in the gift error shape', async () => {
    const t = await newTenant();
    const malformed = await call('POST', '/api/gifts/gifts', {
      key: t.adminKey,
      body: '{"gift_name":',
      contentType: 'application/json',
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body.success).toBe(false);
    const anonymous = await call('GET', '/api/gifts/gifts');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ success: false, error: 'Not authenticated' });
    const u = await basicUser(t);
    const basic = await call('POST', '/api/gifts/gifts', { key: u.key, json: topUp });
    expect(basic.status).toBe(403);
    expect(basic.body.success).toBe(false);
    expect((await call('GET', '/api/gifts/gifts', { key: u.key })).status).toBe(200);
  });

  it('lists with gift_type and country filters and pages', async () => {
    const t = await newTenant();
    for (const g of [
      topUp,
      { ...topUp, country: 'CO' },
      pin,
      { ...pin, gift_name: 'Steam 50', points_value: 5000 },
      bill,
    ]) {
      await call('POST', '/api/gifts/gifts', { key: t.adminKey, json: g });
    }
    const all = await call('GET', '/api/gifts/gifts', { key: t.adminKey });
    expect(all.body.total).toBe(5);
    const pins = await call('GET', '/api/gifts/gifts?gift_type=electronic_pins', { key: t.adminKey });
    expect(pins.body.gifts.map((g: any) => g.gift_type)).toEqual(['electronic_pins', 'electronic_pins']);
    const co = await call('GET', '/api/gifts/gifts?country=co', { key: t.adminKey });
    expect(co.body.gifts.map((g: any) => g.gift_name).sort()).toEqual(['Electricity bill', 'Telcel 100 MXN']);
    const page2 = await call('GET', '/api/gifts/gifts?limit=2&page=2', { key: t.adminKey });
    expect(page2.body).toMatchObject({ page: 2, limit: 2, total: 5, has_more: true });
    expect(page2.body.gifts).toHaveLength(2);
    const ids = new Set<string>();
    for (let p = 1; p <= 3; p += 1)
      for (const g of (await call('GET', `/api/gifts/gifts?limit=2&page=${p}`, { key: t.adminKey })).body.gifts)
        ids.add(g.id);
    expect(ids.size).toBe(5);
    expect((await call('GET', '/api/gifts/gifts?gift_type=cash', { key: t.adminKey })).status).toBe(400);
  });
});

describe('redeeming gifts', () => {
  it('debits points_value, records the redemption, and refuses a short balance with 409 changing nothing', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    await call('PUT', '/loyalty/rules', { key: t.adminKey, json: { actions: { big_purchase: 300 } } });
    const g = (await call('POST', '/api/gifts/gifts', { key: t.adminKey, json: topUp })).body.gift;
    const poor = await call('POST', `/api/gifts/gifts/${g.id}/redeem`, {
      key: u.key,
      json: { user_id: u.user_id, phone_number: PHONE },
    });
    expect(poor.status).toBe(409);
    expect(poor.body).toMatchObject({ success: false, error: 'Not enough points: balance 0, needed 500' });
    await give(t, u.idp_id, 'big_purchase', 2);
    const ok = await call('POST', `/api/gifts/gifts/${g.id}/redeem`, {
      key: u.key,
      json: { user_id: u.idp_id, organization_id: t.organization_id, phone_number: PHONE },
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      success: true,
      duplicate: false,
      redemption: { gift_id: g.id, points_spent: 500, balance_after: 100, status: 'completed', user_id: u.user_id },
    });
    const short = await call('POST', `/api/gifts/gifts/${g.id}/redeem`, {
      key: u.key,
      json: { user_id: u.user_id, phone_number: PHONE },
    });
    expect(short.status).toBe(409);
    const history = await call('GET', `/loyalty/points/${u.user_id}/history`, { key: u.key });
    expect(history.body.points).toBe(100);
    expect(history.body.entries[0]).toMatchObject({ reason: 'redemption', amount: -500, balance_after: 100 });
    expect(history.body.total).toBe(3);
  });

  it('charges a retried redemption with the same idempotency key once', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    await call('PUT', '/loyalty/rules', { key: t.adminKey, json: { actions: { big_purchase: 1000 } } });
    await give(t, u.idp_id, 'big_purchase', 3);
    const g = (await call('POST', '/api/gifts/gifts', { key: t.adminKey, json: topUp })).body.gift;
    const redeem = () =>
      call('POST', `/api/gifts/gifts/${g.id}/redeem`, {
        key: u.key,
        json: { user_id: u.user_id, phone_number: PHONE },
        headers: { 'idempotency-key': 'order-77' },
      });
    const results = await Promise.all([redeem(), redeem(), redeem()]);
    expect(new Set(results.map((r) => r.body.redemption.id)).size).toBe(1);
    expect(results.filter((r) => r.body.duplicate === false)).toHaveLength(1);
    expect((await call('GET', `/loyalty/points/${u.user_id}`, { key: u.key })).body.points).toBe(2500);
    const other = (await call('POST', '/api/gifts/gifts', { key: t.adminKey, json: pin })).body.gift;
    const reused = await call('POST', `/api/gifts/gifts/${other.id}/redeem`, {
      key: u.key,
      json: { user_id: u.user_id, idempotency_key: 'order-77' },
    });
    expect(reused.status).toBe(409);
  });

  it('never overdraws under concurrent redemptions', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    await call('PUT', '/loyalty/rules', { key: t.adminKey, json: { actions: { big_purchase: 1000 } } });
    await give(t, u.idp_id, 'big_purchase', 2); // 2000 points, each redemption costs 500
    const g = (await call('POST', '/api/gifts/gifts', { key: t.adminKey, json: topUp })).body.gift;
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        call('POST', `/api/gifts/gifts/${g.id}/redeem`, {
          key: u.key,
          json: { user_id: u.user_id, phone_number: PHONE },
        }),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(4);
    expect(results.filter((r) => r.status === 409)).toHaveLength(6);
    const history = await call('GET', `/loyalty/points/${u.user_id}/history?limit=100`, { key: u.key });
    expect(history.body.points).toBe(0);
    expect(history.body.entries.reduce((s: number, e: any) => s + e.amount, 0)).toBe(0);
    expect(Math.min(...history.body.entries.map((e: any) => e.balance_after))).toBeGreaterThanOrEqual(0);
  });

  it("refuses a gift without points_value, another user's points, and another organization", async () => {
    const t = await newTenant();
    const a = await basicUser(t);
    const b = await basicUser(t);
    const billGift = (await call('POST', '/api/gifts/gifts', { key: t.adminKey, json: bill })).body.gift;
    const noPrice = await call('POST', `/api/gifts/gifts/${billGift.id}/redeem`, {
      key: a.key,
      json: { user_id: a.user_id },
    });
    expect(noPrice.status).toBe(409);
    expect(noPrice.body.error).toMatch(/no points_value/);
    const g = (await call('POST', '/api/gifts/gifts', { key: t.adminKey, json: topUp })).body.gift;
    expect(
      (
        await call('POST', `/api/gifts/gifts/${g.id}/redeem`, {
          key: a.key,
          json: { user_id: b.user_id, phone_number: PHONE },
        })
      ).status,
    ).toBe(403);
    const other = await newTenant();
    const q = `organization_id=${t.organization_id}`;
    for (const [method, path, json] of [
      ['GET', `/api/gifts/gifts?${q}`, undefined],
      ['GET', `/api/gifts/gifts/${g.id}?${q}`, undefined],
      ['POST', `/api/gifts/gifts?${q}`, topUp],
      ['PUT', `/api/gifts/gifts/${g.id}?${q}`, topUp],
      ['DELETE', `/api/gifts/gifts/${g.id}?${q}`, undefined],
      [
        'POST',
        `/api/gifts/gifts/${g.id}/redeem`,
        { user_id: a.user_id, organization_id: t.organization_id, phone_number: PHONE },
      ],
    ] as const) {
      const res = await call(method, path, { key: other.adminKey, json });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.success).toBe(false);
    }
    expect((await call('GET', `/api/gifts/gifts/${g.id}`, { key: other.adminKey })).status).toBe(404);
  });
});
