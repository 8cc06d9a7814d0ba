/**
 * Token billing: packages, purchases through the payment provider (Stripe, or the
 * sandbox when PAYMENTS_TEST_MODE is on), usage, and the signed payment webhook applied by `payment:<event id>`.
 */
import { getRequestHeader } from 'h3';
import { z } from 'zod';

import { PaymentsNotConfigured } from '../../activities/adapters/payments.ts';
import {
  createPackage,
  listPackages,
  PaymentRequired,
  purchaseTokens,
  receivePaymentEvent,
  tokenUsage,
} from '../../activities/billing/index.ts';
import { actingUser, existingUser, organizationFor } from '../auth.ts';
import { answerField, defineRoute, readBodyLimited, Reply } from '../http.ts';
import { idempotencyKeyOf } from '../idempotency.ts';
import { organizationId, requiredId } from '../schemas.ts';

const tag = 'billing';
const pkg = z
  .object({
    id: z.string(),
    name: z.string(),
    tokens: z.number(),
    price: z.number(),
    currency: z.string(),
    validity_days: z.number(),
  })
  .passthrough();

defineRoute({
  method: 'GET',
  paths: ['/api/billing/packages'],
  tag,
  summary: 'Token packages on sale',
  auth: 'key',
  response: z.object({ success: z.literal(true), packages: z.array(pkg) }),
  handler: async () => ({ success: true, packages: await listPackages() }),
});

defineRoute({
  method: 'POST',
  paths: ['/api/billing/packages'],
  statuses: { 409: 'A package with this id exists' },
  tag,
  summary: 'Creates a token package (system admin)',
  auth: 'sysadmin',
  audit: {
    action: 'token_package.create',
    target: ({ result }) => ({ type: 'token_package', id: answerField(result, 'package', 'id') }),
    keep: ['id', 'name', 'currency'],
  },
  body: z.object({
    id: z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and - (at most 64)')
      .optional(),
    name: z.string().trim().min(1).max(200),
    tokens: z.number().int().positive().max(1e12),
    price: z.number().positive().max(1e7),
    currency: z.string().regex(/^[A-Za-z]{3}$/, 'an ISO 4217 code such as USD'),
    validity_days: z.number().int().positive().max(3660),
  }),
  status: 201,
  response: z.object({ success: z.literal(true), package: pkg }),
  handler: async ({ body }) => new Reply(201, { success: true, package: await createPackage(body) }),
});

/** A refused payment's answer (402): the error and the purchase it recorded. */
const paymentRequired = z
  .object({
    detail: z.string(),
    transaction_id: z.string(),
    status: z.string().describe('`failed` (declined) or `requires_action` (not completed)'),
    provider: z.string(),
    sandbox: z.boolean(),
    payment_intent_id: z.string().nullable(),
  })
  .meta({ id: 'PaymentRequired' });

defineRoute({
  method: 'POST',
  paths: ['/api/billing/purchase-tokens'],
  statuses: {
    402: {
      description: 'The payment was declined or not completed: nothing was credited; the body names the purchase',
      schema: paymentRequired,
    },
    409: 'The idempotency key was used for another package',
    503: 'Payments are not configured',
  },
  tag,
  summary:
    'Buys a token package with a payment method; declined or unauthenticated payments are 402 and credit nothing; without STRIPE_SECRET_KEY and PAYMENTS_TEST_MODE: 503 `payment provider not configured`',
  auth: 'key',
  audit: {
    action: 'tokens.purchase',
    target: ({ result }) => ({ type: 'purchase', id: answerField(result, 'transaction_id') }),
    keep: ['package_id', 'payment_method.type'],
  },
  idempotent: true,
  body: z.object({
    user_id: requiredId,
    organization_id: organizationId,
    package_id: requiredId,
    payment_method: z.object({ type: z.string().trim().min(1).max(50), token: z.string().trim().min(1).max(200) }),
    idempotency_key: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .describe('a retry with the same key answers the first purchase (also the Idempotency-Key header)'),
  }),
  response: z.object({
    success: z.literal(true),
    transaction_id: z.string(),
    status: z.string(),
    provider: z.string(),
    sandbox: z.boolean(),
    package_details: z.object({ id: z.string(), tokens: z.number(), expiry_date: z.string() }),
  }),
  handler: async ({ event, principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    const user = await actingUser(principal, org, body.user_id);
    const idempotency_key = body.idempotency_key ?? idempotencyKeyOf(event);
    try {
      return await purchaseTokens({
        organization_id: org,
        user_id: user.user_id,
        package_id: body.package_id,
        token: body.payment_method.token,
        idempotency_key,
      });
    } catch (err) {
      if (err instanceof PaymentRequired) return new Reply(402, { detail: err.message, ...err.purchase });
      // Not a passing fault: a buyer is told plainly rather than "try again later".
      if (err instanceof PaymentsNotConfigured) return new Reply(503, { detail: err.message });
      throw err;
    }
  },
});

defineRoute({
  method: 'GET',
  paths: ['/api/billing/usage/:user_id'],
  tag,
  summary:
    "A user's tokens: used in the period (YYYY-MM, default this month) by agent, and remaining now (unexpired credit minus use, oldest credit first)",
  auth: 'key',
  params: z.object({ user_id: requiredId }),
  query: z.object({
    organization_id: organizationId,
    period: z
      .string()
      .regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'YYYY-MM')
      .optional(),
  }),
  response: z.object({
    success: z.literal(true),
    usage: z
      .object({
        total_tokens: z.number(),
        remaining_tokens: z.number(),
        usage_by_agent: z.record(z.string(), z.number()),
        period: z.string(),
      })
      .passthrough(),
  }),
  handler: async ({ principal, params, query }) => {
    const org = organizationFor(principal, query.organization_id);
    const user = await existingUser(principal, org, params.user_id, 'User not found');
    return { success: true, usage: await tokenUsage(org, user.user_id, query.period) };
  },
});

defineRoute({
  method: 'POST',
  paths: ['/api/billing/webhooks/payment'],
  statuses: {
    400: 'The signature is missing or invalid (or older than 300 s)',
    413: 'Body over 1 MB',
    503: 'Payments are not configured (no PAYMENT_WEBHOOK_SECRET): nothing can be verified, nothing is accepted',
  },
  tag,
  summary:
    "The payment provider's events: Stripe signature (payment-signature or stripe-signature header, 300 s tolerance) checked on the raw body, then applied once by the workflow payment:<event id> (acknowledged once the run is started)",
  auth: 'none',
  rateLimit: 'ip',
  response: z.object({ status: z.literal('success') }),
  handler: async ({ event }) => {
    const raw = await readBodyLimited(event, 1024 * 1024);
    await receivePaymentEvent(
      raw,
      getRequestHeader(event, 'payment-signature') ?? getRequestHeader(event, 'stripe-signature'),
    );
    return { status: 'success' };
  },
});
