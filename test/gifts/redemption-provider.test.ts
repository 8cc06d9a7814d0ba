/**
 * Redemption through the Reloadly-style HTTP gift provider, on a platform of this test's own
 * (edge and one supervised worker, the suite's servers) configured with GIFT_PROVIDER=reloadly
 * against a mocked provider: a local node:http server that issues OAuth tokens, records every
 * delivery per customIdentifier, answers PROCESSING then SUCCESSFUL, refuses some numbers, and can
 * hold an order call open while the test kills the worker inside the fulfil step.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { httpProvider } from '../../activities/adapters/gift-provider.ts';
import { parseEnv } from '../../activities/core/config.ts';
import { generateSecret } from '../../activities/identity/api-keys.ts';
import { launchPlatform, type Platform } from '../../tools/platform.ts';
import { unique, until } from '../helpers/api.ts';
import { jsonServer } from '../helpers/json-server.ts';
import { isolatedPlatformEnv } from '../helpers/runtime.ts';

const queue = unique('redemption-provider');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'redemption-provider-'));
const adminKey = generateSecret();
const CLIENT = { id: 'client-test', secret: 'secret-test' };

interface Tx {
  transactionId: number;
  customIdentifier: string;
  status: string;
  polls: number;
  kind: string;
  errorMessage?: string;
}

/** The mocked provider's state: what a real one would hold, and what the test looks at. */
const mock = {
  tokens: 0,
  transactions: new Map<string, Tx>(),
  /** order calls per customIdentifier (a retried call counts here, a delivery only once) */
  orderCalls: new Map<string, number>(),
  lookups: new Map<string, number>(),
  requests: [] as { method: string; path: string; auth: string | undefined }[],
  /** the next order is recorded (delivered) but its answer is held until the connection closes */
  holdNext: false,
  held: [] as http.ServerResponse[],
  heldId: '',
};
let server: http.Server;
let providerUrl: string;
let platform: Platform;
const log: string[] = [];
let org: string;
let admin: string;
let ana: { key: string; user_id: string };

function providerServer(): http.Server {
  let next = 1000;
  return jsonServer(({ req, url, body, send, res }) => {
    mock.requests.push({ method: req.method!, path: url.pathname, auth: req.headers.authorization });
    if (url.pathname === '/oauth/token') {
      if (
        body.client_id !== CLIENT.id ||
        body.client_secret !== CLIENT.secret ||
        body.grant_type !== 'client_credentials'
      )
        return send(401, { message: 'bad client' });
      mock.tokens += 1;
      return send(200, { access_token: `tok-${mock.tokens}`, expires_in: 3600, token_type: 'Bearer' });
    }
    if (!/^Bearer tok-\d+$/.test(req.headers.authorization ?? '')) return send(401, { message: 'no token' });
    if (req.method === 'POST' && ['/topups', '/orders', '/pay'].includes(url.pathname)) {
      const id = String(body.customIdentifier);
      mock.orderCalls.set(id, (mock.orderCalls.get(id) ?? 0) + 1);
      if (mock.transactions.has(id))
        return send(409, { errorCode: 'DUPLICATED_CUSTOM_IDENTIFIER', message: 'Duplicate customIdentifier' });
      const phone = String(body.recipientPhone?.number ?? '');
      if (phone.endsWith('9999'))
        return send(400, { errorCode: 'INVALID_RECIPIENT', message: 'The operator does not serve this number' });
      const tx: Tx = {
        transactionId: (next += 1),
        customIdentifier: id,
        status: phone.endsWith('0002') || phone.endsWith('0003') ? 'PROCESSING' : 'SUCCESSFUL',
        polls: 0,
        kind: url.pathname,
      };
      if (phone.endsWith('0003')) tx.errorMessage = 'Operator timeout: the recharge was not applied';
      mock.transactions.set(id, tx);
      if (mock.holdNext) {
        mock.holdNext = false;
        mock.held.push(res);
        mock.heldId = id;
        return;
      }
      return send(200, tx);
    }
    if (req.method === 'GET' && url.pathname === '/transactions') {
      const id = url.searchParams.get('customIdentifier') ?? '';
      mock.lookups.set(id, (mock.lookups.get(id) ?? 0) + 1);
      const tx = mock.transactions.get(id);
      return send(200, { content: tx ? [tx] : [] });
    }
    const one = /^\/transactions\/(\d+)$/.exec(url.pathname);
    if (req.method === 'GET' && one) {
      const tx = [...mock.transactions.values()].find((t) => t.transactionId === Number(one[1]));
      if (!tx) return send(404, { message: 'not found' });
      tx.polls += 1;
      if (tx.status === 'PROCESSING' && tx.polls >= 2) tx.status = tx.errorMessage ? 'FAILED' : 'SUCCESSFUL';
      return send(200, tx);
    }
    const cards = /^\/orders\/transactions\/(\d+)\/cards$/.exec(url.pathname);
    if (req.method === 'GET' && cards)
      return send(200, [{ cardNumber: '4000111122223333', pinCode: '9876-5432-1000-4321' }]);
    send(404, { message: 'no such route' });
  });
}

async function api(method: string, route: string, key: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${platform.edgeUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json() };
}

const gift = async (g: object) => (await api('POST', '/api/gifts/gifts', admin, g)).body.gift.id as string;
const topUp = {
  gift_name: 'Airtel 500 NGN',
  gift_type: 'mobile_top-ups',
  country: 'NG',
  telco_supplier: 'Airtel Nigeria',
  recharge_amount: 500,
  points_value: 100,
};
const entries = async () => (await api('GET', `/loyalty/points/${ana.user_id}/history?limit=100`, admin)).body;
const final = (id: string) =>
  until(
    `redemption ${id} settled`,
    async () => (await api('GET', `/api/gifts/redemptions/${id}`, ana.key)).body.redemption,
    (r) => r.status !== 'processing',
    150_000,
  );

beforeAll(async () => {
  server = providerServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  providerUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const env = isolatedPlatformEnv(
    { queue, dataDir, adminKey },
    {
      WORKER_COUNT: '1',
      GIFT_PROVIDER: 'reloadly',
      GIFT_PROVIDER_URL: providerUrl,
      GIFT_PROVIDER_AUTH_URL: `${providerUrl}/oauth/token`,
      GIFT_PROVIDER_CLIENT_ID: CLIENT.id,
      GIFT_PROVIDER_CLIENT_SECRET: CLIENT.secret,
      LOG_LEVEL: 'warn',
    },
  );
  platform = await launchPlatform({
    cfg: parseEnv({ ...process.env, ...env }),
    freePorts: true,
    env,
    stdio: 'ignore',
    log: (line) => log.push(line),
  });
  const o = await api('POST', '/api/organizations', adminKey, { name: unique('Gifts'), tier: 'free' });
  org = o.body.organization.organization_id;
  admin = (
    await api('POST', '/generate_api_key', adminKey, {
      user_id: unique('admin'),
      organization_id: org,
      permissions: ['admin'],
    })
  ).body.api_key;
  const k = await api('POST', '/generate_api_key', admin, { user_id: unique('ana') });
  ana = { key: k.body.api_key, user_id: k.body.metadata.user_id };
  await api('PUT', '/loyalty/rules', admin, { actions: { grant: 1000 } });
  expect((await api('POST', `/loyalty/award-points/${ana.user_id}`, admin, { action_type: 'grant' })).status).toBe(200);
}, 300_000);

afterAll(async () => {
  for (const res of mock.held) res.destroy();
  await platform?.stop();
  await new Promise((r) => server?.close(r));
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('redemption through the HTTP gift provider (mocked)', () => {
  it('mocked provider: OAuth token fetched once and reused, customIdentifier = redemption id, PROCESSING polled until SUCCESSFUL, PINs read from the order', async () => {
    const g = await gift(topUp);
    const res = await api('POST', `/api/gifts/gifts/${g}/redeem`, ana.key, {
      user_id: ana.user_id,
      phone_number: '+2348031230002',
    });
    expect([200, 202]).toContain(res.status);
    const id = res.body.redemption.id;
    const done = await final(id);
    expect(done).toMatchObject({ status: 'completed', provider: 'reloadly', points_spent: 100, points_refunded: 0 });
    const tx = mock.transactions.get(id)!;
    expect(tx.kind).toBe('/topups');
    expect(done.provider_transaction_id).toBe(String(tx.transactionId));
    expect(tx.polls).toBeGreaterThanOrEqual(2); // answered PROCESSING, polled until final
    expect(mock.orderCalls.get(id)).toBe(1);

    const p = await gift({
      gift_name: 'Amazon 10 USD',
      gift_type: 'electronic_pins',
      country: 'US',
      supplier: 'Amazon',
      electronic_pin_amount: 10,
      points_value: 50,
    });
    const pinRes = await api('POST', `/api/gifts/gifts/${p}/redeem`, ana.key, { user_id: ana.user_id });
    const pinDone =
      pinRes.body.redemption.status === 'processing' ? await final(pinRes.body.redemption.id) : pinRes.body.redemption;
    expect(pinDone).toMatchObject({ status: 'completed', pin_code: '9876-5432-1000-4321', pin_masked: false });
    expect((await api('GET', `/api/gifts/redemptions/${pinDone.id}`, admin)).body.redemption.pin_code).toBe(
      '••••-••••-••••-4321',
    );
    expect(mock.transactions.get(pinDone.id)!.kind).toBe('/orders');

    // One token for every call, each call with it.
    expect(mock.tokens).toBe(1);
    const calls = mock.requests.filter((r) => r.path !== '/oauth/token');
    expect(calls.length).toBeGreaterThan(3);
    expect(calls.every((r) => r.auth === 'Bearer tok-1')).toBe(true);
  }, 200_000);

  it('mocked provider: a refusal (an order refused, or FAILED after PROCESSING) refunds the points with the provider reason', async () => {
    const g = await gift(topUp);
    const before = (await entries()).points;
    const refused = await api('POST', `/api/gifts/gifts/${g}/redeem`, ana.key, {
      user_id: ana.user_id,
      phone_number: '+2348031239999',
    });
    expect(refused.status).toBe(200);
    expect(refused.body.redemption).toMatchObject({
      status: 'refunded',
      points_refunded: 100,
      status_reason: 'The operator does not serve this number',
    });
    const failed = await api('POST', `/api/gifts/gifts/${g}/redeem`, ana.key, {
      user_id: ana.user_id,
      phone_number: '+2348031230003',
    });
    const failedDone =
      failed.body.redemption.status === 'processing' ? await final(failed.body.redemption.id) : failed.body.redemption;
    expect(failedDone).toMatchObject({
      status: 'refunded',
      status_reason: 'Operator timeout: the recharge was not applied',
    });
    const h = await entries();
    expect(h.points).toBe(before);
    for (const id of [refused.body.redemption.id, failedDone.id]) {
      expect(
        h.entries
          .filter((e: any) => e.operation_id.startsWith(`redemption:${id}:`))
          .map((e: any) => [e.reason, e.amount])
          .sort(),
      ).toEqual([
        ['redemption', -100],
        ['refund', 100],
      ]);
    }
  }, 200_000);

  it("mocked provider: an order sent again is read from the provider's duplicate answer as the first transaction, never a second delivery", async () => {
    const engine = httpProvider({
      url: providerUrl,
      auth_url: `${providerUrl}/oauth/token`,
      client_id: CLIENT.id,
      client_secret: CLIENT.secret,
    });
    const order = {
      custom_identifier: unique('rdm_engine'),
      kind: 'mobile_top-ups' as const,
      product: 'Airtel Nigeria',
      amount: 500,
      country: 'NG',
      phone_number: '+2348031234567',
    };
    const first = await engine.order(order);
    // Sent again as a first attempt would be (no lookup): the provider answers 409 duplicate.
    const again = await engine.order(order);
    expect(first).toMatchObject({ state: 'delivered', pin: null });
    expect(again).toEqual(first);
    expect(mock.orderCalls.get(order.custom_identifier)).toBe(2);
    expect([...mock.transactions.values()].filter((t) => t.customIdentifier === order.custom_identifier)).toHaveLength(
      1,
    );
    const wrong = httpProvider({
      url: providerUrl,
      auth_url: `${providerUrl}/oauth/token`,
      client_id: CLIENT.id,
      client_secret: 'not-it',
    });
    await expect(wrong.order({ ...order, custom_identifier: unique('rdm_engine') })).rejects.toMatchObject({
      status: 502,
    });
  });

  it('kills the worker between reserve and fulfil and shows the gift delivered once and the points debited once', async () => {
    const g = await gift(topUp);
    const worker = platform.processes.find((p) => p.name === 'worker 1')!;
    const victim = worker.current().pid!;
    const before = (await entries()).points;
    mock.holdNext = true;
    const answer = api('POST', `/api/gifts/gifts/${g}/redeem`, ana.key, {
      user_id: ana.user_id,
      phone_number: '+2348031234567',
      idempotency_key: 'kill-1',
    });
    // The order reached the provider (and was delivered there); its answer never leaves: the
    // worker is inside fulfil, after the hold.
    const id = await until(
      'the order held by the provider',
      async () => mock.heldId,
      (v) => v !== '',
      60_000,
    );
    expect((await entries()).points).toBe(before - 100);
    process.kill(victim, 'SIGKILL');
    const killedAt = Date.now();
    const first = await answer;
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    expect(first.body.redemption).toMatchObject({ id, status: 'processing' });
    const done = await final(id);
    const took = Date.now() - killedAt;
    expect(done).toMatchObject({
      status: 'completed',
      points_refunded: 0,
      provider_transaction_id: String(mock.transactions.get(id)!.transactionId),
    });
    process.stderr.write(
      `redemption kill drill: completed ${took} ms after the worker was killed; order calls ${mock.orderCalls.get(id)}, lookups ${mock.lookups.get(id)}\n`,
    );
    // The retry asked the provider by customIdentifier first: one delivery, whatever the calls.
    expect(mock.lookups.get(id)).toBeGreaterThanOrEqual(1);
    expect([...mock.transactions.values()].filter((t) => t.customIdentifier === id)).toHaveLength(1);
    expect(mock.orderCalls.get(id)).toBe(1);
    // The ledger: one hold, no refund.
    const h = await entries();
    expect(h.points).toBe(before - 100);
    expect(
      h.entries
        .filter((e: any) => e.operation_id.startsWith(`redemption:${id}:`))
        .map((e: any) => [e.reason, e.amount]),
    ).toEqual([['redemption', -100]]);
    expect(log).toContainEqual(expect.stringMatching(new RegExp(`^worker 1 \\(pid ${victim}\\) exited \\(SIGKILL\\)`)));
    // The same request again: the same redemption, nothing new.
    const again = await api('POST', `/api/gifts/gifts/${g}/redeem`, ana.key, {
      user_id: ana.user_id,
      phone_number: '+2348031234567',
      idempotency_key: 'kill-1',
    });
    expect(again.body).toMatchObject({ duplicate: true, redemption: { id, status: 'completed' } });
    expect((await entries()).total).toBe(h.total);
  }, 300_000);
});
