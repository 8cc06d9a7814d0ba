/**
 * Gift catalogue (per organization) and redemption with loyalty points. Errors here are
 * `{success:false, error}`, invalid input 400 (CONTRACT.md).
 */
import { getRequestHeader } from 'h3';
import { z } from 'zod';
import { createGift, deleteGift, getGift, listGifts, redeemGift, replaceGift } from '../../activities/gifts/gifts';
import { GIFT_TYPES, REQUIRED_BY_TYPE } from '../../activities/gifts/models';
import { actingUser, organizationFor } from '../auth';
import { defineRoute, Reply } from '../http';
import { organizationId, requiredId } from '../schemas';

const tag = 'gifts';
const errors = 'success' as const;

const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });
const country = z
  .string()
  .trim()
  .transform((c) => c.toUpperCase())
  .refine((c) => /^[A-Z]{2}$/.test(c) && regionNames.of(c) !== c, 'must be an ISO 3166-1 alpha-2 country code, e.g. "MX"');
const text = z.string().trim().min(1).max(200);
const amount = z.number().positive().max(1_000_000_000);

const giftFields = z.object({
  gift_name: text,
  gift_type: z.enum(GIFT_TYPES),
  country: country.optional(),
  url_photo: z.url({ protocol: /^https?$/ }).max(2000).optional(),
  telco_supplier: text.optional(),
  recharge_amount: amount.optional(),
  points_value: z.number().int().positive().max(100_000_000).optional(),
  supplier: text.optional(),
  electronic_pin_amount: amount.optional(),
  service_provider: text.optional(),
});

/** The same schema for create and PUT: the type decides which fields are required. */
const giftInput = giftFields.superRefine((gift, ctx) => {
  for (const field of REQUIRED_BY_TYPE[gift.gift_type]) {
    if ((gift as Record<string, unknown>)[field] === undefined) {
      ctx.addIssue({ code: 'custom', path: [field], message: `required for gift_type ${gift.gift_type}` });
    }
  }
});

const gift = giftFields.extend({ id: z.string(), organization_id: z.string(), created_at: z.string(), updated_at: z.string() });
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
  response: z.object({ success: z.literal(true), gifts: z.array(gift), page: z.number(), limit: z.number(), total: z.number(), has_more: z.boolean() }),
  handler: async ({ principal, query }) => {
    const org = organizationFor(principal, query.organization_id);
    return { success: true, ...(await listGifts(org, { gift_type: query.gift_type, country: query.country }, query.page, query.limit)) };
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
  handler: async ({ principal, params, query }) => ({ success: true, gift: await getGift(organizationFor(principal, query.organization_id), params.gift_id) }),
});

defineRoute({
  method: 'POST',
  paths: ['/api/gifts/gifts'],
  tag,
  errors,
  summary: 'Creates a gift (admin); required fields depend on gift_type',
  auth: 'admin',
  query: z.object({ organization_id: organizationId }),
  body: giftInput,
  response: z.object({ success: z.literal(true), gift }),
  handler: async ({ principal, query, body }) => new Reply(201, { success: true, gift: await createGift(organizationFor(principal, query.organization_id), body) }),
});

defineRoute({
  method: 'PUT',
  paths: ['/api/gifts/gifts/:gift_id'],
  tag,
  errors,
  summary: 'Replaces a gift (admin); same body as create',
  auth: 'admin',
  params: giftId,
  query: z.object({ organization_id: organizationId }),
  body: giftInput,
  response: z.object({ success: z.literal(true), gift }),
  handler: async ({ principal, params, query, body }) => ({ success: true, gift: await replaceGift(organizationFor(principal, query.organization_id), params.gift_id, body) }),
});

defineRoute({
  method: 'DELETE',
  paths: ['/api/gifts/gifts/:gift_id'],
  tag,
  errors,
  summary: 'Deletes a gift (admin); past redemptions keep its name and price',
  auth: 'admin',
  params: giftId,
  query: z.object({ organization_id: organizationId }),
  response: z.object({ success: z.literal(true), message: z.string() }),
  handler: async ({ principal, params, query }) => {
    await deleteGift(organizationFor(principal, query.organization_id), params.gift_id);
    return { success: true, message: `Gift ${params.gift_id} deleted` };
  },
});

defineRoute({
  method: 'POST',
  paths: ['/api/gifts/gifts/:gift_id/redeem'],
  tag,
  errors,
  summary: "Redeems a gift with the user's points; 409 when the balance is short (nothing changes)",
  auth: 'key',
  idempotent: true,
  params: giftId,
  body: z.object({
    user_id: requiredId,
    organization_id: organizationId,
    idempotency_key: z.string().trim().min(1).max(200).optional().describe('a retried redemption with the same key is charged once (also the Idempotency-Key header)'),
  }),
  response: z.object({
    success: z.literal(true),
    duplicate: z.boolean(),
    redemption: z.object({ id: z.string(), gift_id: z.string(), gift_name: z.string(), user_id: z.string(), points_spent: z.number(), balance_after: z.number(), status: z.string(), created_at: z.string() }),
  }),
  handler: async ({ event, principal, params, body }) => {
    const org = organizationFor(principal, body.organization_id);
    const user = await actingUser(principal, org, body.user_id);
    const idempotency_key = body.idempotency_key ?? getRequestHeader(event, 'idempotency-key')?.trim() ?? undefined;
    const out = await redeemGift({ organization_id: org, user_id: user.user_id, gift_id: params.gift_id, idempotency_key });
    return { success: true, ...out };
  },
});
