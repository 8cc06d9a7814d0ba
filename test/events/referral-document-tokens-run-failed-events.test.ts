/**
 * Outgoing events of referrals, documents, token purchases and scheduled runs, over HTTP with a
 * local receiver (Standard Webhooks signatures checked with the `standardwebhooks` library): each
 * arrives once per change with its data, and a refused change emits nothing. The retry paths (a
 * step whose change an earlier attempt applied before it stopped) are driven with the activities
 * in this process, since a crash between a change and its event cannot be provoked over HTTP.
 */
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

import { applyPaymentEvent, creditPurchase } from '../../activities/billing/billing.ts';
import { insertPurchase, movePurchase } from '../../activities/billing/store.ts';
import { eventId, eventsSettled } from '../../activities/events/index.ts';
import { completeReferral, recordReferral } from '../../activities/loyalty/referrals.ts';
import { completeReferralDoc } from '../../activities/loyalty/store.ts';
import { runScheduledEvent } from '../../activities/scheduler/event-runs.ts';
import { insertRun } from '../../activities/scheduler/store.ts';
import { adminKey, basicUser, call, fileForm, newTenant, type Tenant, unique, until } from '../helpers/api.ts';
import { addEndpoint, receivedAt, type Receiver, startReceiver, verified } from '../helpers/receiver.ts';
import { useSuiteClients, useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();
const suite = useSuiteClients();

let rx: Receiver;
beforeAll(async () => {
  rx = await startReceiver();
});
afterAll(async () => {
  await eventsSettled();
  await rx.close();
});

const quiet = (ms = 1500) => new Promise((r) => setTimeout(r, ms));
const logOf = async (t: Tenant, type: string) =>
  (await call('GET', `/api/events?type=${type}`, { key: t.adminKey })).body.events as Array<{
    id: string;
    data: Record<string, unknown>;
  }>;
const iso = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

describe('referral.completed', () => {
  const refer = (t: Tenant, referred: string, referrer: string) =>
    call('POST', '/loyalty/process-referral', {
      key: t.adminKey,
      json: { referred_internal_id: referred, referrer_internal_id: referrer },
    });

  it('arrives once per referral with its parties and points; a repeat, a second referrer and a referral back emit nothing', async () => {
    const t = await newTenant();
    await call('PUT', '/loyalty/rules', { key: t.adminKey, json: { referral_points: 120, referred_points: 40 } });
    const path = unique('/referral');
    const ep = await addEndpoint(t, rx, path, ['referral.completed']);
    const [a, b, c] = [await basicUser(t), await basicUser(t), await basicUser(t)];
    const res = await refer(t, b.user_id, a.user_id);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await refer(t, b.user_id, a.user_id)).body.duplicate).toBe(true);
    expect((await refer(t, b.user_id, c.user_id)).status).toBe(409); // b was referred already
    expect((await refer(t, a.user_id, b.user_id)).status).toBe(409); // a referral back
    const [got] = await receivedAt(rx, path, 1);
    const event = verified(ep.secret, got);
    expect(event).toMatchObject({ type: 'referral.completed', organization_id: t.organization_id });
    expect(event.id).toBe(eventId(t.organization_id, 'referral.completed', res.body.referral_id));
    expect(event.data).toEqual({
      referral_id: res.body.referral_id,
      referrer_user_id: a.user_id,
      referred_user_id: b.user_id,
      referrer_points: 120,
      referred_points: 40,
      status: 'completed',
      created_at: iso,
      completed_at: iso,
    });
    await quiet();
    expect(rx.received(path)).toHaveLength(1);
    expect(await logOf(t, 'referral.completed')).toHaveLength(1);
  });

  it('a retried last step that finds the referral completed (the earlier attempt stopped before its event) records it, once', async () => {
    const t = await newTenant();
    const path = unique('/referral-retry');
    const ep = await addEndpoint(t, rx, path, ['referral.completed']);
    const [a, b] = [await basicUser(t), await basicUser(t)];
    const { referral } = await recordReferral({
      organization_id: t.organization_id,
      referrer_user_id: a.user_id,
      referred_user_id: b.user_id,
    });
    await completeReferralDoc(referral.referral_id); // the change, by an attempt that stopped right after
    expect(await logOf(t, 'referral.completed')).toHaveLength(0);
    await completeReferral(referral.referral_id);
    await completeReferral(referral.referral_id);
    const [got] = await receivedAt(rx, path, 1);
    expect(verified(ep.secret, got).data).toMatchObject({
      referral_id: referral.referral_id,
      status: 'completed',
      referrer_user_id: a.user_id,
      referred_user_id: b.user_id,
    });
    await eventsSettled();
    await quiet();
    expect(rx.received(path)).toHaveLength(1);
  });
});

describe('document.processed', () => {
  it('arrives once per processed document with its id, folder and type, never its text; refused files and a repeated request emit nothing', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const path = unique('/documents');
    const ep = await addEndpoint(t, rx, path, ['document.processed']);
    const conversation_id = (await call('POST', '/initialize_session', { key: u.key, json: { user_id: u.user_id } }))
      .body.conversation_id;
    const send = (data: Buffer, name: string, headers?: Record<string, string>) =>
      call('POST', '/process_document', {
        key: u.key,
        headers,
        form: fileForm({ user_id: u.user_id, session_id: 's1', conversation_id }, { data, name }),
      });
    const letter = Buffer.from('Dear Ana,\n\nThank you for your visit to the secret garden.\n\nYours sincerely,\nLuis');
    const res = await send(letter, 'letter.txt', { 'idempotency-key': 'doc-1' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await send(letter, 'letter.txt', { 'idempotency-key': 'doc-1' })).body.metadata.media_id).toBe(
      res.body.metadata.media_id,
    );
    expect((await send(Buffer.alloc(0), 'empty.txt')).status).toBe(422);
    expect(
      (await send(Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0x3e, 0]), 'tool.pdf'))
        .status,
    ).toBe(400);
    const [got] = await receivedAt(rx, path, 1);
    const event = verified(ep.secret, got);
    const media_id = res.body.metadata.media_id;
    const run = await suite.temporal.workflow.getHandle(`document:${media_id}`).describe();
    expect(event).toMatchObject({ type: 'document.processed', organization_id: t.organization_id });
    expect(event.id).toBe(eventId(t.organization_id, 'document.processed', `${media_id}:${run.runId}`));
    expect(event.data).toEqual({
      media_id,
      user_id: u.user_id,
      workflow_id: `document:${media_id}`,
      folder_structure: res.body.data.folder_structure,
      classification: {
        confidence: res.body.metadata.classification.confidence,
        engine: res.body.metadata.classification.engine,
      },
      format: 'txt',
      mime_type: 'text/plain',
      pages: 1,
      size_bytes: letter.length,
      word_count: res.body.data.metadata.word_count,
      text_source: 'file',
      thumbnail_path: res.body.thumbnail_path,
    });
    expect(got.body).not.toMatch(/secret garden|Dear Ana|letter\.txt/); // nor the name it was uploaded under (test/events/no-personal-text-in-events.test.ts)
    await quiet();
    expect(rx.received(path)).toHaveLength(1);
  });
});

describe('tokens.purchased', () => {
  const stripe = new Stripe('sk_test_unused');
  const signed = (event: object) => {
    const payload = JSON.stringify(event);
    return {
      body: payload,
      headers: {
        'payment-signature': stripe.webhooks.generateTestHeaderString({
          payload,
          secret: inject('platformEnv').PAYMENT_WEBHOOK_SECRET,
        }),
      },
    };
  };
  const hook = (s: { body: string; headers: Record<string, string> }) =>
    call('POST', '/api/billing/webhooks/payment', {
      body: s.body,
      contentType: 'application/json',
      headers: s.headers,
    });
  const providerEvent = (type: string, object: object) => ({
    id: unique('evt'),
    object: 'event',
    type,
    livemode: false,
    created: Math.floor(Date.now() / 1000),
    data: { object },
  });

  async function setup() {
    const package_id = unique('pkg');
    expect(
      (
        await call('POST', '/api/billing/packages', {
          key: adminKey(),
          json: { id: package_id, name: 'Starter', tokens: 1000, price: 9.99, currency: 'usd', validity_days: 30 },
        })
      ).status,
    ).toBe(201);
    const t = await newTenant();
    const user = await basicUser(t);
    const buy = (token: string, extra: object = {}) =>
      call('POST', '/api/billing/purchase-tokens', {
        key: user.key,
        json: { user_id: user.user_id, package_id, payment_method: { type: 'card', token }, ...extra },
      });
    return { t, user, package_id, buy };
  }

  it("arrives once per credited purchase, paid at once or by the provider's webhook; declines, failures and repeats emit nothing", async () => {
    const { t, user, package_id, buy } = await setup();
    const path = unique('/tokens');
    const ep = await addEndpoint(t, rx, path, ['tokens.purchased']);
    const ok = await buy('pm_card_visa', { idempotency_key: 'order-1' });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect((await buy('pm_card_visa', { idempotency_key: 'order-1' })).body.transaction_id).toBe(
      ok.body.transaction_id,
    );
    expect((await buy('pm_card_chargeDeclined')).status).toBe(402);
    const pending = await buy('pm_card_authenticationRequired');
    expect(pending.status).toBe(402);
    const [first] = await receivedAt(rx, path, 1);
    const event = verified(ep.secret, first);
    expect(event).toMatchObject({ type: 'tokens.purchased', organization_id: t.organization_id });
    expect(event.id).toBe(eventId(t.organization_id, 'tokens.purchased', ok.body.transaction_id));
    expect(event.data).toEqual({
      transaction_id: ok.body.transaction_id,
      user_id: user.user_id,
      package_id,
      tokens: 1000,
      price: 9.99,
      currency: 'USD',
      provider: 'sandbox',
      sandbox: true,
      payment_intent_id: expect.any(String),
      expires_at: ok.body.package_details.expiry_date,
    });
    expect(first.body).not.toContain('pm_card');

    // the provider's webhook credits the purchase that waited for authentication: once, however often it is sent
    const paid = signed(
      providerEvent('payment_intent.succeeded', {
        id: pending.body.payment_intent_id,
        object: 'payment_intent',
        metadata: { transaction_id: pending.body.transaction_id, user_id: user.user_id },
      }),
    );
    expect((await Promise.all([hook(paid), hook(paid), hook(paid)])).map((r) => r.status)).toEqual([200, 200, 200]);
    const [, second] = await receivedAt(rx, path, 2);
    expect(verified(ep.secret, second).data).toMatchObject({
      transaction_id: pending.body.transaction_id,
      user_id: user.user_id,
      tokens: 1000,
      payment_intent_id: pending.body.payment_intent_id,
    });

    // a failed payment, and a second provider event about a purchase already credited: nothing
    const other = await buy('pm_card_authenticationRequired');
    expect(
      (
        await hook(
          signed(
            providerEvent('payment_intent.payment_failed', {
              id: other.body.payment_intent_id,
              object: 'payment_intent',
              metadata: { transaction_id: other.body.transaction_id },
              last_payment_error: { message: 'Authentication failed' },
            }),
          ),
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await hook(
          signed(
            providerEvent('payment_intent.succeeded', {
              id: 'pi_again',
              object: 'payment_intent',
              metadata: { transaction_id: ok.body.transaction_id },
            }),
          ),
        )
      ).status,
    ).toBe(200);
    await quiet(2500);
    expect(rx.received(path)).toHaveLength(2);
    expect((await logOf(t, 'tokens.purchased')).map((e) => e.data.transaction_id).sort()).toEqual(
      [ok.body.transaction_id, pending.body.transaction_id].sort(),
    );
  });

  it('a retried payment event that finds the purchase credited (the earlier attempt stopped before its event) records it, once', async () => {
    const { t, user, package_id } = await setup();
    const path = unique('/tokens-retry');
    const ep = await addEndpoint(t, rx, path, ['tokens.purchased']);
    const txn = unique('txn_test');
    await insertPurchase({
      _id: txn,
      organization_id: t.organization_id,
      user_id: user.user_id,
      package_id,
      tokens: 1000,
      price: 9.99,
      currency: 'USD',
      validity_days: 30,
      provider: 'sandbox',
      status: 'requires_action',
      payment_intent_id: 'pi_retry',
    });
    // what the earlier attempt did before it stopped: the purchase succeeded and was credited
    await movePurchase(txn, ['requires_action'], 'succeeded');
    const credit = await creditPurchase({
      _id: txn,
      organization_id: t.organization_id,
      user_id: user.user_id,
      package_id,
      tokens: 1000,
      price: 9.99,
      currency: 'USD',
      validity_days: 30,
      provider: 'sandbox',
      status: 'succeeded',
      created_at: new Date(),
      updated_at: new Date(),
    });
    const e = {
      id: unique('evt'),
      type: 'payment_intent.succeeded',
      livemode: false,
      object: { id: 'pi_retry', metadata: { transaction_id: txn } },
    };
    expect((await applyPaymentEvent(e)).outcome).toBe('credited 1000 tokens');
    expect((await applyPaymentEvent(e)).outcome).toMatch(/^duplicate/);
    const [got] = await receivedAt(rx, path, 1);
    expect(verified(ep.secret, got).data).toMatchObject({
      transaction_id: txn,
      tokens: 1000,
      payment_intent_id: 'pi_retry',
      expires_at: credit.expires_at.toISOString(),
    });
    await eventsSettled();
    await quiet();
    expect(rx.received(path)).toHaveLength(1);
  });
});

describe('scheduled_event.run_failed', () => {
  const B = '/api/scheduler-service/events';
  const runsOf = (t: Tenant, id: string, n: number) =>
    until(
      `${n} run(s) of ${id}`,
      async () =>
        (await call('GET', `${B}/${id}/runs`, { key: t.adminKey })).body.runs as Array<{
          run_id: string;
          outcome: string;
          error: string | null;
          scheduled_time: string | null;
        }>,
      (r) => r?.length >= n,
      30_000,
      200,
    );
  const future = () => new Date(Date.now() + 86_400_000).toISOString();

  it('arrives once per failed run with the event and the kind of failure; a successful run and a refused run-now emit nothing', async () => {
    const t = await newTenant();
    const path = unique('/runs');
    const ep = await addEndpoint(t, rx, path, ['scheduled_event.run_failed']);
    const idp_id = unique('biller');
    // A billing report with no recipient for a user without an email: every run fails, and says why.
    const failing = (
      await call('POST', B, {
        key: t.adminKey,
        json: { idp_id, type_of_event: 'billing', recurrency: 'daily', start_event: future() },
      })
    ).body.event;
    const fine = (
      await call('POST', B, {
        key: t.adminKey,
        json: {
          idp_id: unique('biller'),
          type_of_event: 'billing',
          recurrency: 'daily',
          start_event: future(),
          metadata: { recipient: `${unique('to')}@example.com` },
        },
      })
    ).body.event;
    expect((await call('POST', `${B}/${fine.id}/execute`, { key: t.adminKey })).status).toBeLessThan(300);
    expect((await runsOf(t, fine.id, 1))[0].outcome).toBe('success');
    // another organization's event is not run (404): nothing
    expect((await call('POST', `${B}/${failing.id}/execute`, { key: (await newTenant()).adminKey })).status).toBe(404);
    expect((await call('POST', `${B}/${failing.id}/execute`, { key: t.adminKey })).status).toBeLessThan(300);
    const [run] = await runsOf(t, failing.id, 1);
    expect(run.outcome).toBe('failed');
    const [got] = await receivedAt(rx, path, 1);
    const event = verified(ep.secret, got);
    expect(event).toMatchObject({ type: 'scheduled_event.run_failed', organization_id: t.organization_id });
    expect(event.id).toBe(eventId(t.organization_id, 'scheduled_event.run_failed', run.run_id));
    expect(event.data).toEqual({
      event_id: failing.id,
      run_id: run.run_id,
      user_id: failing.user_id,
      type_of_event: 'billing',
      trigger: 'manual',
      scheduled_time: run.scheduled_time,
      started_at: iso,
      finished_at: iso,
      failure: 'refused',
    });
    // the kind of failure only: the message stays in the run list (test/events/no-personal-text-in-events.test.ts)
    expect(run.error).toBe('metadata.recipient: no recipient and the user has no email');
    // a second failed run is a second event (a second later: a run's id carries its start time to the second)
    await quiet(1100);
    expect((await call('POST', `${B}/${failing.id}/execute`, { key: t.adminKey })).status).toBeLessThan(300);
    const runs = await runsOf(t, failing.id, 2);
    const both = await receivedAt(rx, path, 2);
    expect(both.map((r) => verified(ep.secret, r).data.run_id).sort()).toEqual(runs.map((r) => r.run_id).sort());
    await quiet();
    expect(rx.received(path)).toHaveLength(2);
  });

  it('is recorded once per run however often the step runs, also when an earlier attempt recorded the run and stopped before its event', async () => {
    const t = await newTenant();
    const path = unique('/runs-retry');
    const ep = await addEndpoint(t, rx, path, ['scheduled_event.run_failed']);
    const ev = (
      await call('POST', B, {
        key: t.adminKey,
        json: { idp_id: unique('biller'), type_of_event: 'billing', recurrency: 'daily', start_event: future() },
      })
    ).body.event;
    // the same run's step three times (a retried activity): one event
    const run_id = unique('event-run:test');
    for (let i = 0; i < 3; i += 1) {
      expect(
        (
          await runScheduledEvent({
            event_id: ev.id,
            organization_id: t.organization_id,
            run_id,
            scheduled_time: null,
            max_attempts: 1,
          })
        ).outcome,
      ).toBe('failed');
    }
    // a run recorded as failed by an attempt that stopped right after: its retry records the event
    const stopped = unique('event-run:test');
    const at = new Date();
    await insertRun({
      _id: stopped,
      event_id: ev.id,
      organization_id: t.organization_id,
      trigger: 'manual',
      started_at: at,
      finished_at: at,
      outcome: 'failed',
      error: 'the task failed',
      failure: 'internal',
      result: null,
    });
    expect(
      await runScheduledEvent({
        event_id: ev.id,
        organization_id: t.organization_id,
        run_id: stopped,
        scheduled_time: null,
        max_attempts: 1,
      }),
    ).toEqual({ outcome: 'failed', error: 'the task failed' });
    const got = await receivedAt(rx, path, 2);
    const data = got
      .map((r) => verified(ep.secret, r).data)
      .sort((x, y) => (x.run_id === run_id ? -1 : y.run_id === run_id ? 1 : 0));
    expect(data[0]).toMatchObject({ run_id, event_id: ev.id, failure: 'refused' });
    expect(data[1]).toMatchObject({
      run_id: stopped,
      event_id: ev.id,
      user_id: ev.user_id,
      type_of_event: 'billing',
      failure: 'internal',
      scheduled_time: null,
    });
    await eventsSettled();
    await quiet();
    expect(rx.received(path)).toHaveLength(2);
  });
});
