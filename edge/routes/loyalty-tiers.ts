/** Member tiers: the organization's tiers, a member's tier and progress, tiers set by hand, history, attributes. */
import { z } from 'zod';

import {
  getTierProgram,
  MAX_TIERS,
  memberTierView,
  putTierProgram,
  setMemberAttributesOf,
  setTierByHand,
  tierHistory,
} from '../../activities/loyalty/index.ts';
import { actingUser, existingUser, organizationFor, requireLevel } from '../auth.ts';
import { answerField, defineRoute } from '../http.ts';
import { organizationId, requiredId } from '../schemas.ts';

const tag = 'loyalty';
const slug = z.string().regex(/^[a-z][a-z0-9_-]{0,39}$/, 'lower-case letters, digits, _ and -, starting with a letter');
const factor = z
  .string()
  .regex(/^(0|[1-9]\d{0,2})(\.\d{1,4})?$/, 'a decimal string such as "1.5"')
  .refine((f) => Number(f) >= 1 && Number(f) <= 10, 'between 1 and 10');
const windowSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('calendar_year') }).strict(),
  z.object({ type: z.literal('rolling_months'), months: z.number().int().min(1).max(36) }).strict(),
]);
const tierDef = z.object({
  tier_id: z.string(),
  name: z.string(),
  threshold: z.number(),
  multiplier: z.string(),
  unlocks: z.array(z.string()),
});
const programAnswer = z.object({
  success: z.literal(true),
  organization_id: z.string(),
  tiers: z.array(tierDef).describe('lowest threshold first'),
  window: windowSchema.describe(
    'the qualifying window: the calendar year, or the last n calendar months (the current one included)',
  ),
  grace_days: z.number(),
  updated_at: z.string().nullable(),
});
const orgQuery = z.object({ organization_id: organizationId });
const memberParams = z.object({ user_ref: requiredId.describe('user_id or idp_id') });

defineRoute({
  method: 'GET',
  paths: ['/loyalty/tiers'],
  tag,
  summary: "The organization's tiers (none until an admin sets them) and their qualifying window",
  auth: 'key',
  query: orgQuery,
  response: programAnswer,
  handler: async ({ principal, query }) => ({
    success: true,
    ...(await getTierProgram(organizationFor(principal, query.organization_id))),
  }),
});

defineRoute({
  method: 'PUT',
  paths: ['/loyalty/tiers'],
  tag,
  summary: `Replaces the organization's tiers (admin, at most ${MAX_TIERS}): upgrades the new thresholds give apply at a member's next earning, downgrades at their review`,
  auth: 'admin',
  audit: {
    action: 'loyalty_tiers.update',
    target: ({ result }) => ({ type: 'loyalty_tiers', id: answerField(result, 'organization_id') }),
    keep: ['tiers', 'window', 'grace_days'],
  },
  body: z.object({
    organization_id: organizationId,
    tiers: z
      .array(
        z
          .object({
            tier_id: slug,
            name: z.string().trim().min(1).max(100),
            threshold: z.number().int().min(0).max(1_000_000_000).describe('points earned in the window that reach it'),
            multiplier: factor.optional().describe('earning multiplier on the base points (default "1")'),
            unlocks: z
              .array(requiredId)
              .max(100)
              .optional()
              .describe('campaigns only members of this tier (or another listing them) take part in'),
          })
          .strict(),
      )
      .max(MAX_TIERS),
    window: windowSchema,
    grace_days: z
      .number()
      .int()
      .min(0)
      .max(366)
      .optional()
      .describe('days a tier still holds after its validity ends (default 0)'),
  }),
  response: programAnswer,
  handler: async ({ principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    requireLevel(principal, 'admin');
    return { success: true, ...(await putTierProgram(org, body, principal.key_id)) };
  },
});

const tierView = z.object({
  success: z.literal(true),
  user_id: z.string(),
  tier: z.object({ tier_id: z.string(), name: z.string(), multiplier: z.string() }).nullable(),
  earned_in_window: z
    .number()
    .describe('points earned in the current qualifying window (reversals lower it; spending does not)'),
  window: z.object({ type: z.string(), start: z.string() }),
  next_tier: z
    .object({ tier_id: z.string(), name: z.string(), threshold: z.number(), points_needed: z.number() })
    .nullable(),
  valid_until: z.string().nullable().describe('the tier holds at least until then (null: for good)'),
  since: z.string().nullable(),
  set_by_hand: z.object({ reason: z.string(), until: z.string() }).nullable(),
});

defineRoute({
  method: 'GET',
  paths: ['/loyalty/members/:user_ref/tier'],
  tag,
  summary:
    "A member's tier, progress to the next and until when it holds (a basic key: its own user only); 404 while the organization has no tiers",
  auth: 'key',
  params: memberParams,
  query: orgQuery,
  response: tierView,
  handler: async ({ principal, params, query }) => {
    const org = organizationFor(principal, query.organization_id);
    const user = await existingUser(principal, org, params.user_ref, `User not found: ${params.user_ref}`);
    const view = await memberTierView(org, user.user_id);
    // The admin's words stay with admins.
    const hand = view.set_by_hand && principal.level === 0 ? { ...view.set_by_hand, reason: '' } : view.set_by_hand;
    return { success: true, user_id: user.user_id, ...view, set_by_hand: hand };
  },
});

defineRoute({
  method: 'PUT',
  paths: ['/loyalty/members/:user_ref/tier'],
  tag,
  summary:
    "Sets a member's tier by hand (admin) until a date, with a reason; then the review re-qualifies them. tier_id null: no tier",
  auth: 'admin',
  audit: {
    action: 'member_tier.set',
    target: ({ result }) => ({ type: 'user', id: answerField(result, 'user_id') }),
    keep: ['tier_id', 'until'],
  },
  params: memberParams,
  body: z.object({
    organization_id: organizationId,
    tier_id: slug.nullable(),
    reason: z.string().trim().min(1).max(500),
    until: z.iso.datetime({ offset: true }).describe('when the review re-qualifies the member'),
  }),
  response: tierView,
  handler: async ({ principal, params, body }) => {
    const org = organizationFor(principal, body.organization_id);
    requireLevel(principal, 'admin');
    const user = await actingUser(principal, org, params.user_ref);
    const view = await setTierByHand(
      org,
      user.user_id,
      { tier_id: body.tier_id, reason: body.reason, until: new Date(body.until) },
      principal.key_id,
    );
    return { success: true, user_id: user.user_id, ...view };
  },
});

defineRoute({
  method: 'GET',
  paths: ['/loyalty/members/:user_ref/tier/history'],
  tag,
  summary: "A member's tier changes, newest first (a basic key: its own, without the admins' reasons)",
  auth: 'key',
  params: memberParams,
  query: z.object({
    organization_id: organizationId,
    limit: z.coerce.number().int().min(1).max(100).default(20),
    before: z.coerce.number().int().min(1).optional().describe('the n of the last change of the previous page'),
  }),
  response: z.object({
    success: z.literal(true),
    user_id: z.string(),
    changes: z.array(
      z.object({
        n: z.number(),
        from_tier: z.string().nullable(),
        to_tier: z.string().nullable(),
        change: z.enum(['upgrade', 'downgrade', 'renewal', 'manual']),
        earned_in_window: z.number().nullable(),
        valid_until: z.string().nullable(),
        reason: z.string().nullable(),
        by: z.string().nullable(),
        at: z.string(),
      }),
    ),
  }),
  handler: async ({ principal, params, query }) => {
    const org = organizationFor(principal, query.organization_id);
    const user = await existingUser(principal, org, params.user_ref, `User not found: ${params.user_ref}`);
    const rows = await tierHistory(org, user.user_id, query.limit, query.before);
    const changes = principal.level === 0 ? rows.map((r) => ({ ...r, reason: null, by: null })) : rows;
    return { success: true, user_id: user.user_id, changes };
  },
});

defineRoute({
  method: 'PUT',
  paths: ['/loyalty/members/:user_ref/attributes'],
  tag,
  summary:
    'Sets what campaign conditions may ask of a member (admin): their country (ISO 3166 alpha-2) and other attributes, replacing those set',
  auth: 'admin',
  audit: {
    action: 'member_attributes.set',
    target: ({ result }) => ({ type: 'user', id: answerField(result, 'user_id') }),
  },
  params: memberParams,
  body: z.object({
    organization_id: organizationId,
    attributes: z
      .object({
        country: z
          .string()
          .regex(/^[A-Z]{2}$/, 'ISO 3166 alpha-2 in capitals (FR)')
          .optional(),
      })
      .catchall(z.string().max(100))
      .refine((a) => Object.keys(a).length <= 20, 'at most 20 attributes')
      .refine(
        (a) => Object.keys(a).every((k) => /^[a-z][a-z0-9_]{0,39}$/.test(k)),
        'names: lower-case letters, digits and _',
      ),
  }),
  response: z.object({ success: z.literal(true), user_id: z.string(), attributes: z.record(z.string(), z.string()) }),
  handler: async ({ principal, params, body }) => {
    const org = organizationFor(principal, body.organization_id);
    requireLevel(principal, 'admin');
    const user = await actingUser(principal, org, params.user_ref);
    const attributes = await setMemberAttributesOf(org, user.user_id, body.attributes as Record<string, string>);
    return { success: true, user_id: user.user_id, attributes };
  },
});
