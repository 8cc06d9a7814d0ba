import Stripe from 'stripe';
import { afterAll, describe, expect, inject, it } from 'vitest';

import { adminKey, basicUser, call, newTenant, unique } from '../helpers/api.ts';
import { startExtraEdge, stopEdges } from '../helpers/edge-process.ts';
import { useSuiteClients } from '../helpers/runtime.ts';

const stripe = new Stripe('sk_test_unused');
const secret = () => inject('platformEnv').PAYMENT_WEBHOOK_SECRET;

function signed(event: object, opts: { secret?: string; timestamp?: number } = {}) {
  const payload = JSON.stringify(event);
  const header = stripe.webhooks.generateTestHeaderString({
    payload,
    secret: opts.secret ?? secret(),
    timestamp: opts.timestamp,
  });
  return { body: payload, headers: { 'payment-signature': header } };
}
const hook = (s: { body: string; headers: Record<string, string> }) =>
  call('POST', '/api/billing/webhooks/payment', { body: s.body, contentType: 'application/json', headers: s.headers });
const event = (type: string, object: object) => ({
  id: unique('evt'),
  object: 'event',
  type,
  livemode: false,
  created: Math.floor(Date.now() / 1000),
  data: { object },
});

async function setup() {
  const id = unique('pkg');
  const created = await call('POST', '/api/billing/packages', {
    key: adminKey(),
    json: { id, name: 'Starter', tokens: 1000, price: 9.99, currency: 'usd', validity_days: 30 },
  });
  expect(created.status).toBe(201);
  const t = await newTenant();
  const user = await basicUser(t);
  const usage = async () => (await call('GET', `/api/billing/usage/${user.user_id}`, { key: user.key })).body.usage;
  const buy = (token: string, extra: object = {}) =>
    call('POST', '/api/billing/purchase-tokens', {
      key: user.key,
      json: { user_id: user.user_id, package_id: id, payment_method: { type: 'card', token }, ...extra },
    });
  return { id, t, user, usage, buy };
}

describe('token billing', () => {
  it('sells packages (system admin creates them)', async () => {
    const { id, t } = await setup();
    expect(
      (
        await call('POST', '/api/billing/packages', {
          key: t.adminKey,
          json: { name: 'x', tokens: 1, price: 1, currency: 'USD', validity_days: 1 },
        })
      ).status,
    ).toBe(403);
    const list = await call('GET', '/api/billing/packages', { key: t.adminKey });
    expect(list.body.packages.find((p: any) => p.id === id)).toMatchObject({
      name: 'Starter',
      tokens: 1000,
      price: 9.99,
      currency: 'USD',
      validity_days: 30,
    });
    expect(
      (
        await call('POST', '/api/billing/packages', {
          key: adminKey(),
          json: { id, name: 'dup', tokens: 1, price: 1, currency: 'USD', validity_days: 1 },
        })
      ).status,
    ).toBe(409);
  });

  it('credits a successful sandbox purchase once, with its expiry; the same key for another package is 409; declines and authentication are 402 and credit nothing', async () => {
    const { id, user, usage, buy } = await setup();
    const ok = await buy('pm_card_visa', { idempotency_key: 'order-1' });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body).toMatchObject({
      success: true,
      status: 'succeeded',
      provider: 'sandbox',
      sandbox: true,
      package_details: { id, tokens: 1000 },
    });
    const days = (Date.parse(ok.body.package_details.expiry_date) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThan(30.1);
    const again = await buy('pm_card_visa', { idempotency_key: 'order-1' });
    expect(again.body.transaction_id).toBe(ok.body.transaction_id);
    const other = await call('POST', '/api/billing/packages', {
      key: adminKey(),
      json: { name: 'Other', tokens: 5, price: 1, currency: 'USD', validity_days: 1 },
    });
    expect(other.status, JSON.stringify(other.body)).toBeLessThan(300);
    const otherId = other.body.package?.id ?? other.body.id;
    const reused = await call('POST', '/api/billing/purchase-tokens', {
      key: user.key,
      json: {
        user_id: user.user_id,
        package_id: otherId,
        payment_method: { type: 'card', token: 'pm_card_visa' },
        idempotency_key: 'order-1',
      },
    });
    expect(reused.status, JSON.stringify(reused.body)).toBe(409);
    expect(reused.body.detail).toMatch(/idempotency_key: already used/);
    expect(await usage()).toMatchObject({
      total_tokens: 0,
      remaining_tokens: 1000,
      usage_by_agent: {},
      period: new Date().toISOString().slice(0, 7),
    });

    const declined = await buy('pm_card_chargeDeclined');
    expect(declined.status).toBe(402);
    expect(declined.body.detail).toBe('Payment declined: Your card was declined. (sandbox payment provider)');
    const auth = await buy('pm_card_authenticationRequired');
    expect(auth.status).toBe(402);
    expect(auth.body.detail).toMatch(/requires authentication/);
    expect((await buy('tok_unknown')).status).toBe(422);
    expect(
      (
        await call('POST', '/api/billing/purchase-tokens', {
          key: (await setup()).user.key,
          json: { user_id: 'x', package_id: 'nope', payment_method: { type: 'card', token: 'pm_card_visa' } },
        })
      ).status,
    ).toBe(403);
    expect((await usage()).remaining_tokens).toBe(1000);
  });

  it('verifies webhook signatures: wrong secret, stale, tampered and unsigned are 400 and change nothing', async () => {
    const { user, usage } = await setup();
    const e = event('payment_intent.succeeded', {
      id: 'pi_x',
      object: 'payment_intent',
      metadata: { transaction_id: 'txn_none', user_id: user.user_id },
    });
    for (const bad of [
      signed(e, { secret: 'whsec_wrong' }),
      signed(e, { timestamp: Math.floor(Date.now() / 1000) - 600 }),
      { ...signed(e), body: JSON.stringify({ ...e, type: 'charge.refunded' }) },
      { body: JSON.stringify(e), headers: {} },
    ]) {
      const res = await hook(bad);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ detail: 'Invalid payment webhook signature' });
    }
    const viaStripeHeader = signed(event('customer.created', { id: 'cus_1', object: 'customer' }));
    const ok = await hook({
      body: viaStripeHeader.body,
      headers: { 'stripe-signature': viaStripeHeader.headers['payment-signature'] },
    });
    expect(ok.body).toEqual({ status: 'success' }); // unknown types are acknowledged (and recorded)
    expect((await usage()).remaining_tokens).toBe(0);
  });

  it('credits a purchase from payment_intent.succeeded exactly once, even replayed 10 times at once; failures and refunds', async () => {
    const { user, usage, buy } = await setup();
    // The purchase waits for authentication; the provider reports the outcome by webhook.
    const first = await buy('pm_card_authenticationRequired');
    expect(first.status).toBe(402);
    expect(first.body).toMatchObject({
      status: 'requires_action',
      transaction_id: expect.stringMatching(/^txn_/),
      payment_intent_id: expect.any(String),
    });
    const succeeded = signed(
      event('payment_intent.succeeded', {
        id: first.body.payment_intent_id,
        object: 'payment_intent',
        metadata: { transaction_id: first.body.transaction_id, user_id: user.user_id },
      }),
    );
    const replies = await Promise.all(Array.from({ length: 10 }, () => hook(succeeded)));
    expect(replies.map((r) => r.status)).toEqual(Array(10).fill(200));
    // acknowledged once the run started: the credit follows
    const settled = async (want: (u: any) => boolean) => {
      for (let i = 0; i < 100; i += 1) {
        const u = await usage();
        if (want(u)) return u;
        await new Promise((r) => setTimeout(r, 100));
      }
      return usage();
    };
    expect((await settled((u) => u.remaining_tokens === 1000)).remaining_tokens).toBe(1000);
    expect((await hook(succeeded)).status).toBe(200); // later replay: still once
    await new Promise((r) => setTimeout(r, 500));
    expect((await usage()).remaining_tokens).toBe(1000);

    const second = await buy('pm_card_authenticationRequired');
    const failed = signed(
      event('payment_intent.payment_failed', {
        id: second.body.payment_intent_id,
        object: 'payment_intent',
        metadata: { transaction_id: second.body.transaction_id },
        last_payment_error: { message: 'Authentication failed' },
      }),
    );
    expect((await hook(failed)).status).toBe(200);

    const refund = signed(
      event('charge.refunded', { id: 'ch_1', object: 'charge', payment_intent: first.body.payment_intent_id }),
    );
    expect((await hook(refund)).status).toBe(200);
    const after = await settled((u) => u.remaining_tokens === 0);
    expect(after.remaining_tokens).toBe(0);
    expect(after.credits[0]).toMatchObject({ transaction_id: first.body.transaction_id, refunded: true, left: 0 });
  });
});

describe('purchases without a payment provider', () => {
  const clients = useSuiteClients();
  afterAll(() => stopEdges());

  it('the payment webhook without PAYMENT_WEBHOOK_SECRET answers what a purchase answers: 503 payment provider not configured, nothing started', async () => {
    const url = await startExtraEdge({ PAYMENT_WEBHOOK_SECRET: '' });
    const body = JSON.stringify({ id: 'evt_unconfigured', type: 'payment_intent.succeeded', data: { object: {} } });
    const res = await call('POST', '/api/billing/webhooks/payment', {
      baseUrl: url,
      body,
      contentType: 'application/json',
      headers: { 'stripe-signature': 't=1,v1=00' },
    });
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ detail: 'payment provider not configured' });
    expect(
      await clients.db.collection('billing_payment_events').countDocuments({ _id: 'evt_unconfigured' as never }),
    ).toBe(0);
    await expect(clients.temporal.workflow.getHandle('payment:evt_unconfigured').describe()).rejects.toThrow();
  });

  it('test payment methods buy nothing unless PAYMENTS_TEST_MODE is on: 503, no purchase, no tokens', async () => {
    // An edge with no Stripe key and the test mode left at its default (off); the suite's edge has it on.
    const url = await startExtraEdge({ STRIPE_SECRET_KEY: '', PAYMENTS_TEST_MODE: '' });
    const { id, user, usage } = await setup();
    const res = await fetch(`${url}/api/billing/purchase-tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        user_id: user.user_id,
        package_id: id,
        payment_method: { type: 'card', token: 'pm_card_visa' },
        idempotency_key: 'free-1',
      }),
    });
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ detail: 'payment provider not configured' });
    expect((await usage()).remaining_tokens).toBe(0);
    // no purchase was recorded
    expect(await clients.db.collection('billing_purchases').countDocuments({ user_id: user.user_id })).toBe(0);
    // the same purchase through the suite's edge (test mode on) succeeds
    const again = await call('POST', '/api/billing/purchase-tokens', {
      key: user.key,
      json: {
        user_id: user.user_id,
        package_id: id,
        payment_method: { type: 'card', token: 'pm_card_visa' },
        idempotency_key: 'free-1',
      },
    });
    expect(again.status).toBe(200);
    expect((await usage()).remaining_tokens).toBe(1000);
  }, 120_000);
});
