/** Loyalty points: balances, history, awards by action, rules, reversals (referrals: routes/referrals.ts). */
import { z } from 'zod';

import { forbidden } from '../../activities/core/errors.ts';
import { LEDGER_REASONS } from '../../activities/loyalty/constants.ts';
import {
  type ActorLevel,
  awardAction,
  clientRequestId,
  evaluateAward,
  getBalance,
  getHistory,
  getRules,
  isCurrency,
  isTimeZone,
  LIMIT_PERIODS,
  MAX_LIMIT,
  putRules,
  reverseCredit,
  ROUNDINGS,
} from '../../activities/loyalty/index.ts';
import { actingUser, existingUser, organizationFor, requireLevel } from '../auth.ts';
import { answerField, defineRoute } from '../http.ts';
import { idempotencyKeyOf } from '../idempotency.ts';
import { organizationId, requiredId } from '../schemas.ts';

const tag = 'loyalty';

const entry = z.object({
  entry_id: z.string(),
  seq: z.number(),
  amount: z.number(),
  balance_after: z.number(),
  reason: z.enum(LEDGER_REASONS),
  operation_id: z.string(),
  description: z.string().nullable(),
  note: z.string().nullable().describe("an admin's note on an award (null: none)"),
  expires_at: z.string().nullable().describe('a credit that lapses: when what is left of it does'),
  available_at: z.string().nullable().describe('a pending credit: when it may be spent'),
  created_at: z.string(),
});
const points = z.number().int().min(1).max(1_000_000);
const actionName = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,63}$/, 'lower-case letters, digits and _, starting with a letter');
const limit = z
  .object({
    max: z.number().int().min(1).max(MAX_LIMIT).describe('entries per user and window'),
    per: z.enum(LIMIT_PERIODS).describe('window in UTC: ever, calendar day, week from Monday, calendar month'),
  })
  .strict();
const policyFields = {
  self_service: z
    .boolean()
    .describe('a basic key may report the action for its own user; otherwise it needs an admin key'),
  limit: limit.nullable().describe('null: unlimited; applies to every caller'),
};
const policy = z.object(policyFields);
const currency = z
  .string()
  .regex(/^[A-Z]{3}$/, 'an ISO 4217 code in capitals (EUR)')
  .describe("ISO 4217; the action's earning currency");
const label = z.string().trim().min(1).max(100);
const rateText = z
  .string()
  .regex(/^(0|[1-9]\d{0,11})(\.\d{1,6})?$/, 'a decimal string with up to 6 decimals ("1", "0.5")');
const earningFields = {
  rate: rateText.describe('points per unit of currency ("1": a point per euro)'),
  currency: currency,
  rounding: z.enum(ROUNDINGS).describe('how the points are rounded once, at the end'),
  min_amount: rateText.nullable().describe('below this amount (decimal string) the purchase earns nothing by amount'),
  max_points: z.number().int().min(1).max(1_000_000).nullable().describe('the most points one award earns by amount'),
  categories: z
    .record(label, rateText)
    .refine((c) => Object.keys(c).length <= 100, 'at most 100 categories')
    .describe('a rate per item category instead of rate; "0" excludes the category'),
};
const earning = z.object(earningFields);
const earningInput = z
  .object({
    ...earningFields,
    rounding: earningFields.rounding.optional().describe('default down'),
    min_amount: earningFields.min_amount.optional(),
    max_points: earningFields.max_points.optional(),
    categories: earningFields.categories.optional(),
  })
  .strict()
  .refine((e) => isCurrency(e.currency), { message: 'an ISO 4217 currency this platform knows', path: ['currency'] });
const milestones = z
  .array(z.object({ count: z.number().int().min(1).max(10_000), points }).strict())
  .max(20)
  .refine((m) => new Set(m.map((x) => x.count)).size === m.length, 'each count once')
  .describe("the referrer's n-th successful referral pays these points more, once");
const policyInput = z
  .object({ self_service: policyFields.self_service.optional(), limit: policyFields.limit.optional() })
  .strict();
const rulesFields = {
  organization_id: z.string(),
  actions: z.record(z.string(), z.number()).describe('points per action'),
  referral_points: z.number().describe('credited to the referrer'),
  referred_points: z.number().describe('credited to the referred user'),
  max_points_per_scan: z.number().describe('cap on the points one receipt or ticket scan credits'),
  policies: z.record(z.string(), policy).describe('who may report each action and how often'),
  points_expire_after_days: z
    .number()
    .nullable()
    .describe('null: points never expire; else each credit lapses this many days after it may be spent'),
  pending_days: z.number().describe('receipt and ticket-scan credits wait this many days before they may be spent'),
  referral_window_days: z
    .number()
    .describe("a user may be referred only within this many days of their account's creation"),
  earning: z.record(z.string(), earning).describe('per action that earns by amount: how points follow from it'),
  time_zone: z.string().describe("the program's calendar: campaign days and hours, calendar-year tier windows"),
  referral_milestones: z.array(z.object({ count: z.number(), points: z.number() })),
  is_default: z.boolean(),
  updated_at: z.string().nullable(),
};
const rulesAnswer = z.object({
  success: z.literal(true),
  ...rulesFields,
  rules: z.object(rulesFields).describe('the same rules, as earlier versions answered them'),
});
const answerRules = (r: Awaited<ReturnType<typeof getRules>>) => ({ success: true, ...r, rules: r });
const idempotencyKey = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .optional()
  .describe('the same key never awards twice (also the Idempotency-Key header)');

const decimalAmount = z
  .string()
  .regex(/^(0|[1-9]\d{0,14})(\.\d+)?$/, 'a non-negative decimal string such as "12.30" (never a JSON number)')
  .describe('major units as a decimal string ("12.30"); or amount_minor');
const minorAmount = z
  .number()
  .int('an integer of minor units (cents), never a float')
  .min(0)
  .max(Number.MAX_SAFE_INTEGER)
  .describe('minor units (1230 for 12.30 EUR); or amount');
/** What an award says it was for: the action and, for an action that earns by amount, the amount. */
const awardFields = {
  action_type: actionName,
  organization_id: organizationId,
  amount: decimalAmount.optional(),
  amount_minor: minorAmount.optional(),
  currency: currency.optional(),
  items: z
    .array(
      z
        .object({
          sku: label.optional(),
          category: label.optional().describe("a category of the rule's per-category rates and of campaign conditions"),
          amount: decimalAmount.optional().describe('the price of one unit, as a decimal string'),
          amount_minor: minorAmount.optional().describe('the price of one unit in minor units'),
          quantity: z.number().int().min(1).max(100_000).default(1),
        })
        .strict(),
    )
    .max(200)
    .optional()
    .describe(
      "the purchase's lines: each earns at its category's rate; what they leave of the amount at the base rate",
    ),
};
const campaignLine = z.object({
  campaign_id: z.string(),
  version: z.number(),
  points: z.number(),
  refused: z
    .enum(['budget_exhausted', 'limit_reached'])
    .optional()
    .describe("the campaign applied but gave nothing: its budget is spent, or the member's limit reached"),
});
const awardBreakdown = z
  .object({
    base: z.number().describe("the action's fixed points, or its earning rule applied to the amount"),
    tier_id: z.string().nullable().describe("the member's tier when the award was made"),
    tier_multiplier: z.string().describe('applied to base, as a decimal string'),
    campaigns: z.array(campaignLine),
    capped: z.boolean().describe("a cap lowered the points: the rule's max_points, a campaign's cap or its budget"),
    total: z.number(),
  })
  .describe("how the points were made (a repeat answers the first award's)");
const amountOf = (b: {
  amount?: string;
  amount_minor?: number;
  currency?: string;
  items?: { sku?: string; category?: string; amount?: string; amount_minor?: number; quantity: number }[];
}) => ({ amount: b.amount, amount_minor: b.amount_minor, currency: b.currency, items: b.items });

defineRoute({
  method: 'GET',
  paths: ['/loyalty/points/:internal_user_id'],
  tag,
  summary:
    "A user's spendable points, pending points and next expiries (404 'User points not found' before the first entry)",
  auth: 'key',
  params: z.object({ internal_user_id: requiredId }),
  query: z.object({ organization_id: organizationId }),
  response: z.object({
    points: z.number().describe('spendable now: lapsed and pending points are not counted'),
    pending_points: z.number().describe('credited but not yet spendable'),
    expiring: z
      .array(z.object({ points: z.number(), expires_at: z.string() }))
      .describe('the next lapses, soonest first'),
    user_id: z.string(),
    idp_id: z.string(),
    organization_id: z.string(),
    last_updated: z.string(),
  }),
  handler: async ({ principal, params, query }) => {
    const org = organizationFor(principal, query.organization_id);
    const user = await existingUser(principal, org, params.internal_user_id, 'User points not found');
    const b = await getBalance(org, user.user_id);
    return {
      points: b.points,
      pending_points: b.pending_points,
      expiring: b.expiring,
      user_id: user.user_id,
      idp_id: user.idp_id,
      organization_id: org,
      last_updated: b.last_updated,
    };
  },
});

defineRoute({
  method: 'GET',
  paths: ['/loyalty/points/:internal_user_id/history'],
  tag,
  summary: 'Ledger entries of a user, newest first, paginated',
  auth: 'key',
  params: z.object({ internal_user_id: requiredId }),
  query: z.object({
    organization_id: organizationId,
    page: z.coerce.number().int().min(1).default(1),
    limit: z.coerce.number().int().min(1).max(100).default(20),
  }),
  response: z.object({
    success: z.literal(true),
    user_id: z.string(),
    idp_id: z.string(),
    organization_id: z.string(),
    points: z.number(),
    entries: z.array(entry),
    page: z.number(),
    limit: z.number(),
    total: z.number(),
    has_more: z.boolean(),
  }),
  handler: async ({ principal, params, query }) => {
    const org = organizationFor(principal, query.organization_id);
    const user = await existingUser(principal, org, params.internal_user_id, 'User points not found');
    return {
      success: true,
      user_id: user.user_id,
      idp_id: user.idp_id,
      organization_id: org,
      ...(await getHistory(org, user.user_id, query.page, query.limit)),
    };
  },
});

/** An award's note is an operator's words about the member: only the organization's back end writes it. */
const NOTE_BY_ADMIN = "note: an award's note is written with an admin key";

defineRoute({
  method: 'POST',
  paths: ['/loyalty/award-points/:idp_id'],
  statuses: {
    409: 'A limit of the action is reached; nothing was credited',
    503: 'The points ledger is busy for this user; retry after Retry-After',
  },
  tag,
  summary:
    "Awards the points the organization's rules give for an action: a basic key only self-service actions (else 403), each action within its limit (else 409)",
  auth: 'key',
  audit: {
    action: 'points.award',
    target: ({ result }) => ({ type: 'user', id: answerField(result, 'user_id') }),
    keep: ['action_type', 'operation_id'],
  },
  idempotent: true,
  params: z.object({ idp_id: requiredId }),
  body: z.object({
    ...awardFields,
    operation_id: idempotencyKey,
    note: z
      .string()
      .trim()
      .min(1)
      .max(500)
      .optional()
      .describe(
        "admin only (a basic key 403): why the points were given, kept on the entry and shown in the history (`note`); never in events, kept out of the audit trail (its length only), cleared by the member's erasure; a repeat keeps the first award's note",
      ),
  }),
  response: z.object({
    success: z.literal(true),
    points_awarded: z.number(),
    balance: z.number(),
    duplicate: z.boolean(),
    entry_id: z
      .string()
      .nullable()
      .describe('null: the award earned nothing (below the minimum amount) and wrote nothing'),
    breakdown: awardBreakdown,
    user_id: z.string(),
    idp_id: z.string(),
    organization_id: z.string(),
  }),
  handler: async ({ event, principal, params, body }) => {
    const org = organizationFor(principal, body.organization_id);
    if (principal.level === 0 && body.note !== undefined) throw forbidden(NOTE_BY_ADMIN);
    const user = await actingUser(principal, org, params.idp_id);
    const key = body.operation_id ?? idempotencyKeyOf(event);
    const out = await awardAction({
      organization_id: org,
      user_id: user.user_id,
      action_type: body.action_type,
      operation_id: key ? clientRequestId(user.user_id, key) : undefined,
      actor_level: Math.min(principal.level, 2) as ActorLevel,
      amount: amountOf(body),
      note: body.note,
    });
    return {
      success: true,
      points_awarded: out.points_awarded,
      balance: out.balance,
      duplicate: out.duplicate,
      entry_id: out.entry?.entry_id ?? null,
      breakdown: out.breakdown,
      user_id: user.user_id,
      idp_id: user.idp_id,
      organization_id: org,
    };
  },
});

defineRoute({
  method: 'POST',
  paths: ['/loyalty/evaluate'],
  tag,
  audit: false,
  summary:
    "What an award would give now, writing nothing: the base (fixed points or the earning rule on the amount), the member's tier multiplier, each campaign that applies and why the others do not (a dry run; the same rights as the award)",
  auth: 'key',
  body: z.object({
    ...awardFields,
    user_id: requiredId.describe('the member (user_id or idp_id); a basic key only its own'),
  }),
  response: z.object({
    success: z.literal(true),
    user_id: z.string(),
    action_type: z.string(),
    rule: z.enum(['fixed', 'by_amount']),
    amount: z.string().nullable().describe('the amount as read, in major units'),
    currency: z.string().nullable(),
    base: z.number(),
    below_min_amount: z.boolean(),
    tier: z.object({ tier_id: z.string(), name: z.string() }).nullable(),
    tier_multiplier: z.string(),
    campaigns: z.array(
      campaignLine.extend({
        name: z.string(),
        budget_capped: z.boolean().optional().describe('the budget left (as last read) holds less than the effect'),
      }),
    ),
    not_applied: z
      .array(z.object({ campaign_id: z.string(), reason: z.string() }))
      .describe(
        'running campaigns that would not apply, each with the first condition missed: budget_exhausted, not_running, day, hours, action_type, min_amount, category, tier, country, signed_up, nth, exclusive, no_points (admin keys only: empty for a basic key)',
      ),
    capped: z.boolean(),
    total: z.number().describe('the points the award would credit now'),
  }),
  handler: async ({ principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    const user = await existingUser(principal, org, body.user_id, `User not found: ${body.user_id}`);
    const b = await evaluateAward({
      organization_id: org,
      user_id: user.user_id,
      action_type: body.action_type,
      actor_level: Math.min(principal.level, 2) as ActorLevel,
      amount: amountOf(body),
    });
    // Which running campaigns a member does not reach (tier-only offers among them) is the organization's to see.
    return { success: true, user_id: user.user_id, ...b, not_applied: principal.level >= 1 ? b.not_applied : [] };
  },
});

defineRoute({
  method: 'GET',
  paths: ['/loyalty/rules'],
  tag,
  summary:
    "The organization's points per action (with their policies), per referral and the cap per scan (defaults until set)",
  auth: 'key',
  query: z.object({ organization_id: organizationId }),
  response: rulesAnswer,
  handler: async ({ principal, query }) =>
    answerRules(await getRules(organizationFor(principal, query.organization_id))),
});

defineRoute({
  method: 'PUT',
  paths: ['/loyalty/rules'],
  tag,
  summary:
    "Sets the organization's points per action (with their policies), per referral, the cap per scan, expiry and pending days (admin)",
  auth: 'admin',
  audit: {
    action: 'loyalty_rules.update',
    target: ({ result }) => ({ type: 'loyalty_rules', id: answerField(result, 'organization_id') }),
    keep: ['actions', 'policies'],
  },
  body: z.object({
    organization_id: organizationId,
    actions: z
      .record(
        actionName,
        z.union([points, policyInput.extend({ points, earning: earningInput.nullable().optional() })], {
          error:
            'points (an integer 1-1000000), or {points, self_service?, limit?: {max, per: ever|day|week|month} | null, earning?: {rate, currency, rounding?, min_amount?, max_points?, categories?} | null}',
        }),
      )
      .refine((a) => Object.keys(a).length > 0 && Object.keys(a).length <= 200, 'between 1 and 200 actions')
      .optional()
      .describe(
        "replaces the action set: points alone take the name's default policy, or {points, self_service?, limit?}",
      ),
    policies: z
      .record(actionName, policyInput)
      .optional()
      .describe('changes the policies of actions of the (resulting) set; fields left out are kept'),
    referral_points: points.optional().describe('credited to the referrer'),
    referred_points: points.optional().describe('credited to the referred user'),
    max_points_per_scan: points.optional().describe('cap on the points one receipt or ticket scan credits'),
    points_expire_after_days: z
      .number()
      .int()
      .min(1)
      .max(3650)
      .nullable()
      .optional()
      .describe('days (1-3650) after which each credit written from now on lapses; null: new credits never expire'),
    pending_days: z
      .number()
      .int()
      .min(0)
      .max(365)
      .optional()
      .describe('days (0-365) receipt and ticket-scan credits wait before they may be spent'),
    referral_window_days: z
      .number()
      .int()
      .min(1)
      .max(3650)
      .optional()
      .describe(
        "days (1-3650, default 30) after a user's account is created during which they may be referred; later referrals are 409",
      ),
    earning: z
      .record(actionName, earningInput.nullable())
      .optional()
      .describe(
        'per action of the (resulting) set: its earning rule by amount, or null to earn its fixed points again',
      ),
    time_zone: z
      .string()
      .refine(isTimeZone, 'an IANA time zone (Europe/Paris, UTC)')
      .optional()
      .describe("the program's calendar (default UTC)"),
    referral_milestones: milestones.optional(),
  }),
  response: rulesAnswer,
  handler: async ({ principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    requireLevel(principal, 'admin');
    return answerRules(await putRules(org, body, principal.key_id));
  },
});

defineRoute({
  method: 'POST',
  paths: ['/loyalty/reverse'],
  statuses: {
    409: 'The reversal would leave the user with negative spendable points (send allow_negative)',
    503: 'The points ledger is busy for this user; retry after Retry-After',
  },
  tag,
  summary:
    "Takes back a credit given in error (admin), named by its ledger operation_id, or with user_id by the operation_id (or Idempotency-Key) the client sent with the award: one reversal entry per credit (a repeat answers the first, duplicate: true); 409 when it would leave the user's spendable points below zero unless allow_negative; 422 for anything but an earned credit",
  auth: 'admin',
  audit: {
    action: 'points.reverse',
    target: ({ result }) => ({ type: 'ledger_operation', id: answerField(result, 'credit_operation_id') }),
    keep: ['operation_id'],
  },
  body: z.object({
    organization_id: organizationId,
    operation_id: z
      .string()
      .trim()
      .min(1)
      .max(300)
      .describe(
        "the credit's operation_id as its history entry shows it (award:usr_…:order-123, scan:…, referral:…); with user_id also the operation_id the client sent with the award (order-123)",
      ),
    user_id: requiredId
      .optional()
      .describe(
        'the credited user (user_id or idp_id): operation_id is then first read as the id the client sent with the award, which is unique per user only; a credit of another user is 404',
      ),
    reason: z.string().trim().min(1).max(500),
    allow_negative: z.boolean().default(false).describe("reverse even when the user's points are already spent"),
  }),
  response: z.object({
    success: z.literal(true),
    duplicate: z.boolean(),
    operation_id: z.string().describe("the operation_id as sent (the client's id, or the ledger's)"),
    credit_operation_id: z
      .string()
      .describe(
        "the reversed credit's ledger operation_id (the reversal's is reversal:<it>); the same whichever name was sent",
      ),
    user_id: z.string(),
    points_reversed: z.number(),
    points: z.number().describe("the user's spendable points now"),
    pending_points: z.number(),
    reversal: entry,
    record: z
      .object({ type: z.enum(['scan', 'referral']), id: z.string() })
      .nullable()
      .describe('the scan or referral marked reversed'),
  }),
  handler: async ({ principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    requireLevel(principal, 'admin');
    const user =
      body.user_id === undefined
        ? undefined
        : await existingUser(principal, org, body.user_id, `User not found: ${body.user_id}`);
    const out = await reverseCredit({
      organization_id: org,
      operation_id: body.operation_id,
      user_id: user?.user_id,
      reason: body.reason,
      allow_negative: body.allow_negative,
      reversed_by: principal.key_id,
    });
    // operation_id echoes what was sent (clients match answers by it); the ledger's name beside it.
    const { points, pending_points, ...reversal } = out;
    const echo = { operation_id: body.operation_id, credit_operation_id: out.operation_id };
    return { success: true, ...reversal, ...echo, points, pending_points };
  },
});
