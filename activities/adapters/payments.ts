/**
 * Charging a payment method. With STRIPE_SECRET_KEY: a Stripe PaymentIntent confirmed at once
 * with the given payment method (idempotency key = the transaction id). Without it, and only when
 * PAYMENTS_TEST_MODE is on: a sandbox that answers Stripe's documented test payment methods the
 * way Stripe's test mode does, and says it is the sandbox. Neither: 503, nothing is bought.
 */
import Stripe from 'stripe';

import { PlatformError } from '../core/errors.ts';
import { paymentsSettings } from './settings.ts';

export interface ChargeResult {
  provider: 'stripe' | 'sandbox';
  status: 'succeeded' | 'declined' | 'requires_action';
  payment_intent_id: string;
  reason: string | null;
}

const SANDBOX: Record<string, Omit<ChargeResult, 'provider' | 'payment_intent_id'>> = {
  pm_card_visa: { status: 'succeeded', reason: null },
  pm_card_mastercard: { status: 'succeeded', reason: null },
  pm_card_amex: { status: 'succeeded', reason: null },
  tok_visa: { status: 'succeeded', reason: null },
  tok_mastercard: { status: 'succeeded', reason: null },
  pm_card_chargeDeclined: { status: 'declined', reason: 'Your card was declined.' },
  tok_chargeDeclined: { status: 'declined', reason: 'Your card was declined.' },
  pm_card_chargeDeclinedInsufficientFunds: { status: 'declined', reason: 'Your card has insufficient funds.' },
  tok_chargeDeclinedInsufficientFunds: { status: 'declined', reason: 'Your card has insufficient funds.' },
  pm_card_chargeDeclinedExpiredCard: { status: 'declined', reason: 'Your card has expired.' },
  pm_card_authenticationRequired: {
    status: 'requires_action',
    reason: 'This payment requires authentication (3-D Secure).',
  },
  pm_card_threeDSecure2Required: {
    status: 'requires_action',
    reason: 'This payment requires authentication (3-D Secure).',
  },
  tok_threeDSecure2Required: {
    status: 'requires_action',
    reason: 'This payment requires authentication (3-D Secure).',
  },
};

/**
 * Who charges a purchase. The sandbox hands out tokens for `pm_card_visa`, and tokens buy paid
 * model calls: a deployment that merely forgot its Stripe key must not sell them for free, so the
 * sandbox needs PAYMENTS_TEST_MODE said explicitly (the start-up banner says when it is on).
 */
export function paymentProvider(): 'stripe' | 'sandbox' {
  const cfg = paymentsSettings();
  if (cfg.STRIPE_SECRET_KEY) return 'stripe';
  if (cfg.PAYMENTS_TEST_MODE) return 'sandbox';
  throw new PaymentsNotConfigured();
}

/** 503 whose text every caller reads (a buyer too): it names no host, only that nothing can be bought here. */
export class PaymentsNotConfigured extends PlatformError {
  constructor() {
    super('not_configured', 'payment provider not configured');
  }
}

let stripeClient: Stripe | undefined;
function stripe(): Stripe {
  stripeClient ??= new Stripe(paymentsSettings().STRIPE_SECRET_KEY ?? 'sk_test_webhooks_only', {
    maxNetworkRetries: 2,
    timeout: 30_000,
  });
  return stripeClient;
}

export async function charge(input: {
  transaction_id: string;
  amount: number;
  currency: string;
  token: string;
  metadata: Record<string, string>;
}): Promise<ChargeResult> {
  if (paymentProvider() === 'sandbox') {
    const outcome = SANDBOX[input.token];
    if (!outcome)
      throw new PlatformError(
        'invalid',
        `payment_method.token: not a sandbox test payment method (use pm_card_visa, pm_card_chargeDeclined or pm_card_authenticationRequired)`,
        'payment_method.token',
      );
    return { provider: 'sandbox', payment_intent_id: `pi_sandbox_${input.transaction_id}`, ...outcome };
  }
  try {
    const intent = await stripe().paymentIntents.create(
      {
        amount: Math.round(input.amount * 100),
        currency: input.currency.toLowerCase(),
        payment_method: input.token,
        confirm: true,
        automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
        metadata: input.metadata,
      },
      { idempotencyKey: input.transaction_id },
    );
    if (intent.status === 'succeeded')
      return { provider: 'stripe', status: 'succeeded', payment_intent_id: intent.id, reason: null };
    if (intent.status === 'requires_action')
      return {
        provider: 'stripe',
        status: 'requires_action',
        payment_intent_id: intent.id,
        reason: 'This payment requires authentication (3-D Secure).',
      };
    return {
      provider: 'stripe',
      status: 'declined',
      payment_intent_id: intent.id,
      reason: intent.last_payment_error?.message ?? `payment ${intent.status}`,
    };
  } catch (err) {
    if (err instanceof Stripe.errors.StripeCardError)
      return {
        provider: 'stripe',
        status: 'declined',
        payment_intent_id: err.payment_intent?.id ?? '',
        reason: err.message,
      };
    throw err;
  }
}

/** A payment provider's event, verified: what the platform reads of it (nothing else is kept). */
export interface VerifiedPaymentEvent {
  id: string;
  type: string;
  livemode: boolean;
  object: {
    id?: string;
    metadata?: Record<string, string>;
    payment_intent?: string | null;
    last_payment_error?: { message?: string } | null;
  };
}

/** How old a signed event may be (Stripe's own default). */
const SIGNATURE_TOLERANCE_S = 300;

/**
 * Checks a provider event's signature on its raw body (PAYMENT_WEBHOOK_SECRET) and reads it:
 * without a secret nothing can be checked, so nothing is accepted (payment provider not
 * configured, as for a purchase); a missing, wrong or stale signature is refused.
 */
export function verifyPaymentEvent(raw: string | Buffer, signature: string | undefined): VerifiedPaymentEvent {
  const secret = paymentsSettings().PAYMENT_WEBHOOK_SECRET;
  if (!secret) throw new PaymentsNotConfigured();
  let verified: Stripe.Event;
  try {
    verified = stripe().webhooks.constructEvent(raw, signature ?? '', secret, SIGNATURE_TOLERANCE_S);
  } catch {
    throw new PlatformError('malformed', 'Invalid payment webhook signature');
  }
  const object = verified.data.object as unknown as Record<string, unknown>;
  return {
    id: verified.id,
    type: verified.type,
    livemode: verified.livemode,
    object: {
      id: typeof object.id === 'string' ? object.id : undefined,
      metadata: (object.metadata as Record<string, string>) ?? {},
      payment_intent: typeof object.payment_intent === 'string' ? object.payment_intent : null,
      last_payment_error: (object.last_payment_error as { message?: string }) ?? null,
    },
  };
}
