/**
 * Points that expire, wait and are given back, over HTTP on the real stack. What needs days to
 * pass is in test/activities/ledger-expiry.test.ts (a controllable clock).
 */
import { describe, expect, inject, it } from 'vitest';

import { loyaltyScheduleId } from '../../workers/runs/platform-schedules.ts';
import { basicUser, call, fileForm, newTenant, type Tenant } from '../helpers/api.ts';
import { renderReceipt } from '../helpers/receipts.ts';
import { useSuiteClients } from '../helpers/runtime.ts';
import { groceries, shop } from '../helpers/shop.ts';

const suite = useSuiteClients();

const DAY = 86_400_000;
const rules = (t: Tenant, json: object) => call('PUT', '/loyalty/rules', { key: t.adminKey, json });
const points = (t: Tenant, user: string) => call('GET', `/loyalty/points/${user}`, { key: t.adminKey });
const history = async (t: Tenant, user: string) =>
  (await call('GET', `/loyalty/points/${user}/history?limit=100`, { key: t.adminKey })).body;
const reverse = (key: string, json: object) => call('POST', '/loyalty/reverse', { key, json });
const award = (t: Tenant, idp: string, action_type: string, operation_id: string) =>
  call('POST', `/loyalty/award-points/${idp}`, { key: t.adminKey, json: { action_type, operation_id } });

describe('rules: points_expire_after_days and pending_days', () => {
  it('are validated, kept when left out, and answered by GET', async () => {
    const t = await newTenant();
    const fresh = await call('GET', '/loyalty/rules', { key: t.adminKey });
    expect(fresh.body).toMatchObject({ points_expire_after_days: null, pending_days: 0 });
    for (const bad of [
      { points_expire_after_days: 0 },
      { points_expire_after_days: 1.5 },
      { points_expire_after_days: '30' },
      { points_expire_after_days: 4000 },
      { pending_days: -1 },
      { pending_days: 366 },
    ]) {
      const res = await rules(t, bad);
      expect(res.status, JSON.stringify(bad)).toBe(422);
      expect(res.body.detail).toMatch(new RegExp(`^${Object.keys(bad)[0]}`));
    }
    expect((await call('GET', '/loyalty/rules', { key: t.adminKey })).body).toMatchObject({
      points_expire_after_days: null,
      pending_days: 0,
      is_default: true,
    });
    const set = await rules(t, { points_expire_after_days: 365, pending_days: 2 });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ points_expire_after_days: 365, pending_days: 2 });
    expect((await rules(t, { referral_points: 7 })).body).toMatchObject({
      points_expire_after_days: 365,
      pending_days: 2,
      referral_points: 7,
    });
    expect((await rules(t, { points_expire_after_days: null })).body).toMatchObject({
      points_expire_after_days: null,
      pending_days: 2,
    });
    const u = await basicUser(t);
    expect((await call('PUT', '/loyalty/rules', { key: u.key, json: { points_expire_after_days: 1 } })).status).toBe(
      403,
    );
  });
});

describe('balances', () => {
  it('show the next expiries and pending points; credits carry their expiry', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    expect((await rules(t, { points_expire_after_days: 30 })).status).toBe(200);
    const before = Date.now();
    expect((await award(t, u.idp_id, 'purchase', 'p1')).status).toBe(200);
    const b = await call('GET', `/loyalty/points/${u.user_id}`, { key: u.key });
    expect(b.body).toMatchObject({
      points: 10,
      pending_points: 0,
      expiring: [{ points: 10, expires_at: expect.any(String) }],
    });
    const lapses = Date.parse(b.body.expiring[0].expires_at);
    expect(lapses).toBeGreaterThanOrEqual(before + 30 * DAY);
    expect(lapses).toBeLessThan(Date.now() + 30 * DAY + 1000);
    const h = await history(t, u.user_id);
    expect(h.entries[0]).toMatchObject({ amount: 10, expires_at: b.body.expiring[0].expires_at, available_at: null });

    // an organization without expiry: nothing expiring
    const t2 = await newTenant();
    const v = await basicUser(t2);
    await award(t2, v.idp_id, 'purchase', 'p1');
    expect((await points(t2, v.user_id)).body).toMatchObject({ points: 10, pending_points: 0, expiring: [] });
  });
});

describe('POST /loyalty/reverse', () => {
  it('takes a credit back once: a repeat answers the first reversal; admins only, own organization only', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    await award(t, u.idp_id, 'purchase', 'order-1');
    await award(t, u.idp_id, 'review', 'review-1');
    const op = (await history(t, u.user_id)).entries.find((e: any) => e.description === 'purchase').operation_id;
    expect(op).toBe(`award:${u.user_id}:order-1`);
    const body = { operation_id: op, reason: 'order cancelled' };

    expect((await reverse(u.key, body)).status).toBe(403);
    const other = await newTenant();
    expect((await reverse(other.adminKey, { ...body, organization_id: t.organization_id })).status).toBe(403);
    expect((await reverse(other.adminKey, body)).body).toEqual({ detail: `Operation not found: ${op}` });
    expect((await reverse(t.adminKey, { ...body, operation_id: 'award:nothing' })).status).toBe(404);
    expect((await reverse(t.adminKey, { operation_id: op })).status).toBe(422);
    expect((await history(t, u.user_id)).total).toBe(2);

    const first = await reverse(t.adminKey, body);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({
      success: true,
      duplicate: false,
      operation_id: op,
      credit_operation_id: op,
      user_id: u.user_id,
      points_reversed: 10,
      points: 20,
      record: null,
    });
    expect(first.body.reversal).toMatchObject({
      reason: 'reversal',
      amount: -10,
      operation_id: `reversal:${op}`,
      description: `reversal of ${op}: order cancelled`,
    });
    const again = await reverse(t.adminKey, body);
    expect(again.body).toMatchObject({ duplicate: true, points_reversed: 10, points: 20 });
    expect(again.body.reversal.entry_id).toBe(first.body.reversal.entry_id);
    const h = await history(t, u.user_id);
    expect(h.entries.filter((e: any) => e.reason === 'reversal')).toHaveLength(1);
    expect(h.points).toBe(20);
    // a reversal is not reversed
    const twice = await reverse(t.adminKey, { operation_id: `reversal:${op}`, reason: 'undo' });
    expect(twice.status).toBe(422);
    expect(twice.body.detail).toMatch(/^operation_id: a "reversal" entry cannot be reversed/);
  });

  it('reverses by the operation_id the client sent with the award, given the user (ids are per user)', async () => {
    const t = await newTenant();
    const [u, v] = [await basicUser(t), await basicUser(t)];
    await award(t, u.idp_id, 'purchase', 'order-123');
    await award(t, u.idp_id, 'review', 'review-9');
    await award(t, v.idp_id, 'purchase', 'order-123');
    const body = { operation_id: 'order-123', reason: 'order cancelled' };
    // without the user the client's id names nothing (it is not unique across users)
    expect((await reverse(t.adminKey, body)).body).toEqual({ detail: 'Operation not found: order-123' });
    expect((await reverse(t.adminKey, { ...body, user_id: 'usr_0000000000000000000000' })).status).toBe(404);
    const w = await basicUser(t);
    expect((await reverse(t.adminKey, { ...body, user_id: w.user_id })).status).toBe(404);
    // another user's credit named by its ledger id under the wrong user is not found either
    expect(
      (await reverse(t.adminKey, { ...body, operation_id: `award:${v.user_id}:order-123`, user_id: u.user_id })).status,
    ).toBe(404);
    expect((await reverse(u.key, { ...body, user_id: u.user_id })).status).toBe(403);

    const first = await reverse(t.adminKey, { ...body, user_id: u.idp_id });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({
      duplicate: false,
      operation_id: 'order-123',
      credit_operation_id: `award:${u.user_id}:order-123`,
      user_id: u.user_id,
      points_reversed: 10,
      points: 20,
    });
    // the same credit by its ledger id, or by the client's id again: the first reversal
    const internal = await reverse(t.adminKey, { ...body, operation_id: `award:${u.user_id}:order-123` });
    expect(internal.body).toMatchObject({
      duplicate: true,
      operation_id: `award:${u.user_id}:order-123`,
      credit_operation_id: `award:${u.user_id}:order-123`,
      points_reversed: 10,
      points: 20,
    });
    expect(internal.body.reversal.entry_id).toBe(first.body.reversal.entry_id);
    expect((await reverse(t.adminKey, { ...body, user_id: u.user_id })).body).toMatchObject({
      duplicate: true,
      points: 20,
    });
    expect((await points(t, v.user_id)).body.points).toBe(10);
    // with the user, the ledger id is accepted too
    expect(
      (
        await reverse(t.adminKey, {
          operation_id: `award:${u.user_id}:review-9`,
          user_id: u.user_id,
          reason: 'fake review',
        })
      ).body,
    ).toMatchObject({ points_reversed: 20, points: 0 });

    // a limited action's credit, keyed by the client (Idempotency-Key header), stored under a slot id
    const login = await call('POST', `/loyalty/award-points/${v.idp_id}`, {
      key: v.key,
      json: { action_type: 'daily_login' },
      headers: { 'Idempotency-Key': 'login-77' },
    });
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    const out = await reverse(t.adminKey, { operation_id: 'login-77', user_id: v.user_id, reason: 'bot' });
    expect(out.status, JSON.stringify(out.body)).toBe(200);
    expect(out.body).toMatchObject({ user_id: v.user_id, points_reversed: 5, points: 10 });
    expect(out.body.credit_operation_id).toMatch(new RegExp(`^award:${v.user_id}:daily_login:`));
  });

  it('refuses with 409 when the points were spent, unless allow_negative', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    await rules(t, { actions: { big_purchase: 600 } });
    await award(t, u.idp_id, 'big_purchase', 'big-1');
    const gift = (
      await call('POST', '/api/gifts/gifts', {
        key: t.adminKey,
        json: {
          gift_name: 'Telcel 100 MXN',
          gift_type: 'mobile_top-ups',
          country: 'mx',
          telco_supplier: 'Telcel',
          recharge_amount: 100,
          points_value: 500,
        },
      })
    ).body.gift;
    const redeemed = await call('POST', `/api/gifts/gifts/${gift.id}/redeem`, {
      key: u.key,
      json: { user_id: u.user_id, phone_number: '+5215512345678' },
    });
    expect([200, 202], JSON.stringify(redeemed.body)).toContain(redeemed.status);
    expect((await points(t, u.user_id)).body.points).toBe(100);

    const body = { operation_id: `award:${u.user_id}:big-1`, reason: 'fraud' };
    const refused = await reverse(t.adminKey, body);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(
      /takes back 600 points and would leave the user -500 spendable points; send allow_negative: true/,
    );
    const total = (await history(t, u.user_id)).total;
    expect((await points(t, u.user_id)).body.points).toBe(100);
    const forced = await reverse(t.adminKey, { ...body, allow_negative: true });
    expect(forced.status).toBe(200);
    expect(forced.body).toMatchObject({ points_reversed: 600, points: -500, duplicate: false });
    expect((await history(t, u.user_id)).total).toBe(total + 1);
    // nothing more can be spent, and the debt is paid by the next credit first
    await award(t, u.idp_id, 'big_purchase', 'big-2');
    expect((await points(t, u.user_id)).body.points).toBe(100);
  });

  it('marks a reversed scan; a pending scan credit is cancelled', async () => {
    const s = await shop();
    const user = await basicUser(s.t);
    expect((await rules(s.t, { pending_days: 2 })).status).toBe(200);
    const res = await call('POST', `/retail/receipts?venue_id=${s.venue.id}`, {
      key: user.key,
      form: fileForm(
        {},
        { data: await renderReceipt(groceries('2026-11-18')), name: 'receipt.png', type: 'image/png' },
      ),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ status: 'completed', total_points: 50, points_processed: true });
    expect((await points(s.t, user.user_id)).body).toMatchObject({ points: 0, pending_points: 50 });
    const credit = (await history(s.t, user.user_id)).entries[0];
    expect(credit).toMatchObject({ reason: 'receipt', operation_id: `scan:${res.body.id}`, amount: 50 });
    expect(Date.parse(credit.available_at) - Date.parse(credit.created_at)).toBeGreaterThan(2 * DAY - 60_000);

    const out = await reverse(s.t.adminKey, {
      operation_id: `scan:${res.body.id}`,
      reason: 'receipt from another shop',
    });
    expect(out.status, JSON.stringify(out.body)).toBe(200);
    expect(out.body).toMatchObject({
      points_reversed: 50,
      points: 0,
      pending_points: 0,
      record: { type: 'scan', id: res.body.id },
    });
    const scan = await call('GET', `/api/ticket-scan/loyalty/ticket-scan/${res.body.id}`, { key: user.key });
    expect(scan.body).toMatchObject({
      status: 'completed',
      reversal: { reason: 'receipt from another shop', points: 50, entry_id: out.body.reversal.entry_id },
    });
    const listed = await call('GET', '/api/ticket-scan/loyalty/ticket-scan', { key: user.key });
    expect(listed.body.scans[0]).toMatchObject({ id: res.body.id, reversal: { points: 50 } });
  });

  it('marks the referral whose credit is reversed', async () => {
    const t = await newTenant();
    const referrer = await basicUser(t);
    const referred = await basicUser(t);
    const ref = await call('POST', '/loyalty/process-referral', {
      key: t.adminKey,
      json: { referred_internal_id: referred.user_id, referrer_internal_id: referrer.user_id },
    });
    expect(ref.status, JSON.stringify(ref.body)).toBe(200);
    const op = `referral:${ref.body.referral_id}:referrer`;
    const out = await reverse(t.adminKey, { operation_id: op, reason: 'self-referral ring' });
    expect(out.status, JSON.stringify(out.body)).toBe(200);
    expect(out.body).toMatchObject({
      points_reversed: 100,
      points: 0,
      record: { type: 'referral', id: ref.body.referral_id },
    });
    const marks = await suite.db.collection('referral_reversals').find({ referral_id: ref.body.referral_id }).toArray();
    expect(marks).toEqual([
      expect.objectContaining({
        side: 'referrer',
        reversal: expect.objectContaining({ reason: 'self-referral ring', points: 100 }),
      }),
    ]);
    // a repeated reversal answers the first and keeps the one mark
    expect((await reverse(t.adminKey, { operation_id: op, reason: 'again' })).body).toMatchObject({
      duplicate: true,
      record: { type: 'referral' },
    });
    expect(await suite.db.collection('referral_reversals').countDocuments({ referral_id: ref.body.referral_id })).toBe(
      1,
    );
    expect((await points(t, referred.user_id)).body.points).toBe(50);
  });
});

describe('the loyalty maintenance Schedule', () => {
  it('exists, runs daily, and a triggered run of the expiry completes with its report', async () => {
    const handle = suite.temporal.schedule.getHandle(loyaltyScheduleId(inject('platformEnv').TEMPORAL_TASK_QUEUE));
    const described = await handle.describe();
    expect(described.spec.intervals?.[0].every).toBe(DAY);
    expect(described.action).toMatchObject({ workflowType: 'loyaltyMaintenanceWorkflow' });
    const seen = described.info.recentActions.length;
    await handle.trigger();
    let id: string | undefined;
    for (let i = 0; i < 100 && !id; i += 1) {
      const actions = (await handle.describe()).info.recentActions;
      if (actions.length > seen) id = actions[actions.length - 1].action.workflow.workflowId;
      else await new Promise((r) => setTimeout(r, 200));
    }
    expect(id).toBeDefined();
    const result = await suite.temporal.workflow.getHandle(id!).result();
    expect(result).toMatchObject({
      organizations: expect.any(Number),
      entries_written: expect.any(Number),
      now: expect.any(String),
    });
  });
});
