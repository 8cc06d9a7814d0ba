/**
 * Redemption as a workflow on the suite's platform, with the sandbox gift provider (the default):
 * its three outcomes, the PIN shown to its owner only, the redemption reads and their
 * permissions, idempotent retries, and refusals that change nothing.
 */
import { describe, expect, it } from 'vitest';

import { basicUser, call, newTenant, type Tenant } from '../helpers/api.ts';
import { replayRedemption } from '../helpers/replay.ts';
import { useSuiteClients } from '../helpers/runtime.ts';

const suite = useSuiteClients();

const topUp = {
  gift_name: 'Telcel 100 MXN',
  gift_type: 'mobile_top-ups',
  country: 'MX',
  telco_supplier: 'Telcel',
  recharge_amount: 100,
  points_value: 500,
};
const pin = {
  gift_name: 'Steam 20 USD',
  gift_type: 'electronic_pins',
  country: 'US',
  supplier: 'Steam',
  electronic_pin_amount: 20,
  points_value: 300,
};
const bill = {
  gift_name: 'Electricity bill',
  gift_type: 'service_payments',
  country: 'CO',
  service_provider: 'Enel',
  points_value: 200,
};

async function funded(points = 1000) {
  const t = await newTenant();
  const u = await basicUser(t);
  await call('PUT', '/loyalty/rules', { key: t.adminKey, json: { actions: { grant: points } } });
  expect(
    (await call('POST', `/loyalty/award-points/${u.user_id}`, { key: t.adminKey, json: { action_type: 'grant' } }))
      .status,
  ).toBe(200);
  return { t, u };
}

const gift = async (t: Tenant, g: object) =>
  (await call('POST', '/api/gifts/gifts', { key: t.adminKey, json: g })).body.gift.id as string;
const redeem = (key: string, giftId: string, json: object, headers?: Record<string, string>) =>
  call('POST', `/api/gifts/gifts/${giftId}/redeem`, { key, json, headers });
const history = async (t: Tenant, user_id: string) =>
  (await call('GET', `/loyalty/points/${user_id}/history?limit=100`, { key: t.adminKey })).body;

describe('redemption with the sandbox provider', () => {
  it('completes a top-up: points held once as the debit, the redemption readable by id and in the list', async () => {
    const { t, u } = await funded();
    const g = await gift(t, topUp);
    const res = await redeem(u.key, g, { user_id: u.user_id, phone_number: '+52 55 1234 5678' });
    expect(res.status).toBe(200);
    expect(res.body.redemption).toMatchObject({
      gift_id: g,
      status: 'completed',
      points_spent: 500,
      points_refunded: 0,
      balance_after: 500,
      provider: 'sandbox',
      phone_number: '+525512345678',
      pin_code: null,
      status_reason: null,
    });
    expect(res.body.redemption.id).toMatch(/^rdm_/);
    expect(res.body.redemption.provider_transaction_id).toMatch(/^sbx_/);
    const h = await history(t, u.user_id);
    expect(h.points).toBe(500);
    expect(h.entries.map((e: any) => [e.reason, e.amount, e.operation_id])).toEqual([
      ['redemption', -500, `redemption:${res.body.redemption.id}:hold`],
      ['action', 1000, expect.any(String)],
    ]);
    const one = await call('GET', `/api/gifts/redemptions/${res.body.redemption.id}`, { key: u.key });
    expect(one.status).toBe(200);
    expect(one.body.redemption).toEqual(res.body.redemption);
    const list = await call('GET', '/api/gifts/redemptions', { key: u.key });
    expect(list.body).toMatchObject({ success: true, total: 1, page: 1, has_more: false });
    expect(list.body.redemptions[0].id).toBe(res.body.redemption.id);
  });

  it('refunds a top-up the provider refuses (number ending 0000): the points back as one refund entry, with the reason', async () => {
    const { t, u } = await funded();
    const g = await gift(t, topUp);
    const res = await redeem(u.key, g, {
      user_id: u.user_id,
      phone_number: '+525512340000',
      idempotency_key: 'refused-1',
    });
    expect(res.status).toBe(200);
    expect(res.body.redemption).toMatchObject({ status: 'refunded', points_spent: 500, points_refunded: 500 });
    expect(res.body.redemption.status_reason).toMatch(/refused/);
    const h = await history(t, u.user_id);
    expect(h.points).toBe(1000);
    const id = res.body.redemption.id;
    expect(h.entries.map((e: any) => [e.reason, e.amount, e.operation_id])).toEqual([
      ['refund', 500, `redemption:${id}:refund`],
      ['redemption', -500, `redemption:${id}:hold`],
      ['action', 1000, expect.any(String)],
    ]);
    // The same key again: the same refunded redemption, nothing held or refunded again.
    const again = await redeem(u.key, g, {
      user_id: u.user_id,
      phone_number: '+525512340000',
      idempotency_key: 'refused-1',
    });
    expect(again.body).toMatchObject({ duplicate: true, redemption: { id, status: 'refunded' } });
    expect((await history(t, u.user_id)).total).toBe(3);
    const seen = await call('GET', `/api/gifts/redemptions?status=refunded`, { key: u.key });
    expect(seen.body.redemptions.map((r: any) => [r.id, r.status_reason])).toEqual([
      [id, res.body.redemption.status_reason],
    ]);
  });

  it('gives back refused points with the expiry they had: a refusal (number ending 0000) never renews points about to lapse', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    await call('PUT', '/loyalty/rules', {
      key: t.adminKey,
      json: { actions: { grant: 600 }, points_expire_after_days: 30 },
    });
    expect(
      (await call('POST', `/loyalty/award-points/${u.user_id}`, { key: t.adminKey, json: { action_type: 'grant' } }))
        .status,
    ).toBe(200);
    const before = (await call('GET', `/loyalty/points/${u.user_id}`, { key: u.key })).body;
    expect(before).toMatchObject({ points: 600, expiring: [{ points: 600, expires_at: expect.any(String) }] });
    const g = await gift(t, topUp);
    const refused: any[] = [];
    for (let i = 0; i < 3; i += 1)
      refused.push((await redeem(u.key, g, { user_id: u.user_id, phone_number: '+525512340000' })).body.redemption);
    // The same 600 points, lapsing when they always did: not 500 of them thirty days from now.
    const after = (await call('GET', `/loyalty/points/${u.user_id}`, { key: u.key })).body;
    expect(after).toMatchObject({ points: 600, expiring: before.expiring });
    for (const r of refused) expect(r).toMatchObject({ status: 'refunded', points_refunded: 500, points_lapsed: 0 });
    const refund = (await history(t, u.user_id)).entries[0];
    expect(refund).toMatchObject({ reason: 'refund', amount: 500, expires_at: null });
  });

  it('answers 202 processing for a slow top-up (ending 0001), joins it on retry, and completes it after about 30 s', async () => {
    const { t, u } = await funded();
    const g = await gift(t, topUp);
    const began = Date.now();
    const first = await redeem(
      u.key,
      g,
      { user_id: u.user_id, phone_number: '+525512340001' },
      { 'idempotency-key': 'slow-1' },
    );
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({
      success: true,
      duplicate: false,
      redemption: { status: 'processing', points_spent: 500, balance_after: 500 },
    });
    const id = first.body.redemption.id;
    expect(first.headers.get('location')).toBe(`/api/gifts/redemptions/${id}`);
    // Held at once: the balance already shows it, and a second spend cannot use those points.
    expect((await history(t, u.user_id)).points).toBe(500);
    const retry = await redeem(
      u.key,
      g,
      { user_id: u.user_id, phone_number: '+525512340001' },
      { 'idempotency-key': 'slow-1' },
    );
    expect(retry.status).toBe(202);
    expect(retry.body).toMatchObject({ duplicate: true, redemption: { id, status: 'processing' } });
    let seen: any;
    while (Date.now() - began < 90_000) {
      seen = (await call('GET', `/api/gifts/redemptions/${id}`, { key: u.key })).body.redemption;
      if (seen.status !== 'processing') break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    const took = Date.now() - began;
    expect(seen).toMatchObject({ id, status: 'completed', points_refunded: 0 });
    expect(took).toBeGreaterThanOrEqual(29_000);
    process.stderr.write(`redemption: the sandbox's slow top-up completed ${took} ms after the request\n`);
    const h = await history(t, u.user_id);
    expect(h.points).toBe(500);
    expect(h.entries.filter((e: any) => e.reason === 'redemption')).toHaveLength(1);
    const done = await redeem(
      u.key,
      g,
      { user_id: u.user_id, phone_number: '+525512340001' },
      { 'idempotency-key': 'slow-1' },
    );
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ duplicate: true, redemption: { id, status: 'completed' } });
  }, 120_000);

  it('delivers an electronic PIN shown to its owner and masked to admins; service payments carry the account reference', async () => {
    const { t, u } = await funded();
    const p = await gift(t, pin);
    const res = await redeem(u.key, p, { user_id: u.user_id });
    expect(res.status).toBe(200);
    const r = res.body.redemption;
    expect(r).toMatchObject({ status: 'completed', pin_masked: false });
    expect(r.pin_code).toMatch(/^\d{4}-\d{4}-\d{4}-\d{4}$/);
    const asAdmin = (await call('GET', `/api/gifts/redemptions/${r.id}`, { key: t.adminKey })).body.redemption;
    expect(asAdmin.pin_masked).toBe(true);
    expect(asAdmin.pin_code).toBe(`••••-••••-••••-${r.pin_code.slice(-4)}`);
    const adminList = (await call('GET', `/api/gifts/redemptions?user_id=${u.idp_id}`, { key: t.adminKey })).body
      .redemptions;
    expect(adminList[0].pin_code).toBe(asAdmin.pin_code);
    expect((await call('GET', `/api/gifts/redemptions/${r.id}`, { key: u.key })).body.redemption.pin_code).toBe(
      r.pin_code,
    );

    const b = await gift(t, bill);
    const missing = await redeem(u.key, b, { user_id: u.user_id });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ success: false, error: expect.stringMatching(/^account_reference: required/) });
    const paid = await redeem(u.key, b, { user_id: u.user_id, account_reference: 'ENEL-55-0192' });
    expect(paid.body.redemption).toMatchObject({
      status: 'completed',
      account_reference: 'ENEL-55-0192',
      points_spent: 200,
      balance_after: 500,
    });
  });

  it("refuses a top-up without a valid phone number (400, the gift routes' invalid input) and a short balance (409), changing nothing", async () => {
    const { t, u } = await funded(400);
    const g = await gift(t, topUp);
    for (const [body, error] of [
      [{ user_id: u.user_id }, /^phone_number: required/],
      [{ user_id: u.user_id, phone_number: '5512345678' }, /^phone_number: must be an E\.164 number/],
      [{ user_id: u.user_id, phone_number: '+52 55 abc' }, /^phone_number/],
    ] as const) {
      const res = await redeem(u.key, g, body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(error);
    }
    const before = await history(t, u.user_id);
    const poor = await redeem(
      u.key,
      g,
      { user_id: u.user_id, phone_number: '+525512345678' },
      { 'idempotency-key': 'poor-1' },
    );
    expect(poor.status).toBe(409);
    expect(poor.body).toEqual({ success: false, error: 'Not enough points: balance 400, needed 500' });
    expect(await history(t, u.user_id)).toEqual(before);
    expect((await call('GET', '/api/gifts/redemptions', { key: u.key })).body.total).toBe(0);
    expect((await call('GET', '/api/gifts/redemptions', { key: t.adminKey })).body.total).toBe(0);
    // The same key once the points are there: redeemed then, once.
    await call('PUT', '/loyalty/rules', { key: t.adminKey, json: { actions: { grant: 100 } } });
    await call('POST', `/loyalty/award-points/${u.user_id}`, { key: t.adminKey, json: { action_type: 'grant' } });
    const later = await redeem(
      u.key,
      g,
      { user_id: u.user_id, phone_number: '+525512345678' },
      { 'idempotency-key': 'poor-1' },
    );
    expect(later.status).toBe(200);
    expect(later.body.redemption).toMatchObject({ status: 'completed', balance_after: 0 });
  });

  it('lists newest first with pages; a basic key reads only its own user, an admin the organization', async () => {
    const { t, u } = await funded(2000);
    const other = await basicUser(t);
    const p = await gift(t, pin);
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) ids.push((await redeem(u.key, p, { user_id: u.user_id })).body.redemption.id);
    await call('PUT', '/loyalty/rules', { key: t.adminKey, json: { actions: { grant: 300 } } });
    await call('POST', `/loyalty/award-points/${other.user_id}`, { key: t.adminKey, json: { action_type: 'grant' } });
    const theirs = (await redeem(t.adminKey, p, { user_id: other.idp_id })).body.redemption;
    expect(theirs.pin_masked).toBe(true); // redeemed by an admin on the user's behalf: the admin sees it masked

    const page1 = await call('GET', `/api/gifts/redemptions?user_id=${u.user_id}&limit=2`, { key: u.key });
    expect(page1.body).toMatchObject({ total: 3, page: 1, limit: 2, has_more: true });
    const page2 = await call('GET', `/api/gifts/redemptions?user_id=${u.idp_id}&limit=2&page=2`, { key: u.key });
    expect([...page1.body.redemptions, ...page2.body.redemptions].map((r: any) => r.id)).toEqual([...ids].reverse());
    const org = await call('GET', '/api/gifts/redemptions?limit=100', { key: t.adminKey });
    expect(org.body.total).toBe(4);
    expect(org.body.redemptions[0].id).toBe(theirs.id);
    expect(
      (await call('GET', `/api/gifts/redemptions?status=completed&user_id=${other.user_id}`, { key: t.adminKey })).body
        .total,
    ).toBe(1);

    // Another user's: 403 naming them, 404 for their redemption (as for one that does not exist).
    const named = await call('GET', `/api/gifts/redemptions?user_id=${other.user_id}`, { key: u.key });
    expect(named.status).toBe(403);
    expect(named.body.success).toBe(false);
    expect((await call('GET', `/api/gifts/redemptions?user_id=nobody-${Date.now()}`, { key: u.key })).status).toBe(403);
    const foreign = await call('GET', `/api/gifts/redemptions/${theirs.id}`, { key: u.key });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ success: false, error: `Redemption not found: ${theirs.id}` });
    expect((await call('GET', '/api/gifts/redemptions/rdm_nothing', { key: u.key })).status).toBe(404);
    // The owner sees the PIN that the admin redeemed for them.
    expect(
      (await call('GET', `/api/gifts/redemptions/${theirs.id}`, { key: other.key })).body.redemption.pin_masked,
    ).toBe(false);
    // Another organization: 403 naming it, 404 by id from its own.
    const stranger = await newTenant();
    expect(
      (
        await call('GET', `/api/gifts/redemptions/${ids[0]}?organization_id=${t.organization_id}`, {
          key: stranger.adminKey,
        })
      ).status,
    ).toBe(403);
    expect((await call('GET', `/api/gifts/redemptions/${ids[0]}`, { key: stranger.adminKey })).status).toBe(404);
    expect(
      (await call('GET', `/api/gifts/redemptions?organization_id=${t.organization_id}`, { key: stranger.adminKey }))
        .status,
    ).toBe(403);
    expect((await call('GET', '/api/gifts/redemptions', { key: stranger.adminKey })).body.total).toBe(0);
  });

  it('holds a retried redemption once: concurrent requests with one key share one redemption and one hold', async () => {
    const { t, u } = await funded(1000);
    const g = await gift(t, topUp);
    const body = { user_id: u.user_id, phone_number: '+525512345678', idempotency_key: 'cart-9' };
    const answers = await Promise.all(Array.from({ length: 4 }, () => redeem(u.key, g, body)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(new Set(answers.map((a) => a.body.redemption.id)).size).toBe(1);
    expect(answers.filter((a) => !a.body.duplicate)).toHaveLength(1);
    const h = await history(t, u.user_id);
    expect(h.points).toBe(500);
    expect(h.entries.filter((e: any) => e.reason === 'redemption')).toHaveLength(1);
    expect((await call('GET', '/api/gifts/redemptions', { key: u.key })).body.total).toBe(1);
  });

  it('refuses an idempotency key used again for another phone number or account (409), answering the first only to the same request', async () => {
    const { t, u } = await funded(1000);
    const top = await gift(t, topUp);
    const first = await redeem(u.key, top, {
      user_id: u.user_id,
      phone_number: '+52 55 1234 5678',
      idempotency_key: 'dest-1',
    });
    expect(first.status).toBe(200);
    const again = await redeem(u.key, top, {
      user_id: u.user_id,
      phone_number: '+525512345678',
      idempotency_key: 'dest-1',
    });
    expect([again.status, again.body.duplicate, again.body.redemption.id]).toEqual([
      200,
      true,
      first.body.redemption.id,
    ]);
    const other = await redeem(u.key, top, {
      user_id: u.user_id,
      phone_number: '+525599999999',
      idempotency_key: 'dest-1',
    });
    expect(other.status).toBe(409);
    expect(other.body).toEqual({
      success: false,
      error: 'This idempotency key was already used for a top-up to another phone_number',
    });
    const pay = await gift(t, bill);
    expect(
      (await redeem(u.key, pay, { user_id: u.user_id, account_reference: 'ACC-1', idempotency_key: 'dest-2' })).status,
    ).toBe(200);
    const elsewhere = await redeem(u.key, pay, {
      user_id: u.user_id,
      account_reference: 'ACC-2',
      idempotency_key: 'dest-2',
    });
    expect(elsewhere.status).toBe(409);
    expect((await history(t, u.user_id)).points).toBe(1000 - 500 - 200);
  });

  it('holds a retried redemption once when the balance covers exactly one: the retries join the run, none is refused', async () => {
    const { t, u } = await funded(500);
    const g = await gift(t, topUp);
    const body = { user_id: u.user_id, phone_number: '+525512345678', idempotency_key: 'cart-exact' };
    const answers = await Promise.all(Array.from({ length: 4 }, () => redeem(u.key, g, body)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(new Set(answers.map((a) => a.body.redemption.id)).size).toBe(1);
    expect((await history(t, u.user_id)).points).toBe(0);
  });

  it('starts a run only for the redemptions the balance covers: 6 at once with points for 2 give 2 runs, 4 × 409 at once', async () => {
    const { t, u } = await funded(1000);
    const g = await gift(t, topUp);
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => redeem(u.key, g, { user_id: u.user_id, phone_number: '+525512345678' })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 409, 409, 409, 409]);
    for (const a of answers.filter((x) => x.status === 409))
      expect(a.body).toEqual({ success: false, error: 'Not enough points: balance 0, needed 500' });
    const runs = () =>
      suite.temporal.workflow
        .count(`WorkflowType = 'redemptionWorkflow' AND UserId = '${u.user_id}'`)
        .then((c) => c.count);
    await expect.poll(runs, { timeout: 10_000 }).toBe(2);
    await new Promise((r) => setTimeout(r, 1000));
    expect(await runs()).toBe(2);
  });

  it("runs its ledger steps as local activities: the order is the run's only activity task", async () => {
    const { t, u } = await funded(1000);
    const g = await gift(t, topUp);
    const res = await redeem(u.key, g, { user_id: u.user_id, phone_number: '+525512345678' });
    expect(res.body.redemption.status).toBe('completed');
    const history = await suite.temporal.workflow.getHandle(`redemption:${res.body.redemption.id}`).fetchHistory();
    const { events } = history;
    const scheduled = events!.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
    expect(scheduled).toEqual(['fulfilRedemption']);
    const markers = events!.map((e) => e.markerRecordedEventAttributes?.markerName).filter(Boolean);
    expect(markers.filter((m) => m === 'core_local_activity')).toHaveLength(2);
    // ... and the run replays on today's code (the versioning test replays the older shapes).
    await expect(replayRedemption(history, 'redemption-local-steps')).resolves.toBeUndefined();
  }, 120_000);
});
