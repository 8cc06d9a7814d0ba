/**
 * Gift catalogue (per organization). Errors here are `{success:false, error}`, invalid input 400.
 * Redemption: redemptions.ts.
 */
import { setResponseHeader } from 'h3';
import { z } from 'zod';

import {
  GIFT_TYPES,
  MAX_FIXED_AMOUNTS,
  REDEMPTION_STATUSES,
  REQUIRED_BY_TYPE,
  SETTLE_OUTCOMES,
} from '../../activities/gifts/constants.ts';
import {
  createGift,
  deleteGift,
  getGift,
  getRedemption,
  listGifts,
  listRedemptions,
  redeemGift,
  replaceGift,
  settleInReview,
} from '../../activities/gifts/index.ts';
import { actingUser, existingUser, organizationFor } from '../auth.ts';
import { answerField, defineRoute, Reply } from '../http.ts';
import { idempotencyKeyOf } from '../idempotency.ts';
import { organizationId, requiredId } from '../schemas.ts';

const tag = 'gifts';
const errors = 'success' as const;

const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });
const country = z
  .string()
  .trim()
  .transform((c) => c.toUpperCase())
  .refine(
    (c) => /^[A-Z]{2}$/.test(c) && regionNames.of(c) !== c,
    'must be an ISO 3166-1 alpha-2 country code, e.g. "MX"',
  );
const text = z.string().trim().min(1).max(200);
const amount = z.number().positive().max(1_000_000_000);
const currency = z
  .string()
  .trim()
  .transform((c) => c.toUpperCase())
  .refine((c) => /^[A-Z]{3}$/.test(c), 'must be an ISO 4217 currency code, e.g. "MXN"');
const denomination = z.number().positive().max(1_000_000).multipleOf(0.01);
const denominations = z
  .discriminatedUnion('type', [
    z
      .object({
        type: z.literal('fixed'),
        currency,
        amounts: z.array(denomination).min(1).max(MAX_FIXED_AMOUNTS).describe('the amounts a redemption may ask for'),
      })
      .strict(),
    z.object({ type: z.literal('range'), currency, min: denomination, max: denomination }).strict(),
  ])
  .refine((d) => d.type === 'fixed' || d.min <= d.max, { message: 'min must not exceed max', path: ['max'] })
  .describe('the amounts a redemption may ask for (its `amount`), in `currency`: a fixed list or a min/max range');

const giftFields = z.object({
  gift_name: text,
  gift_type: z.enum(GIFT_TYPES),
  country: country.optional(),
  url_photo: z
    .url({ protocol: /^https?$/ })
    .max(2000)
    .optional(),
  telco_supplier: text.optional(),
  recharge_amount: amount.optional(),
  points_value: z.number().int().positive().max(100_000_000).optional(),
  supplier: text.optional(),
  electronic_pin_amount: amount.optional(),
  service_provider: text.optional(),
  denominations: denominations.optional(),
  points_per_unit: z
    .number()
    .positive()
    .max(1_000_000)
    .optional()
    .describe('gifts with denominations: points per unit of their currency; a redemption costs ceil(amount × this)'),
  operator_id: text
    .optional()
    .describe(
      "mobile top-ups: the operator's id with the provider; a number it places with another operator is refused",
    ),
});

/** With denominations the amount and price come from the redemption: these are then not required. */
const PRICED_BY_DENOMINATION = new Set(['recharge_amount', 'electronic_pin_amount', 'points_value']);

/** The same schema for create and PUT: the type decides which fields are required. */
const giftInput = giftFields.superRefine((gift, ctx) => {
  if (gift.denominations && gift.points_per_unit === undefined)
    ctx.addIssue({ code: 'custom', path: ['points_per_unit'], message: 'required with denominations' });
  for (const field of REQUIRED_BY_TYPE[gift.gift_type]) {
    if (gift.denominations && PRICED_BY_DENOMINATION.has(field)) continue;
    if ((gift as Record<string, unknown>)[field] === undefined) {
      ctx.addIssue({ code: 'custom', path: [field], message: `required for gift_type ${gift.gift_type}` });
    }
  }
});

const gift = giftFields.extend({
  id: z.string(),
  organization_id: z.string(),
  provider_product_id: z.string().optional().describe("imported from the provider's catalogue: its product id"),
  provider_currency: z.string().optional().describe("the provider account's currency (imported gifts)"),
  provider_rate: z.number().optional().describe('what one unit of the gift currency costs in provider_currency'),
  available: z
    .boolean()
    .optional()
    .describe('false: withdrawn from the provider catalogue, kept for past redemptions, not redeemable'),
  created_at: z.string(),
  updated_at: z.string(),
});
const giftId = z.object({ gift_id: requiredId });

defineRoute({
  method: 'GET',
  paths: ['/api/gifts/gifts'],
  tag,
  errors,
  summary: "The organization's gifts, newest first; filters gift_type and country, paginated",
  auth: 'key',
  query: z.object({
    organization_id: organizationId,
    gift_type: z.enum(GIFT_TYPES).optional(),
    country: country.optional(),
    page: z.coerce.number().int().min(1).default(1),
    limit: z.coerce.number().int().min(1).max(100).default(50),
  }),
  response: z.object({
    success: z.literal(true),
    gifts: z.array(gift),
    page: z.number(),
    limit: z.number(),
    total: z.number(),
    has_more: z.boolean(),
  }),
  handler: async ({ principal, query }) => {
    const org = organizationFor(principal, query.organization_id);
    return {
      success: true,
      ...(await listGifts(org, { gift_type: query.gift_type, country: query.country }, query.page, query.limit)),
    };
  },
});

defineRoute({
  method: 'GET',
  paths: ['/api/gifts/gifts/:gift_id'],
  tag,
  errors,
  summary: 'One gift',
  auth: 'key',
  params: giftId,
  query: z.object({ organization_id: organizationId }),
  response: z.object({ success: z.literal(true), gift }),
  handler: async ({ principal, params, query }) => ({
    success: true,
    gift: await getGift(organizationFor(principal, query.organization_id), params.gift_id),
  }),
});

/** A gift's catalogue fields: the organization's own words, recorded as they are in the audit trail. */
const GIFT_FIELDS = [
  'gift_name',
  'gift_type',
  'country',
  'url_photo',
  'telco_supplier',
  'recharge_amount',
  'points_value',
  'supplier',
  'electronic_pin_amount',
  'service_provider',
  'denominations',
  'points_per_unit',
  'operator_id',
];

defineRoute({
  method: 'POST',
  paths: ['/api/gifts/gifts'],
  tag,
  errors,
  summary: 'Creates a gift (admin); required fields depend on gift_type',
  auth: 'admin',
  audit: {
    action: 'gift.create',
    target: ({ result }) => ({ type: 'gift', id: answerField(result, 'gift', 'id') }),
    keep: GIFT_FIELDS,
  },
  query: z.object({ organization_id: organizationId }),
  body: giftInput,
  status: 201,
  response: z.object({ success: z.literal(true), gift }),
  handler: async ({ principal, query, body }) =>
    new Reply(201, { success: true, gift: await createGift(organizationFor(principal, query.organization_id), body) }),
});

defineRoute({
  method: 'PUT',
  paths: ['/api/gifts/gifts/:gift_id'],
  tag,
  errors,
  summary: 'Replaces a gift (admin); same body as create',
  auth: 'admin',
  audit: { action: 'gift.update', target: ({ params }) => ({ type: 'gift', id: params.gift_id }), keep: GIFT_FIELDS },
  params: giftId,
  query: z.object({ organization_id: organizationId }),
  body: giftInput,
  response: z.object({ success: z.literal(true), gift }),
  handler: async ({ principal, params, query, body }) => ({
    success: true,
    gift: await replaceGift(organizationFor(principal, query.organization_id), params.gift_id, body),
  }),
});

defineRoute({
  method: 'DELETE',
  paths: ['/api/gifts/gifts/:gift_id'],
  tag,
  errors,
  summary: 'Deletes a gift (admin); past redemptions keep its name and price',
  auth: 'admin',
  audit: { action: 'gift.delete', target: ({ params }) => ({ type: 'gift', id: params.gift_id }) },
  params: giftId,
  query: z.object({ organization_id: organizationId }),
  response: z.object({ success: z.literal(true), message: z.string() }),
  handler: async ({ principal, params, query }) => {
    await deleteGift(organizationFor(principal, query.organization_id), params.gift_id);
    return { success: true, message: `Gift ${params.gift_id} deleted` };
  },
});

const redemption = z.object({
  id: z.string(),
  gift_id: z.string(),
  gift_name: z.string(),
  gift_type: z.string().nullable(),
  user_id: z.string(),
  points_spent: z.number(),
  points_refunded: z.number().describe('of the points spent, those that came back spendable'),
  points_lapsed: z
    .number()
    .describe(
      'of the points spent, those given back whose credit had lapsed meanwhile: they stay lapsed (a refund: points_spent = points_refunded + points_lapsed)',
    ),
  balance_after: z.number(),
  status: z
    .enum(REDEMPTION_STATUSES)
    .describe("needs_review: the provider's outcome is unknown; the points stay held until an admin settles it"),
  status_reason: z
    .string()
    .nullable()
    .describe("why it ended refunded or failed (the provider's reason), or why it needs review"),
  provider: z.string().nullable(),
  provider_transaction_id: z.string().nullable(),
  phone_number: z.string().nullable(),
  account_reference: z.string().nullable(),
  amount: z.number().nullable().describe('the denomination redeemed (gifts with denominations), in currency'),
  currency: z.string().nullable(),
  pin_code: z
    .string()
    .nullable()
    .describe("an electronic PIN: in clear for the redemption's own user, masked (last 4) for anyone else"),
  pin_masked: z.boolean(),
  settlement: z
    .object({
      outcome: z.enum(SETTLE_OUTCOMES),
      settled_by: z.string().nullable().describe('the admin who settled it: admin readers only (null for a basic key)'),
      reason: z
        .string()
        .nullable()
        .describe("the admin's note for admin readers; a fixed user-facing reason for a basic key"),
      settled_at: z.string(),
    })
    .nullable()
    .describe("an admin's settlement of a redemption that needed review"),
  created_at: z.string(),
  updated_at: z.string(),
});

defineRoute({
  method: 'POST',
  paths: ['/api/gifts/gifts/:gift_id/redeem'],
  statuses: {
    202: 'Not final yet: with the provider (`processing`) or waiting for an admin (`needs_review`); `Location` names the redemption',
    409: "Not enough points, a gift without a price in points or withdrawn by the provider, the provider's account does not cover it (nothing held), or the idempotency key was used for another gift",
    502: 'The gift provider failed',
    503: 'The points ledger is busy for this user; retry after Retry-After',
  },
  tag,
  errors,
  summary:
    "Redeems a gift with the user's points: held at once, delivered by the gift provider, then completed or refunded; 202 while the provider works",
  auth: 'key',
  audit: {
    action: 'gift.redeem',
    target: ({ result }) => ({ type: 'redemption', id: answerField(result, 'redemption', 'id') }),
  },
  idempotent: true,
  params: giftId,
  body: z.object({
    user_id: requiredId,
    organization_id: organizationId,
    idempotency_key: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .describe(
        'a retried redemption with the same key is the same redemption, held once (also the Idempotency-Key header)',
      ),
    phone_number: z
      .string()
      .trim()
      .max(32)
      .optional()
      .describe('mobile top-ups: the number to recharge, E.164 (+5215512345678)'),
    account_reference: z
      .string()
      .trim()
      .max(64)
      .optional()
      .describe('service payments: the account or contract number with the biller'),
    amount: z
      .number()
      .positive()
      .max(1_000_000)
      .optional()
      .describe("gifts with denominations: the amount, one of the list or within the range (the gift's currency)"),
  }),
  response: z.object({ success: z.literal(true), duplicate: z.boolean(), redemption }),
  handler: async ({ event, principal, params, body }) => {
    const org = organizationFor(principal, body.organization_id);
    const user = await actingUser(principal, org, body.user_id);
    const idempotency_key = body.idempotency_key ?? idempotencyKeyOf(event);
    const { duplicate, redemption: view } = await redeemGift(
      {
        organization_id: org,
        user_id: user.user_id,
        gift_id: params.gift_id,
        idempotency_key,
        phone_number: body.phone_number,
        account_reference: body.account_reference,
        amount: body.amount,
      },
      principal,
    );
    // Not final yet: still with the provider, or its outcome unknown and waiting for an admin.
    if (view.status !== 'processing' && view.status !== 'needs_review')
      return { success: true, duplicate, redemption: view };
    setResponseHeader(event, 'location', `/api/gifts/redemptions/${encodeURIComponent(view.id)}`);
    return new Reply(202, { success: true, duplicate, redemption: view });
  },
});

defineRoute({
  method: 'GET',
  paths: ['/api/gifts/redemptions/:redemption_id'],
  tag,
  errors,
  summary: "One redemption: its status and delivery (a basic key: its own user's only, else 404)",
  auth: 'key',
  params: z.object({ redemption_id: requiredId }),
  query: z.object({ organization_id: organizationId }),
  response: z.object({ success: z.literal(true), redemption }),
  handler: async ({ principal, params, query }) => {
    const org = organizationFor(principal, query.organization_id);
    return {
      success: true,
      redemption: await getRedemption(org, params.redemption_id, {
        user_id: principal.user_id,
        level: principal.level,
        own_only: principal.level === 0,
      }),
    };
  },
});

defineRoute({
  method: 'GET',
  paths: ['/api/gifts/redemptions'],
  tag,
  errors,
  summary:
    "Redemptions, newest first: a user's (a basic key: its own only), or the organization's for an admin without user_id; filter status, paginated",
  auth: 'key',
  query: z.object({
    organization_id: organizationId,
    user_id: requiredId
      .optional()
      .describe("defaults to the key's own user for a basic key; an admin without it lists the whole organization"),
    status: z.enum(REDEMPTION_STATUSES).optional(),
    page: z.coerce.number().int().min(1).default(1),
    limit: z.coerce.number().int().min(1).max(100).default(20),
  }),
  response: z.object({
    success: z.literal(true),
    redemptions: z.array(redemption),
    page: z.number(),
    limit: z.number(),
    total: z.number(),
    has_more: z.boolean(),
  }),
  handler: async ({ principal, query }) => {
    const org = organizationFor(principal, query.organization_id);
    const ref = query.user_id ?? (principal.level === 0 ? principal.user_id : null);
    const user_id = ref ? (await existingUser(principal, org, ref, `User not found: ${ref}`)).user_id : null;
    return {
      success: true,
      ...(await listRedemptions(org, { user_id, status: query.status ?? null }, query.page, query.limit, principal)),
    };
  },
});

defineRoute({
  method: 'POST',
  paths: ['/api/gifts/redemptions/:redemption_id/settle'],
  statuses: { 409: 'The redemption is not in needs_review, or was settled otherwise' },
  tag,
  errors,
  summary:
    "Settles a redemption in needs_review (admin): completed (the held points stay spent) or refunded (they come back). Completed first asks the provider once: delivered stores the PIN and transaction, a final refusal is 409 naming it (refund it instead), no answer completes on the admin's word (status_reason says no confirmation or PIN was obtained). Refunded asks it once too: delivered is 409 naming it (complete it instead), a final refusal or no answer refunds. The same outcome again answers duplicate: true; another outcome, or a redemption not in needs_review, is 409",
  auth: 'admin',
  audit: {
    action: 'redemption.settle',
    target: ({ params }) => ({ type: 'redemption', id: params.redemption_id }),
    keep: ['status'],
  },
  params: z.object({ redemption_id: requiredId }),
  query: z.object({ organization_id: organizationId }),
  body: z.object({
    outcome: z.enum(SETTLE_OUTCOMES).describe('completed: the provider delivered; refunded: it did not and never will'),
    reason: z
      .string()
      .trim()
      .min(1)
      .max(500)
      .optional()
      .describe('what the admin found (kept in settlement, shown to admins only; the user sees a fixed reason)'),
  }),
  response: z.object({ success: z.literal(true), duplicate: z.boolean(), redemption }),
  handler: async ({ principal, params, query, body }) => {
    const org = organizationFor(principal, query.organization_id);
    return {
      success: true,
      ...(await settleInReview(
        org,
        params.redemption_id,
        { outcome: body.outcome, reason: body.reason ?? null },
        principal,
      )),
    };
  },
});
