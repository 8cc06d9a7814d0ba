/**
 * Redemptions whose outcome is unknown: the provider may still deliver, so the points are never
 * refunded on a guess. Against a mocked Reloadly-style provider (a local node:http server: the
 * real one is a paid API) on a platform of this test's own with short limits (an order PROCESSING
 * for 6 s, two attempts of a provider call), an order whose status checks keep failing, one that
 * stays PROCESSING and one whose order call keeps failing each end `needs_review` with the hold
 * kept; admins list them and settle them (completed or refunded) through the API, once. A
 * "completed" settlement asks the provider first (PIN and transaction stored, its final refusal
 * 409, no answer: completed on the admin's word), so does a "refunded" one (a delivery is 409,
 * a refusal or no answer refunds), and the owner never sees who settled or why.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { parseEnv } from '../../activities/core/config.ts';
import { generateSecret } from '../../activities/identity/api-keys.ts';
import { launchPlatform, type Platform } from '../../tools/platform.ts';
import { call, unique, until } from '../helpers/api.ts';
import { jsonServer } from '../helpers/json-server.ts';
import { isolatedPlatformEnv } from '../helpers/runtime.ts';

const queue = unique('redemption-review');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'redemption-review-'));
const adminKey = generateSecret();
const CLIENT = { id: 'client-review', secret: 'secret-review' };

/** The mocked provider: by the number's last digits, what it does with an order. */
const mock = {
  orders: new Map<string, number>(),
  checks: new Map<string, number>(),
  next: 5000,
  txs: new Map<number, { id: string; status: string; phone: string; pinCode?: string; errorMessage?: string }>(),
  /** orders whose status checks fail (the provider cannot answer) */
  down: new Set<string>(),
  /** orders whose status checks take 1.5 s: requests sent together surely overlap */
  slow: new Set<string>(),
  /** PIN orders answer 503 (they may or may not have been taken) */
  failOrders: false,
  /** transactions found only by their customIdentifier (an order taken although its call failed) */
  late: new Map<string, { transactionId: number; customIdentifier: string; status: string; pinCode?: string }>(),
};
let server: http.Server;
let platform: Platform;
let admin: string;
let adminUser: string;
let ana: { key: string; user_id: string };
let giftId: string;
let pinGiftId: string;
let platformDb: string;

function providerServer(): http.Server {
  return jsonServer(({ req, url, body, send }) => {
    if (url.pathname === '/oauth/token') return send(200, { access_token: 'tok-1', expires_in: 3600 });
    if (req.method === 'POST' && url.pathname === '/topups') {
      const id = String(body.customIdentifier);
      const phone = String(body.recipientPhone?.number ?? '');
      mock.orders.set(id, (mock.orders.get(id) ?? 0) + 1);
      // 7777: the order call fails every time (it may or may not have been taken)
      if (phone.endsWith('7777')) return send(503, { message: 'upstream timeout' });
      const tx = { id, phone, status: phone.endsWith('1111') ? 'SUCCESSFUL' : 'PROCESSING' };
      const transactionId = (mock.next += 1);
      mock.txs.set(transactionId, tx);
      return send(200, { transactionId, customIdentifier: id, status: tx.status, phone });
    }
    // Electronic PINs: PROCESSING until the test decides (a tx's status, pinCode, errorMessage).
    if (req.method === 'POST' && url.pathname === '/orders') {
      const id = String(body.customIdentifier);
      mock.orders.set(id, (mock.orders.get(id) ?? 0) + 1);
      if (mock.failOrders) return send(503, { message: 'upstream timeout' });
      const transactionId = (mock.next += 1);
      mock.txs.set(transactionId, { id, phone: '', status: 'PROCESSING' });
      return send(200, { transactionId, customIdentifier: id, status: 'PROCESSING' });
    }
    if (req.method === 'GET' && url.pathname === '/transactions') {
      const late = mock.late.get(url.searchParams.get('customIdentifier') ?? '');
      return send(200, { content: late ? [late] : [] });
    }
    const one = /^\/transactions\/(\d+)$/.exec(url.pathname);
    if (req.method === 'GET' && one) {
      const tx = mock.txs.get(Number(one[1]));
      if (!tx) return send(404, { message: 'not found' });
      mock.checks.set(tx.id, (mock.checks.get(tx.id) ?? 0) + 1);
      // 5555: every status check fails; 6666: PROCESSING for ever
      if (tx.phone.endsWith('5555') || mock.down.has(tx.id)) return send(500, { message: 'internal error' });
      const answer = () =>
        send(200, {
          transactionId: Number(one[1]),
          customIdentifier: tx.id,
          status: tx.status,
          pinCode: tx.pinCode,
          errorMessage: tx.errorMessage,
        });
      if (mock.slow.has(tx.id)) return void setTimeout(answer, 1500);
      return answer();
    }
    send(404, { message: 'no such route' });
  });
}

// Through call() on this file's own platform: its answers are checked against the document too.
const api = (method: string, route: string, key: string | undefined, body?: unknown) =>
  call(method, route, { baseUrl: platform.edgeUrl, key, json: body });

const points = async () => (await api('GET', `/loyalty/points/${ana.user_id}`, admin)).body.points as number;
const entriesOf = async (id: string) =>
  (await api('GET', `/loyalty/points/${ana.user_id}/history?limit=100`, admin)).body.entries
    .filter((e: any) => e.operation_id.startsWith(`redemption:${id}:`))
    .map((e: any) => [e.reason, e.amount]);
const settled = (id: string) =>
  until(
    `redemption ${id} out of processing`,
    async () => (await api('GET', `/api/gifts/redemptions/${id}`, ana.key)).body.redemption,
    (r) => r.status !== 'processing',
    120_000,
  );
const settle = (id: string, key: string, body: object) => api('POST', `/api/gifts/redemptions/${id}/settle`, key, body);

async function redeem(phone: string): Promise<string> {
  const res = await api('POST', `/api/gifts/gifts/${giftId}/redeem`, ana.key, {
    user_id: ana.user_id,
    phone_number: phone,
    idempotency_key: unique('k'),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.redemption.id;
}

beforeAll(async () => {
  server = providerServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const env = isolatedPlatformEnv(
    { queue, dataDir, adminKey },
    {
      WORKER_COUNT: '1',
      GIFT_PROVIDER: 'reloadly',
      GIFT_PROVIDER_URL: url,
      GIFT_PROVIDER_CLIENT_ID: CLIENT.id,
      GIFT_PROVIDER_CLIENT_SECRET: CLIENT.secret,
      GIFT_PROCESSING_LIMIT_SECONDS: '6',
      GIFT_PROVIDER_ATTEMPTS: '2',
      LOG_LEVEL: 'warn',
    },
  );
  platformDb = env.MONGODB_URI;
  platform = await launchPlatform({
    cfg: parseEnv({ ...process.env, ...env }),
    freePorts: true,
    env,
    stdio: 'ignore',
    log: () => undefined,
  });
  const org = (await api('POST', '/api/organizations', adminKey, { name: unique('Review'), tier: 'free' })).body
    .organization.organization_id;
  const a = await api('POST', '/generate_api_key', adminKey, {
    user_id: unique('admin'),
    organization_id: org,
    permissions: ['admin'],
  });
  admin = a.body.api_key;
  adminUser = a.body.metadata.user_id;
  const k = await api('POST', '/generate_api_key', admin, { user_id: unique('ana') });
  ana = { key: k.body.api_key, user_id: k.body.metadata.user_id };
  await api('PUT', '/loyalty/rules', admin, { actions: { grant: 1000 } });
  expect((await api('POST', `/loyalty/award-points/${ana.user_id}`, admin, { action_type: 'grant' })).status).toBe(200);
  giftId = (
    await api('POST', '/api/gifts/gifts', admin, {
      gift_name: 'Airtel 500',
      gift_type: 'mobile_top-ups',
      country: 'NG',
      telco_supplier: 'Airtel',
      recharge_amount: 500,
      points_value: 100,
    })
  ).body.gift.id;
  pinGiftId = (
    await api('POST', '/api/gifts/gifts', admin, {
      gift_name: 'Steam 20',
      gift_type: 'electronic_pins',
      country: 'NG',
      supplier: 'Steam',
      electronic_pin_amount: 20,
      points_value: 100,
    })
  ).body.gift.id;
}, 300_000);

afterAll(async () => {
  await platform?.stop();
  await new Promise((r) => server?.close(r));
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('a redemption whose outcome is unknown (mocked provider)', () => {
  it('mocked provider: status checks failing past their retries, an order PROCESSING past the limit, an order call failing: needs_review, the hold kept, listed for admins', async () => {
    const checks = await redeem('+2348031235555');
    const stuck = await redeem('+2348031236666');
    const unsent = await redeem('+2348031237777');
    for (const id of [checks, stuck, unsent]) {
      const r = await settled(id);
      expect(r, id).toMatchObject({ status: 'needs_review', points_spent: 100, points_refunded: 0, settlement: null });
      expect(r.status_reason).toEqual(expect.any(String));
      // The points stay held: nothing was given back while the provider may still deliver.
      expect(await entriesOf(id)).toEqual([['redemption', -100]]);
    }
    expect(mock.checks.get(checks)).toBe(2);
    expect(mock.checks.get(stuck)).toBeGreaterThanOrEqual(2);
    expect(mock.orders.get(unsent)).toBe(2);
    expect(await points()).toBe(700);
    const listed = await api('GET', '/api/gifts/redemptions?status=needs_review', admin);
    expect(listed.body.redemptions.map((r: any) => r.id).sort()).toEqual([checks, stuck, unsent].sort());
    // Its owner sees it too (202 while it is open), and a repeat of the request joins it.
    expect((await api('GET', `/api/gifts/redemptions/${checks}`, ana.key)).body.redemption.status).toBe('needs_review');
  }, 200_000);

  it('an admin settles one as refunded (the points back, once) and one as completed (the hold is the debit); a repeat is a duplicate, a different outcome 409', async () => {
    const [refundIt, completeIt] = (
      await api('GET', '/api/gifts/redemptions?status=needs_review&limit=100', admin)
    ).body.redemptions.map((r: any) => r.id);
    const before = await points();
    const refunded = await settle(refundIt, admin, {
      outcome: 'refunded',
      reason: 'Reloadly support confirmed the top-up failed',
    });
    expect(refunded.status, JSON.stringify(refunded.body)).toBe(200);
    expect(refunded.body).toMatchObject({
      success: true,
      duplicate: false,
      redemption: {
        id: refundIt,
        status: 'refunded',
        points_refunded: 100,
        settlement: {
          outcome: 'refunded',
          settled_by: adminUser,
          reason: 'Reloadly support confirmed the top-up failed',
          settled_at: expect.any(String),
        },
      },
    });
    expect(await points()).toBe(before + 100);
    expect((await entriesOf(refundIt)).sort()).toEqual([
      ['redemption', -100],
      ['refund', 100],
    ]);
    const again = await settle(refundIt, admin, { outcome: 'refunded' });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ duplicate: true, redemption: { status: 'refunded' } });
    const other = await settle(refundIt, admin, { outcome: 'completed' });
    expect(other.status).toBe(409);
    expect(other.body).toEqual({ success: false, error: expect.stringMatching(/already settled as refunded/) });
    // One audit record (the duplicate and the refusal add none), saying what the settlement changed.
    const records = (await api('GET', `/api/audit?action=redemption.settle&target_id=${refundIt}`, admin)).body.records;
    expect(records.map((r: any) => r.changes.status)).toEqual([{ from: 'needs_review', to: 'refunded' }]);
    expect(await points()).toBe(before + 100);
    expect((await entriesOf(refundIt)).sort()).toEqual([
      ['redemption', -100],
      ['refund', 100],
    ]);
    // Its owner (a basic key) sees the outcome with a fixed reason: not who settled it nor the
    // admin's note, neither on the redemption nor in the points history.
    const mine = (await api('GET', `/api/gifts/redemptions/${refundIt}`, ana.key)).body.redemption;
    expect(mine).toMatchObject({
      status: 'refunded',
      settlement: { outcome: 'refunded', settled_by: null, reason: expect.any(String), settled_at: expect.any(String) },
    });
    const history = (await api('GET', `/loyalty/points/${ana.user_id}/history?limit=100`, ana.key)).body;
    const listedMine = (await api('GET', '/api/gifts/redemptions?limit=100', ana.key)).body.redemptions.find(
      (r: any) => r.id === refundIt,
    );
    for (const seen of [mine, listedMine, history]) {
      expect(JSON.stringify(seen)).not.toContain('Reloadly support');
      expect(JSON.stringify(seen)).not.toContain(adminUser);
    }

    const completed = await settle(completeIt, admin, {
      outcome: 'completed',
      reason: 'delivered, seen on the operator portal',
    });
    expect(completed.status, JSON.stringify(completed.body)).toBe(200);
    expect(completed.body.redemption).toMatchObject({
      status: 'completed',
      points_refunded: 0,
      settlement: { outcome: 'completed', settled_by: adminUser },
    });
    expect(await entriesOf(completeIt)).toEqual([['redemption', -100]]);
    expect((await settle(completeIt, admin, { outcome: 'refunded' })).status).toBe(409);
    expect(await points()).toBe(before + 100);
  }, 120_000);

  it('two different settlements at once: exactly one wins; a basic key cannot settle; only a redemption in needs_review can be settled', async () => {
    const [last] = (await api('GET', '/api/gifts/redemptions?status=needs_review', admin)).body.redemptions.map(
      (r: any) => r.id,
    );
    expect(last).toBeDefined();
    const before = await points();
    // The owner's basic key: 403 in the gifts' error shape, nothing changed.
    const basic = await settle(last, ana.key, { outcome: 'refunded' });
    expect(basic.status).toBe(403);
    expect(basic.body.success).toBe(false);
    expect((await api('GET', `/api/gifts/redemptions/${last}`, admin)).body.redemption.status).toBe('needs_review');
    expect((await settle(last, admin, { outcome: 'lost' })).status).toBe(400);

    const answers = await Promise.all([
      settle(last, admin, { outcome: 'completed' }),
      settle(last, admin, { outcome: 'refunded' }),
      settle(last, admin, { outcome: 'refunded' }),
    ]);
    const won = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 409);
    expect(won.length + refused.length).toBe(3);
    const outcome = won[0].body.redemption.status;
    expect(won.every((a) => a.body.redemption.status === outcome)).toBe(true);
    expect(refused.length).toBe(outcome === 'completed' ? 2 : 1);
    expect(await entriesOf(last)).toHaveLength(outcome === 'refunded' ? 2 : 1);
    expect(await points()).toBe(before + (outcome === 'refunded' ? 100 : 0));

    // Not in needs_review: a redemption delivered normally, and one that does not exist.
    const done = await api('POST', `/api/gifts/gifts/${giftId}/redeem`, ana.key, {
      user_id: ana.user_id,
      phone_number: '+2348031231111',
    });
    expect(done.body.redemption.status).toBe('completed');
    const notReview = await settle(done.body.redemption.id, admin, { outcome: 'refunded' });
    expect(notReview.status).toBe(409);
    expect(notReview.body.error).toMatch(/needs_review/);
    expect((await settle('rdm_nothing', admin, { outcome: 'refunded' })).status).toBe(404);
  }, 120_000);

  it('mocked provider: a "completed" settlement asks the provider once: delivered stores the PIN and transaction; a final refusal is 409 naming it (then refundable); no answer completes on the admin\'s word, recorded without a PIN', async () => {
    const redeemPin = async () => {
      const res = await api('POST', `/api/gifts/gifts/${pinGiftId}/redeem`, ana.key, {
        user_id: ana.user_id,
        idempotency_key: unique('k'),
      });
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      return res.body.redemption.id as string;
    };
    const [delivered, failed, silent] = [await redeemPin(), await redeemPin(), await redeemPin()];
    for (const id of [delivered, failed, silent]) expect((await settled(id)).status).toBe('needs_review');
    const txOf = (id: string) => [...mock.txs.entries()].find(([, t]) => t.id === id)!;
    // Meanwhile the provider settled them its way.
    Object.assign(txOf(delivered)[1], { status: 'SUCCESSFUL', pinCode: '1234-5678-9012-3456' });
    Object.assign(txOf(failed)[1], { status: 'FAILED', errorMessage: 'Out of stock at the supplier' });
    mock.down.add(silent);
    const before = await points();

    const checks = mock.checks.get(delivered) ?? 0;
    const ok = await settle(delivered, admin, { outcome: 'completed', reason: 'seen on the portal' });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.redemption).toMatchObject({
      status: 'completed',
      provider_transaction_id: String(txOf(delivered)[0]),
      pin_masked: true,
      pin_code: expect.stringMatching(/3456$/),
    });
    expect(mock.checks.get(delivered)).toBe(checks + 1);
    expect((await api('GET', `/api/gifts/redemptions/${delivered}`, ana.key)).body.redemption).toMatchObject({
      status: 'completed',
      pin_code: '1234-5678-9012-3456',
      pin_masked: false,
    });
    const again = await settle(delivered, admin, { outcome: 'completed' });
    expect(again.body).toMatchObject({ duplicate: true, redemption: { status: 'completed' } });
    expect(mock.checks.get(delivered)).toBe(checks + 1);

    // Two at once: the second joins the first and shares its refusal.
    const failedChecks = mock.checks.get(failed) ?? 0;
    mock.slow.add(failed); // the first's status check is still out when the second arrives
    const nos = await Promise.all([
      settle(failed, admin, { outcome: 'completed' }),
      settle(failed, admin, { outcome: 'completed' }),
    ]);
    mock.slow.delete(failed);
    for (const no of nos) {
      expect(no.status, JSON.stringify(no.body)).toBe(409);
      expect(no.body).toEqual({ success: false, error: expect.stringMatching(/Out of stock at the supplier/) });
    }
    // Joined, not asked twice: one status check for both requests.
    expect(mock.checks.get(failed)).toBe(failedChecks + 1);
    expect((await api('GET', `/api/gifts/redemptions/${failed}`, admin)).body.redemption).toMatchObject({
      status: 'needs_review',
      settlement: null,
    });
    expect(await entriesOf(failed)).toEqual([['redemption', -100]]);
    const refunded = await settle(failed, admin, { outcome: 'refunded' });
    expect(refunded.status, JSON.stringify(refunded.body)).toBe(200);
    expect(refunded.body.redemption).toMatchObject({ status: 'refunded', points_refunded: 100 });

    const word = await settle(silent, admin, { outcome: 'completed' });
    expect(word.status, JSON.stringify(word.body)).toBe(200);
    expect(word.body.redemption).toMatchObject({
      status: 'completed',
      pin_code: null,
      status_reason: expect.stringMatching(/no PIN/i),
    });
    expect(await points()).toBe(before + 100);
  }, 200_000);

  const redeemPin = async () => {
    const res = await api('POST', `/api/gifts/gifts/${pinGiftId}/redeem`, ana.key, {
      user_id: ana.user_id,
      idempotency_key: unique('k'),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    return res.body.redemption.id as string;
  };
  const txOf = (id: string) => [...mock.txs.entries()].find(([, t]) => t.id === id)!;
  const checksOf = (id: string) => mock.checks.get(id) ?? 0;

  it('mocked provider: a "refunded" settlement asks the provider once too: delivered is 409 naming it (nothing written, the hold kept), then "completed" works', async () => {
    const delivered = await redeemPin();
    expect((await settled(delivered)).status).toBe('needs_review');
    Object.assign(txOf(delivered)[1], { status: 'SUCCESSFUL', pinCode: '4321-8765-2109-6543' });
    const before = await points();
    // The provider delivered: refunding would give the user both the gift and the points.
    const checks = checksOf(delivered);
    mock.slow.add(delivered); // the first's status check is still out when the second arrives
    const nos = await Promise.all([
      settle(delivered, admin, { outcome: 'refunded', reason: 'looks failed' }),
      settle(delivered, admin, { outcome: 'refunded' }),
    ]);
    mock.slow.delete(delivered);
    for (const no of nos) {
      expect(no.status, JSON.stringify(no.body)).toBe(409);
      expect(no.body).toEqual({ success: false, error: expect.stringMatching(/delivered.*settle it as completed/) });
    }
    expect(checksOf(delivered)).toBe(checks + 1);
    expect((await api('GET', `/api/gifts/redemptions/${delivered}`, admin)).body.redemption).toMatchObject({
      status: 'needs_review',
      settlement: null,
      points_refunded: 0,
    });
    expect(await entriesOf(delivered)).toEqual([['redemption', -100]]);
    expect(await points()).toBe(before);
    const ok = await settle(delivered, admin, { outcome: 'completed' });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.redemption).toMatchObject({
      status: 'completed',
      provider_transaction_id: String(txOf(delivered)[0]),
      pin_code: expect.stringMatching(/6543$/),
    });
    expect(await entriesOf(delivered)).toEqual([['redemption', -100]]);
    expect(await points()).toBe(before);
  }, 120_000);

  it('mocked provider: a "refunded" settlement of an order the provider says refused, or cannot answer for, refunds once after asking it', async () => {
    const [failed, silent] = [await redeemPin(), await redeemPin()];
    for (const id of [failed, silent]) expect((await settled(id)).status).toBe('needs_review');
    Object.assign(txOf(failed)[1], { status: 'FAILED', errorMessage: 'Card out of stock' });
    mock.down.add(silent);
    const before = await points();
    // One question each (the silent one's two attempts failing: GIFT_PROVIDER_ATTEMPTS is 2 here).
    for (const [id, asked, said] of [
      [failed, 1, /provider confirmed the order failed/],
      [silent, 2, /provider did not confirm/],
    ] as const) {
      const checks = checksOf(id);
      const refunded = await settle(id, admin, { outcome: 'refunded' });
      expect(refunded.status, JSON.stringify(refunded.body)).toBe(200);
      expect(refunded.body.redemption).toMatchObject({
        status: 'refunded',
        points_refunded: 100,
        status_reason: expect.stringMatching(said),
        settlement: { outcome: 'refunded', settled_by: adminUser },
      });
      expect(checksOf(id), id).toBe(checks + asked);
      expect((await entriesOf(id)).sort()).toEqual([
        ['redemption', -100],
        ['refund', 100],
      ]);
    }
    expect(await points()).toBe(before + 200);
  }, 120_000);

  it('mocked provider: an order whose call failed (no transaction id known) is looked up by its customIdentifier when settled as completed: the transaction and PIN are stored', async () => {
    mock.failOrders = true;
    const res = await api('POST', `/api/gifts/gifts/${pinGiftId}/redeem`, ana.key, {
      user_id: ana.user_id,
      idempotency_key: unique('k'),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const id = res.body.redemption.id as string;
    expect(await settled(id)).toMatchObject({ status: 'needs_review', provider_transaction_id: null });
    mock.failOrders = false;
    // The provider had taken it after all, and delivered.
    mock.late.set(id, {
      transactionId: 9001,
      customIdentifier: id,
      status: 'SUCCESSFUL',
      pinCode: '9999-8888-7777-6666',
    });
    const ok = await settle(id, admin, { outcome: 'completed' });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.redemption).toMatchObject({
      status: 'completed',
      provider_transaction_id: '9001',
      pin_code: expect.stringMatching(/6666$/),
    });
    expect((await api('GET', `/api/gifts/redemptions/${id}`, ana.key)).body.redemption).toMatchObject({
      pin_code: '9999-8888-7777-6666',
      settlement: { outcome: 'completed', settled_by: null },
    });
  }, 120_000);

  it("an open redemption of an erased user is settled refunded: the points go back to the tombstone's books, the record closes, no person is written back", async () => {
    const k = await api('POST', '/generate_api_key', admin, { user_id: unique('bob') });
    const bob = { key: k.body.api_key as string, user_id: k.body.metadata.user_id as string };
    expect((await api('POST', `/loyalty/award-points/${bob.user_id}`, admin, { action_type: 'grant' })).status).toBe(
      200,
    );
    const phone = '+2348031246666';
    const res = await api('POST', `/api/gifts/gifts/${giftId}/redeem`, bob.key, {
      user_id: bob.user_id,
      phone_number: phone,
      idempotency_key: unique('k'),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const id = res.body.redemption.id as string;
    expect(
      (
        await until(
          'in review',
          async () => (await api('GET', `/api/gifts/redemptions/${id}`, admin)).body.redemption,
          (r) => r.status !== 'processing',
          120_000,
        )
      ).status,
    ).toBe('needs_review');

    expect((await api('DELETE', `/api/users/${bob.user_id}`, admin, {})).status).toBe(202);
    await until(
      'the erasure completed',
      async () => (await api('GET', `/api/users/${bob.user_id}/erasure`, admin)).body.erasure,
      (e) => e?.status === 'completed',
      180_000,
      500,
    );

    const note = `Bob at ${phone} says it never came`;
    const refunded = await settle(id, admin, { outcome: 'refunded', reason: note });
    expect(refunded.status, JSON.stringify(refunded.body)).toBe(200);
    expect(refunded.body.redemption).toMatchObject({ status: 'refunded', points_refunded: 100 });
    const record = (await api('GET', `/api/gifts/redemptions/${id}`, admin)).body.redemption;
    expect(record.status).toBe('refunded');
    expect(record.user_id).toMatch(/^del_/);
    expect(JSON.stringify(record)).not.toContain(bob.user_id);
    expect(JSON.stringify(record)).not.toContain(phone);
    expect(JSON.stringify(record)).not.toContain('Bob at');

    // The books: the hold and its refund, both the tombstone's, and nothing left under the user's id.
    const db = await mongoose.createConnection(platformDb).asPromise();
    try {
      const entries = await db
        .collection('ledger_entries')
        .find({ operation_id: { $regex: `^redemption:${id}:` } })
        .toArray();
      expect(entries.map((e) => [e.reason, e.amount, e.user_id]).sort()).toEqual([
        ['redemption', -100, record.user_id],
        ['refund', 100, record.user_id],
      ]);
      const tombstone = await db
        .collection('ledger_entries')
        .find({ user_id: record.user_id })
        .sort({ seq: 1 })
        .toArray();
      expect(tombstone.reduce((n, e) => n + e.amount, 0)).toBe(1000);
      expect(tombstone.at(-1)!.balance_after).toBe(1000);
      expect(await db.collection('ledger_entries').countDocuments({ user_id: bob.user_id })).toBe(0);
      const stored = await db.collection('gift_redemptions').findOne({ _id: id as never });
      expect(JSON.stringify(stored)).not.toContain(phone);
      expect(JSON.stringify(stored)).not.toContain(bob.user_id);
    } finally {
      await db.close();
    }
  }, 300_000);
});
