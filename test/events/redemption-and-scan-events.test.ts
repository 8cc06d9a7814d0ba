/**
 * The gifts' and scanning's events over HTTP with a local receiver: redemption.completed,
 * redemption.refunded and redemption.needs_review (and the completed / refunded of an admin's
 * settlement), scan.completed, scan.pending_validation and scan.rejected. Each arrives once per
 * change (a repeated request, a repeated settlement: nothing new), verifies with the Standard
 * Webhooks library, and carries the documented data, never a PIN, a phone number or an admin's
 * note; a refused redeem (409, 403) emits nothing. The review path runs on a platform of this
 * file's own with a 2 s processing limit (the sandbox's slow top-up then goes to review). The retry
 * paths (a step whose change an earlier attempt wrote before it stopped, short of its event) are
 * driven with the activities in this process: a crash between the two cannot be provoked over HTTP.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { parseEnv } from '../../activities/core/config.ts';
import { eventsSettled } from '../../activities/events/index.ts';
import {
  holdOperation,
  type RedemptionInput,
  refundOperation,
  releaseRedemption,
  reserveRedemption,
  reviewRedemption,
  settleRedemption,
} from '../../activities/gifts/fulfilment.ts';
import { saveRedemption } from '../../activities/gifts/store.ts';
import { generateSecret } from '../../activities/identity/api-keys.ts';
import { refundDebit } from '../../activities/loyalty/ledger.ts';
import { mirrorScan } from '../../activities/scanning/scans.ts';
import { writeScanMirror } from '../../activities/scanning/store.ts';
import { launchPlatform, type Platform } from '../../tools/platform.ts';
import { basicUser, call, fileForm, newTenant, type Tenant, unique, until } from '../helpers/api.ts';
import { renderReceipt } from '../helpers/receipts.ts';
import { addEndpoint, type Received, receivedAt, type Receiver, startReceiver, verified } from '../helpers/receiver.ts';
import { isolatedPlatformEnv, useSuiteRuntime } from '../helpers/runtime.ts';
import { groceries, type Shop, shop } from '../helpers/shop.ts';

const REDEMPTION_TYPES = ['redemption.completed', 'redemption.refunded', 'redemption.needs_review'];
const SCAN_TYPES = ['scan.completed', 'scan.pending_validation', 'scan.rejected'];

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

useSuiteRuntime();

let rx: Receiver;
beforeAll(async () => {
  rx = await startReceiver();
});
afterAll(async () => {
  await eventsSettled();
  await rx.close();
});

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every request at `path`, verified with the endpoint's secret. */
const eventsAt = (secret: string, at: string) => rx.received(at).map((r: Received) => verified(secret, r));

/** No more than `n` deliveries arrive at `path` (waiting a little for late ones): one per change. */
/** A receipt of the shop scanned by a basic user, left pending_validation (its items exceed its total). */
async function pendingScan(s: Shop, user: { key: string; user_id: string }, date: string) {
  const image = await renderReceipt({ ...groceries(date), total: 5.0 });
  const res = await call('POST', '/api/ticket-scan/loyalty/ticket-scan', {
    key: user.key,
    json: { user_id: user.user_id, venue_id: String(s.venue.id), image: image.toString('base64') },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.status).toBe('pending_validation');
  return res.body;
}

async function exactly(at: string, n: number) {
  await receivedAt(rx, at, n, 30_000);
  await pause(2000);
  expect(rx.received(at)).toHaveLength(n);
  expect(new Set(rx.received(at).map((r) => r.headers['webhook-id'])).size).toBe(n);
}

describe('redemption events (sandbox provider)', () => {
  it('redemption.completed and redemption.refunded arrive once per redemption, verified, with their data; never the PIN or the phone number', async () => {
    const t = await newTenant();
    const at = unique('/redemptions');
    // The endpoint first: the events of what follows go to it.
    const ep = await addEndpoint(t, rx, at, REDEMPTION_TYPES);
    const u = await basicUser(t);
    await call('PUT', '/loyalty/rules', { key: t.adminKey, json: { actions: { grant: 1000 } } });
    expect(
      (await call('POST', `/loyalty/award-points/${u.user_id}`, { key: t.adminKey, json: { action_type: 'grant' } }))
        .status,
    ).toBe(200);
    const g = (await call('POST', '/api/gifts/gifts', { key: t.adminKey, json: topUp })).body.gift.id;
    const p = (await call('POST', '/api/gifts/gifts', { key: t.adminKey, json: pin })).body.gift.id;
    const redeem = (key: string, gift: string, json: object) =>
      call('POST', `/api/gifts/gifts/${gift}/redeem`, { key, json });

    const done = await redeem(u.key, g, {
      user_id: u.user_id,
      phone_number: '+525512345678',
      idempotency_key: 'first',
    });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.redemption.status).toBe('completed');
    // The same request again joins it: no second event.
    expect(
      (await redeem(u.key, g, { user_id: u.user_id, phone_number: '+525512345678', idempotency_key: 'first' })).body
        .duplicate,
    ).toBe(true);
    const refused = await redeem(u.key, g, { user_id: u.user_id, phone_number: '+525512340000' });
    expect(refused.body.redemption.status).toBe('refunded');
    const pinned = await redeem(u.key, p, { user_id: u.user_id });
    expect(pinned.body.redemption).toMatchObject({ status: 'completed', pin_code: expect.any(String) });

    await exactly(at, 3);
    const events = eventsAt(ep.secret, at);
    const byId = new Map(events.map((e) => [e.data.redemption_id, e]));
    expect([...byId.keys()].sort()).toEqual(
      [done.body.redemption.id, refused.body.redemption.id, pinned.body.redemption.id].sort(),
    );
    const history = (await call('GET', `/loyalty/points/${u.user_id}/history?limit=100`, { key: t.adminKey })).body
      .entries;
    const entry = (op: string) => history.find((e: any) => e.operation_id === op)?.entry_id;

    const completed = byId.get(done.body.redemption.id)!;
    expect(completed).toMatchObject({
      type: 'redemption.completed',
      organization_id: t.organization_id,
      id: expect.stringMatching(/^evt_/),
    });
    expect(completed.data).toEqual({
      redemption_id: done.body.redemption.id,
      user_id: u.user_id,
      gift_id: g,
      gift_name: 'Telcel 100 MXN',
      gift_type: 'mobile_top-ups',
      status: 'completed',
      points_spent: 500,
      points_refunded: 0,
      points_lapsed: 0,
      hold_entry_id: entry(`redemption:${done.body.redemption.id}:hold`),
      refund_entry_id: null,
      provider: 'sandbox',
      provider_transaction_id: done.body.redemption.provider_transaction_id,
      settlement: null,
    });
    expect(completed.data.hold_entry_id).toEqual(expect.any(String));

    const refund = byId.get(refused.body.redemption.id)!;
    expect(refund.type).toBe('redemption.refunded');
    // the status's reason (the provider's answer) is the redemption's, not the event's (test/events/no-personal-text-in-events.test.ts)
    expect(refund.data).not.toHaveProperty('status_reason');
    expect(refund.data).toMatchObject({
      redemption_id: refused.body.redemption.id,
      user_id: u.user_id,
      gift_id: g,
      status: 'refunded',
      points_spent: 500,
      points_refunded: 500,
      points_lapsed: 0,
      hold_entry_id: entry(`redemption:${refused.body.redemption.id}:hold`),
      refund_entry_id: entry(`redemption:${refused.body.redemption.id}:refund`),
      settlement: null,
    });
    expect(refund.data.refund_entry_id).toEqual(expect.any(String));

    const pinEvent = byId.get(pinned.body.redemption.id)!;
    expect(pinEvent).toMatchObject({
      type: 'redemption.completed',
      data: { gift_id: p, gift_type: 'electronic_pins', points_spent: 300, status: 'completed' },
    });
    for (const r of rx.received(at)) {
      expect(r.body).not.toContain(pinned.body.redemption.pin_code);
      expect(Object.keys(JSON.parse(r.body).data).filter((k) => /pin|phone|account/.test(k))).toEqual([]);
      expect(r.body).not.toContain('5512345678');
      expect(r.body).not.toContain('5512340000');
    }
    // The event log holds the same three, and nothing for the refused requests.
    const log = (await call('GET', '/api/events?limit=100', { key: t.adminKey })).body.events.filter((e: any) =>
      e.type.startsWith('redemption.'),
    );
    expect(log.map((e: any) => e.id).sort()).toEqual(events.map((e) => e.id).sort());
  }, 120_000);

  it("a refused redeem emits nothing: a short balance (409), another user's points (403)", async () => {
    const t = await newTenant();
    const at = unique('/refused-redemptions');
    await addEndpoint(t, rx, at, REDEMPTION_TYPES);
    const u = await basicUser(t);
    const other = await basicUser(t);
    await call('PUT', '/loyalty/rules', { key: t.adminKey, json: { actions: { grant: 200 } } });
    expect(
      (await call('POST', `/loyalty/award-points/${u.user_id}`, { key: t.adminKey, json: { action_type: 'grant' } }))
        .status,
    ).toBe(200);
    const g = (await call('POST', '/api/gifts/gifts', { key: t.adminKey, json: topUp })).body.gift.id;
    const redeem = (key: string, gift: string, json: object) =>
      call('POST', `/api/gifts/gifts/${gift}/redeem`, { key, json });

    // Refused before anything is held: a short balance (200 points, 500 needed), another user's points.
    expect((await redeem(u.key, g, { user_id: u.user_id, phone_number: '+525512345678' })).status).toBe(409);
    expect((await redeem(u.key, g, { user_id: other.user_id, phone_number: '+525512345678' })).status).toBe(403);
    expect((await redeem(other.key, g, { user_id: other.user_id, phone_number: '+525512345678' })).status).toBe(409);

    await exactly(at, 0);
    const log = (await call('GET', '/api/events?limit=100', { key: t.adminKey })).body.events.filter((e: any) =>
      e.type.startsWith('redemption.'),
    );
    expect(log).toEqual([]);
  }, 120_000);
});

describe('scan events', () => {
  it('scan.completed for a credited receipt, scan.rejected for a duplicate and for a receipt without products, once each', async () => {
    const s = await shop();
    const at = unique('/scans');
    const ep = await addEndpoint(s.t, rx, at, SCAN_TYPES);
    const user = await basicUser(s.t);
    const image = await renderReceipt(groceries('2026-10-02'));
    const send = async (data: Buffer) => {
      const res = await call('POST', `/retail/receipts?venue_id=${s.venue.id}`, {
        key: user.key,
        form: fileForm({}, { data, name: `${unique('r')}.png`, type: 'image/png' }),
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body;
    };
    const scan = await send(image);
    expect(scan).toMatchObject({ status: 'completed', total_points: 50 });
    const dup = await send(image);
    expect(dup).toMatchObject({ status: 'rejected', duplicate_of: scan.id });
    const alien = await send(
      await renderReceipt({
        merchant: 'Hardware Depot',
        address: '9 Elm Road',
        date: '2026-10-02',
        items: [{ name: 'Claw Hammer 16oz', price: 12.5 }],
      }),
    );
    expect(alien.status).toBe('rejected');

    await exactly(at, 3);
    const events = eventsAt(ep.secret, at);
    const of = (id: string) => events.filter((e) => e.data.scan_id === id);
    expect(of(scan.id)).toHaveLength(1);
    const [completed] = of(scan.id);
    expect(completed).toMatchObject({ type: 'scan.completed', organization_id: s.t.organization_id });
    expect(completed.data).toEqual({
      scan_id: scan.id,
      user_id: user.user_id,
      source: 'receipt',
      status: 'completed',
      venue_id: String(s.venue.id),
      matched_venue_id: String(s.venue.id),
      total_points: 50,
      max_points_per_scan: scan.max_points_per_scan,
      points_capped: false,
      points_processed: true,
      points_processed_at: scan.points_processed_at,
      operation_id: `scan:${scan.id}`,
      validation_status: 'not_required',
      validation_expires_at: null,
      products: scan.products.map((p: any) => ({
        id: p.id,
        name: p.name,
        quantity: p.quantity,
        points: p.points,
        validation_status: 'auto_approved',
      })),
      flags: [],
      duplicate_of: null,
      rejection_reason: null,
      receipt: { date: '2026-10-02', total: 9.73 },
    });
    // The credit's own event carries the same operation id.
    const credit = (
      await call('GET', '/api/events?type=points.credited&limit=100', { key: s.t.adminKey })
    ).body.events.find((e: any) => e.data.operation_id === `scan:${scan.id}`);
    expect(credit?.data.amount).toBe(50);

    expect(of(dup.id)).toHaveLength(1);
    expect(of(dup.id)[0]).toMatchObject({
      type: 'scan.rejected',
      data: {
        scan_id: dup.id,
        status: 'rejected',
        total_points: 0,
        points_processed: false,
        operation_id: null,
        duplicate_of: scan.id,
        rejection_reason: 'duplicate',
        flags: expect.arrayContaining(['duplicate']),
      },
    });
    expect(of(alien.id)).toHaveLength(1);
    expect(of(alien.id)[0]).toMatchObject({
      type: 'scan.rejected',
      data: {
        scan_id: alien.id,
        status: 'rejected',
        total_points: 0,
        products: [],
        rejection_reason: 'no_products_recognized',
        flags: expect.arrayContaining(['no_products_recognized']),
      },
    });
  }, 120_000);

  it('scan.pending_validation while products wait for an admin, then scan.completed (approved) or scan.rejected (every product rejected)', async () => {
    const s = await shop();
    const at = unique('/validated');
    const ep = await addEndpoint(s.t, rx, at, SCAN_TYPES);
    const user = await basicUser(s.t);
    const L = '/api/ticket-scan/loyalty/ticket-scan';
    const approve = await pendingScan(s, user, '2026-10-05');
    const reject = await pendingScan(s, user, '2026-10-06');
    await receivedAt(rx, at, 2, 30_000);
    const waiting = eventsAt(ep.secret, at);
    expect(waiting.map((e) => e.type)).toEqual(['scan.pending_validation', 'scan.pending_validation']);
    const first = waiting.find((e) => e.data.scan_id === approve.id)!;
    expect(first.data).toMatchObject({
      scan_id: approve.id,
      user_id: user.user_id,
      source: 'ticket_scan',
      status: 'pending_validation',
      total_points: 0,
      points_processed: false,
      points_processed_at: null,
      operation_id: null,
      validation_status: 'pending',
      validation_expires_at: approve.expires_at,
      flags: expect.arrayContaining(['items_exceed_total']),
      rejection_reason: null,
      receipt: { date: '2026-10-05', total: 5 },
    });
    expect(first.data.validation_expires_at).toEqual(expect.any(String));
    expect(first.data.products.map((p: any) => p.validation_status)).toEqual(approve.products.map(() => 'pending'));

    const note = 'typed by the admin: checked the shelf price';
    const ok = await call('POST', `${L}/${approve.id}/validate`, {
      key: s.t.adminKey,
      json: {
        validations: approve.products.map((p: any) => ({
          product_id: p.id,
          is_valid: p.name === 'Whole Milk 1L',
          notes: note,
        })),
      },
    });
    expect(ok.body).toMatchObject({ status: 'completed', total_points: 10 });
    const no = await call('POST', `${L}/${reject.id}/validate`, {
      key: s.t.adminKey,
      json: { validations: reject.products.map((p: any) => ({ product_id: p.id, is_valid: false })) },
    });
    expect(no.body).toMatchObject({ status: 'rejected', rejection_reason: 'Every product was rejected in validation' });

    await exactly(at, 4);
    const events = eventsAt(ep.secret, at);
    const key = (e: { type: string; data: Record<string, any> }) => `${e.type} ${e.data.scan_id}`;
    expect(events.map(key).sort()).toEqual(
      [
        `scan.pending_validation ${approve.id}`,
        `scan.pending_validation ${reject.id}`,
        `scan.completed ${approve.id}`,
        `scan.rejected ${reject.id}`,
      ].sort(),
    );
    const completed = events.find((e) => e.type === 'scan.completed')!;
    expect(completed.data).toMatchObject({
      status: 'completed',
      total_points: 10,
      points_processed: true,
      points_processed_at: ok.body.points_processed_at,
      operation_id: `scan:${approve.id}`,
      validation_status: 'completed',
      validation_expires_at: null,
    });
    expect(completed.data.products.map((p: any) => [p.name, p.validation_status]).sort()).toEqual(
      ok.body.products.map((p: any) => [p.name, p.validation_status]).sort(),
    );
    const rejected = events.find((e) => e.type === 'scan.rejected')!;
    expect(rejected.data).toMatchObject({
      scan_id: reject.id,
      status: 'rejected',
      total_points: 0,
      points_processed: false,
      rejection_reason: 'all_products_rejected',
    });
    expect(rejected.data.products.every((p: any) => p.validation_status === 'rejected')).toBe(true);
    for (const r of rx.received(at)) expect(r.body).not.toContain(note);
  }, 120_000);

  it('a refused validation changes nothing and emits nothing: a basic key (403), an unknown product (400), a scan validated already (400)', async () => {
    const s = await shop();
    const at = unique('/refused');
    const ep = await addEndpoint(s.t, rx, at, SCAN_TYPES);
    const user = await basicUser(s.t);
    const L = '/api/ticket-scan/loyalty/ticket-scan';
    const approve = await pendingScan(s, user, '2026-10-07');
    await receivedAt(rx, at, 1, 30_000);

    // A refused validation (a basic key: 403; an unknown product: 400) changes nothing and emits nothing.
    expect(
      (
        await call('POST', `${L}/${approve.id}/validate`, {
          key: user.key,
          json: { validations: [{ product_id: approve.products[0].id, is_valid: true }] },
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await call('POST', `${L}/${approve.id}/validate`, {
          key: s.t.adminKey,
          json: { validations: [{ product_id: '999999', is_valid: true }] },
        })
      ).status,
    ).toBe(400);
    const still = await call('GET', `${L}/${approve.id}`, { key: s.t.adminKey });
    expect(still.body.status).toBe('pending_validation');

    const ok = await call('POST', `${L}/${approve.id}/validate`, {
      key: s.t.adminKey,
      json: { validations: approve.products.map((p: any) => ({ product_id: p.id, is_valid: true })) },
    });
    expect(ok.body).toMatchObject({ status: 'completed' });
    // Validating again is refused (400): nothing new.
    expect(
      (
        await call('POST', `${L}/${approve.id}/validate`, {
          key: s.t.adminKey,
          json: { validations: [{ product_id: approve.products[0].id, is_valid: true }] },
        })
      ).status,
    ).toBe(400);

    await exactly(at, 2);
    expect(
      eventsAt(ep.secret, at)
        .map((e) => e.type)
        .sort(),
    ).toEqual(['scan.completed', 'scan.pending_validation']);
  }, 120_000);
});

describe('redemption.needs_review and its settlements (own platform, sandbox, 2 s processing limit)', () => {
  const queue = unique('events-review');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'events-review-'));
  const platformKey = generateSecret();
  let platform: Platform;
  let t: Tenant;
  let ana: { key: string; user_id: string };
  let giftId: string;
  let ep: { id: string; secret: string };
  const at = unique('/review');

  async function api(
    method: string,
    route: string,
    key: string,
    body?: unknown,
  ): Promise<{ status: number; body: any }> {
    const res = await fetch(`${platform.edgeUrl}${route}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: await res.json() };
  }

  beforeAll(async () => {
    const env = isolatedPlatformEnv(
      { queue, dataDir, adminKey: platformKey },
      { WORKER_COUNT: '1', GIFT_PROCESSING_LIMIT_SECONDS: '2', LOG_LEVEL: 'warn' },
    );
    platform = await launchPlatform({
      cfg: parseEnv({ ...process.env, ...env }),
      freePorts: true,
      env,
      stdio: 'ignore',
      log: () => undefined,
    });
    const org = (await api('POST', '/api/organizations', platformKey, { name: unique('Review'), tier: 'free' })).body
      .organization.organization_id;
    const a = await api('POST', '/generate_api_key', platformKey, {
      user_id: unique('admin'),
      organization_id: org,
      permissions: ['admin'],
    });
    t = { organization_id: org, adminKey: a.body.api_key, admin: { user_id: a.body.metadata.user_id, idp_id: '' } };
    const created = await api('POST', '/api/webhooks/endpoints', t.adminKey, {
      url: rx.url(at),
      events: REDEMPTION_TYPES,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    ep = { id: created.body.endpoint.id, secret: created.body.secret };
    const k = await api('POST', '/generate_api_key', t.adminKey, { user_id: unique('ana') });
    ana = { key: k.body.api_key, user_id: k.body.metadata.user_id };
    await api('PUT', '/loyalty/rules', t.adminKey, { actions: { grant: 1000 } });
    expect(
      (await api('POST', `/loyalty/award-points/${ana.user_id}`, t.adminKey, { action_type: 'grant' })).status,
    ).toBe(200);
    giftId = (await api('POST', '/api/gifts/gifts', t.adminKey, { ...topUp, points_value: 100 })).body.gift.id;
  }, 300_000);

  afterAll(async () => {
    await platform?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('redemption.needs_review once when the outcome is unknown; an admin settlement emits redemption.refunded or redemption.completed once (a repeat: nothing), without the admin note', async () => {
    // Numbers ending 0001: the sandbox answers PROCESSING for 30 s, past the 2 s limit.
    const ids: string[] = [];
    for (const phone of ['+525512300001', '+525512310001']) {
      const res = await api('POST', `/api/gifts/gifts/${giftId}/redeem`, ana.key, {
        user_id: ana.user_id,
        phone_number: phone,
        idempotency_key: unique('k'),
      });
      expect([200, 202], JSON.stringify(res.body)).toContain(res.status);
      ids.push(res.body.redemption.id);
    }
    const [refundIt, completeIt] = ids;
    for (const id of ids)
      await until(
        `${id} in review`,
        async () => (await api('GET', `/api/gifts/redemptions/${id}`, t.adminKey)).body.redemption,
        (r) => r.status === 'needs_review',
        60_000,
      );
    await receivedAt(rx, at, 2, 30_000);
    const review = eventsAt(ep.secret, at);
    expect(review.map((e) => [e.type, e.data.redemption_id]).sort()).toEqual(
      ids.map((id) => ['redemption.needs_review', id]).sort(),
    );
    const r0 = (await api('GET', `/api/gifts/redemptions/${refundIt}`, t.adminKey)).body.redemption;
    expect(review.find((e) => e.data.redemption_id === refundIt)!.data).toEqual({
      redemption_id: refundIt,
      user_id: ana.user_id,
      gift_id: giftId,
      gift_name: 'Telcel 100 MXN',
      gift_type: 'mobile_top-ups',
      status: 'needs_review',
      points_spent: 100,
      points_refunded: 0,
      points_lapsed: 0,
      hold_entry_id: expect.any(String),
      refund_entry_id: null,
      provider: 'sandbox',
      provider_transaction_id: r0.provider_transaction_id,
      settlement: null,
    });
    expect(r0.status_reason).toEqual(expect.any(String));

    // Refunded first: the sandbox still answers PROCESSING (not a delivery), so it is not refused.
    const note = 'Operator portal says failed, ticket 4411';
    const refunded = await api('POST', `/api/gifts/redemptions/${refundIt}/settle`, t.adminKey, {
      outcome: 'refunded',
      reason: note,
    });
    expect(refunded.status, JSON.stringify(refunded.body)).toBe(200);
    const completed = await api('POST', `/api/gifts/redemptions/${completeIt}/settle`, t.adminKey, {
      outcome: 'completed',
      reason: note,
    });
    expect(completed.status, JSON.stringify(completed.body)).toBe(200);
    // Repeats join the settlement; the other outcome is refused 409: nothing new either way.
    expect(
      (await api('POST', `/api/gifts/redemptions/${refundIt}/settle`, t.adminKey, { outcome: 'refunded' })).body
        .duplicate,
    ).toBe(true);
    expect(
      (await api('POST', `/api/gifts/redemptions/${completeIt}/settle`, t.adminKey, { outcome: 'refunded' })).status,
    ).toBe(409);

    await exactly(at, 4);
    const events = eventsAt(ep.secret, at);
    const back = events.find((e) => e.type === 'redemption.refunded')!;
    expect(back.data).toMatchObject({
      redemption_id: refundIt,
      status: 'refunded',
      points_spent: 100,
      points_refunded: 100,
      refund_entry_id: expect.any(String),
      settlement: {
        outcome: 'refunded',
        settled_by: t.admin.user_id,
        settled_at: refunded.body.redemption.settlement.settled_at,
      },
    });
    const kept = events.find((e) => e.type === 'redemption.completed')!;
    expect(kept.data).toMatchObject({
      redemption_id: completeIt,
      status: 'completed',
      points_spent: 100,
      points_refunded: 0,
      refund_entry_id: null,
      settlement: {
        outcome: 'completed',
        settled_by: t.admin.user_id,
        settled_at: completed.body.redemption.settlement.settled_at,
      },
    });
    for (const r of rx.received(at)) {
      expect(r.body).not.toContain(note);
      expect(r.body).not.toMatch(/55123[01]0001/);
    }
  }, 180_000);
});

describe('a retried step whose change an earlier attempt wrote (it stopped before the event)', () => {
  it('a redemption settled, refunded or put in review by the earlier attempt: the retry records the event, once', async () => {
    const t = await newTenant();
    const at = unique('/retried-redemptions');
    const ep = await addEndpoint(t, rx, at, REDEMPTION_TYPES);
    const u = await basicUser(t);
    await call('PUT', '/loyalty/rules', { key: t.adminKey, json: { actions: { grant: 1000 } } });
    expect(
      (await call('POST', `/loyalty/award-points/${u.user_id}`, { key: t.adminKey, json: { action_type: 'grant' } }))
        .status,
    ).toBe(200);
    const input = (redemption_id: string): RedemptionInput => ({
      redemption_id,
      organization_id: t.organization_id,
      user_id: u.user_id,
      gift_id: 'gft_retry',
      gift_name: 'Telcel 100 MXN',
      gift_type: 'mobile_top-ups',
      points: 100,
      order: {
        custom_identifier: redemption_id,
        kind: 'mobile_top-ups',
        product: 'Telcel',
        amount: 100,
        country: 'MX',
        phone_number: '+525512345678',
      },
    });
    const [done, back, review] = [input(unique('rdm')), input(unique('rdm')), input(unique('rdm'))];
    for (const i of [done, back, review]) expect(await reserveRedemption(i)).toMatchObject({ status: 'processing' });
    // The earlier attempts: each wrote its change and stopped before its event.
    await saveRedemption(done.redemption_id, { status: 'completed', provider_transaction_id: 'tx-done' });
    await refundDebit({
      organization_id: t.organization_id,
      user_id: u.user_id,
      debit_operation_id: holdOperation(back.redemption_id),
      operation_id: refundOperation(back.redemption_id),
      reason: 'refund',
    });
    await saveRedemption(review.redemption_id, { status: 'needs_review', status_reason: 'no answer' });
    await eventsSettled();
    expect(rx.received(at)).toHaveLength(0);
    // The retries (twice each: a retry of the retry records nothing new either).
    for (let n = 0; n < 2; n += 1) {
      expect(await settleRedemption(done, { transaction_id: 'tx-done', pin_encrypted: null })).toEqual({
        redemption_id: done.redemption_id,
        status: 'completed',
      });
      expect(
        await releaseRedemption(back, { transaction_id: null, reason: 'The operator refused the top-up' }),
      ).toEqual({ redemption_id: back.redemption_id, status: 'refunded' });
      expect(await reviewRedemption(review, { transaction_id: null, reason: 'no answer' })).toEqual({
        redemption_id: review.redemption_id,
        status: 'needs_review',
      });
    }
    await eventsSettled();
    await exactly(at, 3);
    const events = eventsAt(ep.secret, at);
    expect(events.map((e) => [e.type, e.data.redemption_id]).sort()).toEqual(
      [
        ['redemption.completed', done.redemption_id],
        ['redemption.refunded', back.redemption_id],
        ['redemption.needs_review', review.redemption_id],
      ].sort(),
    );
    expect(events.find((e) => e.type === 'redemption.refunded')!.data).toMatchObject({
      points_spent: 100,
      points_refunded: 100,
      points_lapsed: 0,
      refund_entry_id: expect.any(String),
    });
    expect(events.find((e) => e.type === 'redemption.completed')!.data).toMatchObject({
      points_spent: 100,
      provider_transaction_id: 'tx-done',
    });
    expect((await call('GET', `/loyalty/points/${u.user_id}`, { key: t.adminKey })).body.points).toBe(800);
  }, 60_000);

  it('a scan state mirrored by the earlier attempt: the retry records the event, once', async () => {
    const t = await newTenant();
    const at = unique('/retried-scans');
    const ep = await addEndpoint(t, rx, at, SCAN_TYPES);
    const scan_id = unique('scan');
    const view = {
      id: scan_id,
      organization_id: t.organization_id,
      user_id: 'usr_retry',
      status: 'rejected',
      source: 'ticket_scan',
      products: [],
      total_points: 0,
      flags: ['no_products_recognized'],
      rejection_reason: 'No catalogue products were recognized on the receipt',
      updated_at: new Date().toISOString(),
    };
    await writeScanMirror(view);
    await eventsSettled();
    expect(rx.received(at)).toHaveLength(0);
    await mirrorScan(view);
    await mirrorScan(view);
    await eventsSettled();
    await exactly(at, 1);
    expect(eventsAt(ep.secret, at)[0]).toMatchObject({
      type: 'scan.rejected',
      created_at: view.updated_at,
      data: { scan_id, status: 'rejected', rejection_reason: 'no_products_recognized' },
    });
  }, 60_000);
});
