/**
 * Runs are findable by their owner: every workflow on the platform's task queue carries
 * OrganizationId, UserId and Component; payment runs carry the buyer, system runs "_platform".
 */
import { Client, Connection, type WorkflowExecutionInfo } from '@temporalio/client';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

import { retentionScheduleId } from '../../workers/runs/platform-schedules.ts';
import { COMPONENT, ORGANIZATION_ID, USER_ID } from '../../workflows/search-attributes.ts';
import { adminKey, basicUser, call, newTenant, unique } from '../helpers/api.ts';

let client: Client;
const queue = () => inject('platformEnv').TEMPORAL_TASK_QUEUE;

beforeAll(async () => {
  const e = inject('platformEnv');
  client = new Client({
    connection: await Connection.connect({ address: e.TEMPORAL_ADDRESS }),
    namespace: e.TEMPORAL_NAMESPACE,
  });
});
afterAll(async () => client?.connection.close());

const stripe = new Stripe('sk_test_unused');
function hook(type: string, object: object) {
  const event = {
    id: unique('evt'),
    object: 'event',
    type,
    livemode: false,
    created: Math.floor(Date.now() / 1000),
    data: { object },
  };
  const payload = JSON.stringify(event);
  const signature = stripe.webhooks.generateTestHeaderString({
    payload,
    secret: inject('platformEnv').PAYMENT_WEBHOOK_SECRET,
  });
  return {
    id: event.id,
    res: call('POST', '/api/billing/webhooks/payment', {
      body: payload,
      contentType: 'application/json',
      headers: { 'payment-signature': signature },
    }),
  };
}

/** The runs a visibility query finds, waiting for the ones expected (visibility lags a little). */
async function list(query: string, atLeast = 1): Promise<WorkflowExecutionInfo[]> {
  let found: WorkflowExecutionInfo[] = [];
  for (let i = 0; i < 100; i += 1) {
    found = [];
    for await (const w of client.workflow.list({ query })) found.push(w);
    if (found.length >= atLeast) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  return found;
}

const owner = (w: WorkflowExecutionInfo) => ({
  organization: w.typedSearchAttributes.get(ORGANIZATION_ID),
  user: w.typedSearchAttributes.get(USER_ID),
  component: w.typedSearchAttributes.get(COMPONENT),
});

describe('runs findable by their owner', () => {
  it("payment runs carry the buyer's organization and user, found from the purchase, not the event's metadata", async () => {
    const pkg = unique('pkg');
    expect(
      (
        await call('POST', '/api/billing/packages', {
          key: adminKey(),
          json: { id: pkg, name: 'Owner test', tokens: 10, price: 1, currency: 'USD', validity_days: 30 },
        })
      ).status,
    ).toBe(201);
    const t = await newTenant();
    const buyer = await basicUser(t);
    const bought = await call('POST', '/api/billing/purchase-tokens', {
      key: buyer.key,
      json: {
        user_id: buyer.user_id,
        package_id: pkg,
        payment_method: { type: 'card', token: 'pm_card_authenticationRequired' },
      },
    });
    expect(bought.status).toBe(402);
    const { transaction_id, payment_intent_id } = bought.body;
    // The metadata names nobody (or someone else): the purchase record decides.
    const succeeded = hook('payment_intent.succeeded', {
      id: payment_intent_id,
      object: 'payment_intent',
      metadata: { transaction_id, organization_id: 'someone-else' },
    });
    const refunded = hook('charge.refunded', { id: unique('ch'), object: 'charge', payment_intent: payment_intent_id });
    const stranger = hook('payment_intent.succeeded', {
      id: 'pi_none',
      object: 'payment_intent',
      metadata: { transaction_id: 'txn_nobody' },
    });
    for (const h of [succeeded, refunded, stranger]) expect((await h.res).status).toBe(200);

    const buyerRuns = await list(
      `WorkflowType = "paymentEventWorkflow" AND OrganizationId = "${t.organization_id}" AND UserId = "${buyer.user_id}"`,
      2,
    );
    expect(buyerRuns.map((w) => w.workflowId).sort()).toEqual(
      [`payment:${succeeded.id}`, `payment:${refunded.id}`].sort(),
    );
    for (const w of buyerRuns)
      expect(owner(w)).toEqual({ organization: t.organization_id, user: buyer.user_id, component: 'billing' });
    const [lost] = await list(`WorkflowId = "payment:${stranger.id}"`);
    expect(owner(lost)).toEqual({ organization: '_platform', user: '_payment-provider', component: 'billing' });
  });

  it('the retention Schedule files its runs under "_platform" / "_system"', async () => {
    const schedule = client.schedule.getHandle(retentionScheduleId(queue()));
    expect((await schedule.describe()).action).toMatchObject({ workflowType: 'retentionWorkflow' });
    await schedule.trigger();
    const [run] = await list(`WorkflowType = "retentionWorkflow" AND TaskQueue = "${queue()}"`);
    expect(owner(run)).toEqual({ organization: '_platform', user: '_system', component: 'retention' });
  });

  it('every workflow on the task queue carries OrganizationId, UserId and Component', async () => {
    // A few starts of different kinds, so the walk has more than what earlier test files left.
    const t = await newTenant();
    const user = await basicUser(t);
    expect(
      (
        await call('POST', '/api/feedback/submit', {
          key: user.key,
          json: { user_id: user.user_id, feedback_type: 'praise', rating: 4, comment: 'Nice' },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await call('POST', '/process_text', {
          key: user.key,
          json: {
            text: 'The coffee was cold.',
            user_id: user.idp_id,
            conversation_id: 'conv_owner',
            session_id: 's1',
            timestamp: '2026-11-22T10:00:00Z',
          },
        })
      ).status,
    ).toBe(200);
    const ev = (
      await call('POST', '/api/scheduler-service/events', {
        key: t.adminKey,
        json: {
          idp_id: user.idp_id,
          type_of_event: 'loyalty',
          recurrency: 'monthly',
          start_event: new Date(Date.now() + 86_400_000).toISOString(),
          metadata: { action_type: 'purchase' },
        },
      })
    ).body.event;
    expect((await call('POST', `/api/scheduler-service/events/${ev.id}/execute`, { key: t.adminKey })).status).toBe(
      200,
    );
    const mine = await list(`TaskQueue = "${queue()}" AND OrganizationId = "${t.organization_id}"`, 3);
    expect(new Set(mine.map((w) => w.type))).toEqual(
      new Set(['feedbackAnalysisWorkflow', 'processTextWorkflow', 'scheduledEventWorkflow']),
    );

    const all = await list(`TaskQueue = "${queue()}"`);
    expect(all.length).toBeGreaterThanOrEqual(mine.length);
    const missing = all.filter((w) => Object.values(owner(w)).some((v) => typeof v !== 'string' || !v.trim()));
    expect(missing.map((w) => `${w.type} ${w.workflowId} ${JSON.stringify(owner(w))}`)).toEqual([]);
  });
});
