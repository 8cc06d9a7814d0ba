/** Loyalty points: balances, history, awards by action, rules (referrals: routes/referrals.ts). */
import { getRequestHeader } from 'h3';
import { z } from 'zod';
import { getBalance, getHistory } from '../../activities/loyalty/ledger';
import { awardAction, getRules, putRules } from '../../activities/loyalty/rules';
import { LEDGER_REASONS } from '../../activities/loyalty/models';
import { actingUser, existingUser, organizationFor, requireLevel } from '../auth';
import { defineRoute } from '../http';
import { organizationId, requiredId } from '../schemas';

const tag = 'loyalty';

const entry = z.object({
  entry_id: z.string(),
  seq: z.number(),
  amount: z.number(),
  balance_after: z.number(),
  reason: z.enum(LEDGER_REASONS),
  operation_id: z.string(),
  description: z.string().nullable(),
  created_at: z.string(),
});
const points = z.number().int().min(1).max(1_000_000);
const actionName = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'lower-case letters, digits and _, starting with a letter');
const rules = z.object({
  organization_id: z.string(),
  actions: z.record(z.string(), z.number()),
  referral_points: z.number(),
  referred_points: z.number(),
  is_default: z.boolean(),
  updated_at: z.string().nullable(),
});
const idempotencyKey = z.string().trim().min(1).max(200).optional().describe('the same key never awards twice (also the Idempotency-Key header)');

defineRoute({
  method: 'GET',
  paths: ['/loyalty/points/:internal_user_id'],
  tag,
  summary: "A user's point balance (404 'User points not found' before the first entry)",
  auth: 'key',
  params: z.object({ internal_user_id: requiredId }),
  query: z.object({ organization_id: organizationId }),
  response: z.object({ points: z.number(), user_id: z.string(), idp_id: z.string(), organization_id: z.string(), last_updated: z.string() }),
  handler: async ({ principal, params, query }) => {
    const org = organizationFor(principal, query.organization_id);
    const user = await existingUser(principal, org, params.internal_user_id, 'User points not found');
    const b = await getBalance(org, user.user_id);
    return { points: b.points, user_id: user.user_id, idp_id: user.idp_id, organization_id: org, last_updated: b.last_updated };
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
  response: z.object({ success: z.literal(true), user_id: z.string(), idp_id: z.string(), organization_id: z.string(), points: z.number(), entries: z.array(entry), page: z.number(), limit: z.number(), total: z.number(), has_more: z.boolean() }),
  handler: async ({ principal, params, query }) => {
    const org = organizationFor(principal, query.organization_id);
    const user = await existingUser(principal, org, params.internal_user_id, 'User points not found');
    return { success: true, user_id: user.user_id, idp_id: user.idp_id, organization_id: org, ...(await getHistory(org, user.user_id, query.page, query.limit)) };
  },
});

defineRoute({
  method: 'POST',
  paths: ['/loyalty/award-points/:idp_id'],
  tag,
  summary: "Awards the points the organization's rules give for an action",
  auth: 'key',
  params: z.object({ idp_id: requiredId }),
  body: z.object({ action_type: actionName, organization_id: organizationId, operation_id: idempotencyKey }),
  response: z.object({ success: z.literal(true), points_awarded: z.number(), balance: z.number(), duplicate: z.boolean(), entry_id: z.string(), user_id: z.string(), idp_id: z.string(), organization_id: z.string() }),
  handler: async ({ event, principal, params, body }) => {
    const org = organizationFor(principal, body.organization_id);
    const user = await actingUser(principal, org, params.idp_id);
    const key = body.operation_id ?? getRequestHeader(event, 'idempotency-key')?.trim() ?? undefined;
    const out = await awardAction({ organization_id: org, user_id: user.user_id, action_type: body.action_type, operation_id: key ? `${user.user_id}:${key}` : undefined });
    return { success: true, points_awarded: out.points_awarded, balance: out.entry.balance_after, duplicate: out.duplicate, entry_id: out.entry.entry_id, user_id: user.user_id, idp_id: user.idp_id, organization_id: org };
  },
});

defineRoute({
  method: 'GET',
  paths: ['/loyalty/rules'],
  tag,
  summary: "The organization's points per action and per referral (defaults until set)",
  auth: 'key',
  query: z.object({ organization_id: organizationId }),
  response: z.object({ success: z.literal(true), rules }),
  handler: async ({ principal, query }) => ({ success: true, rules: await getRules(organizationFor(principal, query.organization_id)) }),
});

defineRoute({
  method: 'PUT',
  paths: ['/loyalty/rules'],
  tag,
  summary: "Sets the organization's points per action and per referral (admin)",
  auth: 'admin',
  body: z.object({
    organization_id: organizationId,
    actions: z.record(actionName, points).refine((a) => Object.keys(a).length > 0 && Object.keys(a).length <= 200, 'between 1 and 200 actions').optional(),
    referral_points: points.optional().describe('credited to the referrer'),
    referred_points: points.optional().describe('credited to the referred user'),
  }),
  response: z.object({ success: z.literal(true), rules }),
  handler: async ({ principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    requireLevel(principal, 'admin');
    return { success: true, rules: await putRules(org, body, principal.key_id) };
  },
});
