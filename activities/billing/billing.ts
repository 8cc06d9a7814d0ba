/**
 * Token packages, purchases, credits with expiry, usage, and payment events: buying tokens,
 * crediting them once per paid purchase, and the balance a model call draws on.
 */
import { createHash } from 'node:crypto';

import { charge, paymentProvider, type VerifiedPaymentEvent, verifyPaymentEvent } from '../adapters/payments.ts';
import { warnLine } from '../core/background.ts';
import { conflict, isDuplicateKey, PlatformError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { handedIn } from '../core/wiring.ts';
import { recordEvent } from '../events/index.ts';
import { computeBalance } from './balance.ts';
import {
  creditDoc,
  insertCreditOnce,
  insertPackage,
  insertPaymentEventOnce,
  insertPurchase,
  insertRefundOnce,
  insertUsageOnce,
  movePurchase,
  packageDoc,
  packagesByPrice,
  paymentEventDoc,
  purchaseByPaymentIntent,
  type PurchaseDoc,
  purchaseDoc,
  type TokenCreditDoc,
  tokenLedgerOf,
  type TokenPackageDoc,
} from './store.ts';

export { usageTotals } from './store.ts';

const DAY = 86_400_000;

const packageView = (p: TokenPackageDoc) => ({
  id: p._id,
  name: p.name,
  tokens: p.tokens,
  price: p.price,
  currency: p.currency,
  validity_days: p.validity_days,
  created_at: new Date(p.created_at).toISOString(),
});

export async function createPackage(input: {
  id?: string;
  name: string;
  tokens: number;
  price: number;
  currency: string;
  validity_days: number;
}) {
  try {
    return packageView(
      await insertPackage({
        _id: input.id ?? newId('pkg', 9),
        name: input.name,
        tokens: input.tokens,
        price: input.price,
        currency: input.currency.toUpperCase(),
        validity_days: input.validity_days,
      }),
    );
  } catch (err) {
    if (isDuplicateKey(err)) throw conflict(`A package with id ${input.id} already exists`);
    throw err;
  }
}

export async function listPackages() {
  return (await packagesByPrice()).map(packageView);
}

/** Credits a succeeded purchase once (the credit's primary key is the transaction). */
export async function creditPurchase(p: PurchaseDoc): Promise<TokenCreditDoc> {
  return insertCreditOnce({
    _id: `credit:${p._id}`,
    transaction_id: p._id,
    organization_id: p.organization_id,
    user_id: p.user_id,
    tokens: p.tokens,
    expires_at: new Date(Date.now() + p.validity_days * DAY),
    source: p.provider,
  });
}

/**
 * The event `tokens.purchased` of a credited purchase, keyed by its transaction id: whichever path
 * credits it (the purchase's own answer, the provider's webhook, a retry of either), the purchase
 * is told once. Ids and amounts only: never the payment method.
 */
async function publishPurchase(p: PurchaseDoc, credit: TokenCreditDoc): Promise<void> {
  await recordEvent({
    organization_id: p.organization_id,
    type: 'tokens.purchased',
    key: p._id,
    at: credit.created_at,
    data: {
      transaction_id: p._id,
      user_id: p.user_id,
      package_id: p.package_id,
      tokens: credit.tokens,
      price: p.price,
      currency: p.currency,
      provider: p.provider,
      sandbox: p.provider === 'sandbox',
      payment_intent_id: p.payment_intent_id ?? null,
      expires_at: new Date(credit.expires_at).toISOString(),
    },
  });
}

/** Credits the purchase (once) and records its event: also what a retry does when an earlier attempt stopped in between. */
async function creditAndPublish(p: PurchaseDoc): Promise<TokenCreditDoc> {
  const credit = await creditPurchase(p);
  await publishPurchase(p, credit);
  return credit;
}

const eventFailed = (transaction_id: string, err: unknown): void =>
  warnLine(
    "billing: a purchase's event was not recorded; a repeat of the purchase (same idempotency key) or the provider's webhook records it",
    err,
    { transaction_id },
  );

/**
 * The synchronous purchase's credit and event. The tokens are credited (or the call fails); a
 * failure to record the event is logged, not answered as a failed purchase: the card was charged,
 * and a client that retried without its idempotency key would pay twice.
 */
async function creditAnswered(p: PurchaseDoc): Promise<void> {
  const credit = await creditPurchase(p);
  await publishPurchase(p, credit).catch((err) => eventFailed(p._id, err));
}

async function markPurchase(
  id: string,
  status: PurchaseDoc['status'],
  extra: Partial<PurchaseDoc> = {},
): Promise<void> {
  // Status only moves forward: pending/requires_action → succeeded|failed → refunded.
  const from: Record<string, string[]> = {
    succeeded: ['pending', 'requires_action'],
    failed: ['pending', 'requires_action'],
    refunded: ['succeeded', 'pending', 'requires_action'],
    requires_action: ['pending'],
  };
  await movePurchase(id, from[status] ?? [], status, extra);
}

export interface PurchaseAnswer {
  success: true;
  transaction_id: string;
  status: PurchaseDoc['status'];
  provider: 'stripe' | 'sandbox';
  sandbox: boolean;
  package_details: { id: string; tokens: number; expiry_date: string };
}

/** 402 that still tells the client which transaction it was (to follow a payment that needs authentication). */
export class PaymentRequired extends PlatformError {
  constructor(
    message: string,
    readonly purchase: {
      transaction_id: string;
      status: string;
      provider: string;
      sandbox: boolean;
      payment_intent_id: string | null;
    },
  ) {
    super('payment_required', message, 'payment_method');
  }
}

async function answer(p: PurchaseDoc): Promise<PurchaseAnswer> {
  if (p.status === 'failed' || p.status === 'requires_action') {
    throw new PaymentRequired(
      `Payment ${p.status === 'failed' ? 'declined' : 'not completed'}: ${p.failure_reason ?? 'unknown reason'}${p.provider === 'sandbox' ? ' (sandbox payment provider)' : ''}`,
      {
        transaction_id: p._id,
        status: p.status,
        provider: p.provider,
        sandbox: p.provider === 'sandbox',
        payment_intent_id: p.payment_intent_id ?? null,
      },
    );
  }
  const credit = await creditDoc(`credit:${p._id}`);
  const expiry = credit?.expires_at ?? new Date(new Date(p.created_at).getTime() + p.validity_days * DAY);
  return {
    success: true,
    transaction_id: p._id,
    status: p.status,
    provider: p.provider,
    sandbox: p.provider === 'sandbox',
    package_details: { id: p.package_id, tokens: p.tokens, expiry_date: expiry.toISOString() },
  };
}

/** Charges the package's price; on success credits its tokens once. A repeat with the same idempotency key answers the first purchase. */
export async function purchaseTokens(input: {
  organization_id: string;
  user_id: string;
  package_id: string;
  token: string;
  idempotency_key?: string;
}): Promise<PurchaseAnswer> {
  const pkg = await packageDoc(input.package_id);
  if (!pkg) throw new PlatformError('invalid', `package_id: package ${input.package_id} does not exist`, 'package_id');
  const transaction_id = input.idempotency_key
    ? `txn_${createHash('sha256').update(`${input.organization_id}|${input.user_id}|${input.idempotency_key}`).digest('base64url').slice(0, 22)}`
    : newId('txn');
  const provider = paymentProvider();
  if (
    !(await insertPurchase({
      _id: transaction_id,
      organization_id: input.organization_id,
      user_id: input.user_id,
      package_id: pkg._id,
      tokens: pkg.tokens,
      price: pkg.price,
      currency: pkg.currency,
      validity_days: pkg.validity_days,
      provider,
      status: 'pending',
    }))
  ) {
    const earlier = (await purchaseDoc(transaction_id))!;
    // A key names one purchase: reused for another package it must not answer the first one as if bought.
    if (earlier.package_id !== pkg._id)
      throw conflict(`idempotency_key: already used for a purchase of package ${earlier.package_id}`);
    // A succeeded purchase whose first call stopped before its credit or its event: both are completed here (each once).
    if (earlier.status === 'succeeded') await creditAnswered(earlier);
    if (earlier.status !== 'pending') return answer(earlier);
  }
  const result = await charge({
    transaction_id,
    amount: pkg.price,
    currency: pkg.currency,
    token: input.token,
    metadata: { transaction_id, organization_id: input.organization_id, user_id: input.user_id, package_id: pkg._id },
  });
  if (result.status === 'succeeded') {
    await markPurchase(transaction_id, 'succeeded', { payment_intent_id: result.payment_intent_id });
    await creditAnswered((await purchaseDoc(transaction_id))!);
  } else {
    await markPurchase(transaction_id, result.status === 'declined' ? 'failed' : 'requires_action', {
      payment_intent_id: result.payment_intent_id,
      failure_reason: result.reason ?? undefined,
    });
  }
  return answer((await purchaseDoc(transaction_id))!);
}

/** The user's tokens: used in the period (by agent) and remaining now. `period`: YYYY-MM, default this month (UTC). */
export async function tokenUsage(organization_id: string, user_id: string, period?: string) {
  const now = new Date();
  const month = period ?? now.toISOString().slice(0, 7);
  const from = new Date(`${month}-01T00:00:00.000Z`);
  const to = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + 1, 1));
  const { credits, usage, refunds } = await tokenLedgerOf(organization_id, user_id);
  const balance = computeBalance(
    credits.map((c) => ({
      id: c._id,
      tokens: c.tokens,
      at: new Date(c.created_at),
      expires_at: new Date(c.expires_at),
    })),
    usage.map((u) => ({ tokens: u.tokens, at: new Date(u.created_at) })),
    refunds.map((r) => ({ credit_id: `credit:${r.transaction_id}`, at: new Date(r.created_at) })),
    now,
  );
  const inPeriod = usage.filter((u) => new Date(u.created_at) >= from && new Date(u.created_at) < to);
  const usage_by_agent: Record<string, number> = {};
  for (const u of inPeriod) usage_by_agent[u.agent] = (usage_by_agent[u.agent] ?? 0) + u.tokens;
  return {
    total_tokens: inPeriod.reduce((s, u) => s + u.tokens, 0),
    remaining_tokens: balance.remaining,
    usage_by_agent,
    period: month,
    credits: balance.credits.map((c) => ({
      transaction_id: c.id.replace(/^credit:/, ''),
      tokens: c.tokens,
      left: c.left,
      expires_at: c.expires_at.toISOString(),
      expired: c.expired,
      refunded: c.refunded,
    })),
  };
}

/** Records one model call's tokens (the LLM gateway). */
export async function recordUsage(input: {
  organization_id: string;
  user_id: string;
  agent: string;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  call_id?: string;
}): Promise<void> {
  const { call_id, ...fields } = input;
  await insertUsageOnce({
    _id: call_id ?? newId('use'),
    ...fields,
    tokens: input.prompt_tokens + input.completion_tokens,
  }); // the same call recorded twice counts once
}

/** A verified provider event, as the payment workflow applies it. */
export type PaymentEventInput = VerifiedPaymentEvent;

/** Starts the run that applies a provider event (`payment:<event id>`), filed under its buyer: handed in by the root. */
export type StartPaymentEvent = (
  event: PaymentEventInput,
  owner: { organization_id: string; user_id: string } | null,
) => Promise<void>;

const paymentRuns = handedIn<StartPaymentEvent>("billing's payment event runs");

/** Hands billing the start of its payment event runs (the composition root, once per process). */
export function configureBilling(deps: { startPaymentEvent: StartPaymentEvent }): void {
  paymentRuns.set(deps.startPaymentEvent);
}

/**
 * A provider's event as it arrived (POST /api/billing/webhooks/payment): verified on its raw body,
 * then applied once by its own run, filed under the buyer our purchase record names (one read),
 * not the event's metadata. Acknowledged once the run is durably started (the provider wants a
 * quick 2xx); the same event again finds its run started or done and starts nothing new.
 */
export async function receivePaymentEvent(raw: string | Buffer, signature: string | undefined): Promise<void> {
  const event = verifyPaymentEvent(raw, signature);
  await paymentRuns.get()(event, await purchaseOwner(event));
}

/** The purchase a provider event is about: named by `metadata.transaction_id`, or for a refund by its payment intent. */
async function purchaseOf(e: PaymentEventInput): Promise<PurchaseDoc | null> {
  if (e.type === 'charge.refunded')
    return e.object.payment_intent ? purchaseByPaymentIntent(e.object.payment_intent) : null;
  const id = e.object.metadata?.transaction_id;
  return id ? purchaseDoc(id) : null;
}

/** Who bought what an event settles, so its run is filed under them; null when no purchase matches. */
async function purchaseOwner(e: PaymentEventInput): Promise<{ organization_id: string; user_id: string } | null> {
  const txn = await purchaseOf(e);
  return txn ? { organization_id: txn.organization_id, user_id: txn.user_id } : null;
}

/** Applies a verified provider event; every effect is idempotent and the event is recorded once. */
export async function applyPaymentEvent(
  e: PaymentEventInput,
): Promise<{ outcome: string; transaction_id: string | null }> {
  const seen = await paymentEventDoc(e.id);
  if (seen) return { outcome: `duplicate: ${seen.outcome}`, transaction_id: seen.transaction_id ?? null };
  let outcome = 'ignored: event type not handled';
  let txn: PurchaseDoc | null = null;
  if (e.type === 'payment_intent.succeeded' || e.type === 'payment_intent.payment_failed') {
    txn = await purchaseOf(e);
    if (!txn) outcome = 'ignored: no purchase with this metadata.transaction_id';
    else if (e.type === 'payment_intent.succeeded') {
      await markPurchase(txn._id, 'succeeded', { payment_intent_id: e.object.id });
      // Before the provider event is recorded as seen: a retry after a crash credits nothing twice and still records the event.
      const credit = await creditAndPublish({ ...txn, payment_intent_id: txn.payment_intent_id ?? e.object.id });
      outcome = `credited ${credit.tokens} tokens`;
    } else {
      await markPurchase(txn._id, 'failed', {
        failure_reason: e.object.last_payment_error?.message ?? 'payment failed',
      });
      outcome = 'marked failed';
    }
  } else if (e.type === 'charge.refunded') {
    txn = await purchaseOf(e);
    if (!txn) outcome = 'ignored: no purchase with this payment_intent';
    else {
      await insertRefundOnce({
        _id: `refund:${txn._id}`,
        transaction_id: txn._id,
        organization_id: txn.organization_id,
        user_id: txn.user_id,
      });
      await markPurchase(txn._id, 'refunded');
      outcome = 'unused tokens removed';
    }
  }
  await insertPaymentEventOnce({ _id: e.id, type: e.type, outcome, transaction_id: txn?._id, livemode: e.livemode });
  return { outcome, transaction_id: txn?._id ?? null };
}
