/** Campaigns (admin): created as drafts, started, paused, ended; versioned edits; budgets; reports. */
import { z } from 'zod';

import {
  campaignReport,
  createCampaign,
  getCampaign,
  isTimeZone,
  LIMIT_PERIODS,
  listCampaigns,
  MAX_LIMIT,
  MAX_LIVE_CAMPAIGNS,
  patchCampaign,
  removeCampaign,
} from '../../activities/loyalty/index.ts';
import { organizationFor, requireLevel } from '../auth.ts';
import { answerField, defineRoute } from '../http.ts';
import { organizationId, requiredId } from '../schemas.ts';

const tag = 'loyalty';
const STATUSES = ['draft', 'scheduled', 'active', 'paused', 'ended'] as const;
const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
const decimal = z.string().regex(/^(0|[1-9]\d{0,11})(\.\d{1,6})?$/, 'a decimal string with up to 6 decimals');
const when = z.iso.datetime({ offset: true });
const hhmm = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'HH:MM, 24 hours');
const name = z.string().trim().min(1).max(100);

const effect = z.discriminatedUnion('type', [
  z.object({ type: z.literal('bonus'), points: z.number().int().min(1).max(1_000_000) }).strict(),
  z
    .object({
      type: z.literal('multiplier'),
      factor: decimal.refine((f) => Number(f) > 1 && Number(f) <= 10, 'more than 1, at most 10'),
    })
    .strict()
    .describe('adds base × (factor − 1)'),
  z
    .object({ type: z.literal('per_amount'), rate: decimal.refine((r) => Number(r) > 0, 'more than 0') })
    .strict()
    .describe("adds rate points per unit of the award's amount"),
]);
const conditions = z
  .object({
    action_types: z.array(z.string().max(64)).max(50).optional().describe('empty: every action'),
    min_amount: decimal.nullable().optional().describe("the award's amount at least this (its earning currency)"),
    categories: z.array(name).max(50).optional().describe('an item of one of these categories'),
    tiers: z.array(z.string().max(40)).max(10).optional().describe('members of one of these tiers'),
    nth: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .nullable()
      .optional()
      .describe("the member's n-th award of the action (1: the first)"),
    countries: z
      .array(z.string().regex(/^[A-Z]{2}$/))
      .max(250)
      .optional()
      .describe("the member's country attribute"),
    signed_up_after: when.nullable().optional(),
    signed_up_before: when.nullable().optional(),
  })
  .strict();
const schedule = z
  .object({
    days: z.array(z.enum(DAYS)).max(7).optional().describe('empty: every day'),
    hours: z
      .object({ from: hhmm, to: hhmm })
      .strict()
      .refine((h) => h.from !== h.to, 'from and to differ (from after to spans midnight)')
      .nullable()
      .optional()
      .describe('local hours, from inclusive to exclusive; from after to spans midnight'),
  })
  .strict();
const editable = {
  name,
  description: z.string().max(1000).nullable(),
  starts_at: when,
  ends_at: when.nullable(),
  time_zone: z
    .string()
    .refine(isTimeZone, 'an IANA time zone')
    .nullable()
    .describe("null: the program's (rules.time_zone)"),
  schedule,
  conditions,
  effect,
  stacking: z
    .enum(['stackable', 'exclusive'])
    .describe('exclusive: when first in line by priority it applies alone; otherwise it gives way'),
  priority: z.number().int().min(-1000).max(1000),
  limit_per_member: z
    .object({ max: z.number().int().min(1).max(MAX_LIMIT), per: z.enum(LIMIT_PERIODS) })
    .strict()
    .nullable(),
  max_points_per_award: z.number().int().min(1).max(1_000_000).nullable(),
  budget: z
    .number()
    .int()
    .min(1)
    .max(1_000_000_000)
    .nullable()
    .describe('points the campaign gives in all; concurrent awards never overspend it'),
};

const campaignFields = {
  campaign_id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  status: z.enum(STATUSES),
  starts_at: z.string(),
  ends_at: z.string().nullable(),
  time_zone: z.string().nullable(),
  schedule: z.object({ days: z.array(z.string()), hours: z.object({ from: z.string(), to: z.string() }).nullable() }),
  conditions: z.object({
    action_types: z.array(z.string()),
    min_amount: z.string().nullable(),
    categories: z.array(z.string()),
    tiers: z.array(z.string()),
    nth: z.number().nullable(),
    countries: z.array(z.string()),
    signed_up_after: z.string().nullable(),
    signed_up_before: z.string().nullable(),
  }),
  effect: z.object({
    type: z.string(),
    points: z.number().optional(),
    factor: z.string().optional(),
    rate: z.string().optional(),
  }),
  stacking: z.enum(['stackable', 'exclusive']),
  priority: z.number(),
  limit_per_member: z.object({ max: z.number(), per: z.string() }).nullable(),
  max_points_per_award: z.number().nullable(),
  budget: z.number().nullable(),
  budget_left: z.number().nullable(),
  version: z.number().describe('each edit after the draft makes a new version; awards name theirs'),
  created_by: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
};
const campaign = z.object(campaignFields);
const oneCampaign = z.object({
  success: z.literal(true),
  ...campaignFields,
  versions: z
    .array(z.object({ version: z.number(), replaced_at: z.string(), replaced_by: z.string(), campaign }))
    .optional()
    .describe('earlier versions, newest first'),
});
const idParams = z.object({ campaign_id: requiredId });
const orgQuery = z.object({ organization_id: organizationId });

type Editable = {
  starts_at?: string;
  ends_at?: string | null;
  conditions?: { signed_up_after?: string | null; signed_up_before?: string | null } & Record<string, unknown>;
} & Record<string, unknown>;
const date = (s: string | null | undefined) => (s === undefined ? undefined : s === null ? null : new Date(s));
/** Dates as dates for the component. */
function input<T extends Editable>(b: T) {
  const { organization_id: _o, ...rest } = b as T & { organization_id?: string };
  return {
    ...rest,
    ...(b.starts_at !== undefined && { starts_at: new Date(b.starts_at) }),
    ...(b.ends_at !== undefined && { ends_at: date(b.ends_at) }),
    ...(b.conditions && {
      conditions: {
        ...b.conditions,
        ...(b.conditions.signed_up_after !== undefined && { signed_up_after: date(b.conditions.signed_up_after) }),
        ...(b.conditions.signed_up_before !== undefined && { signed_up_before: date(b.conditions.signed_up_before) }),
      },
    }),
  };
}

defineRoute({
  method: 'POST',
  paths: ['/loyalty/campaigns'],
  statuses: {
    201: 'Created as a draft',
    409: `The organization has ${MAX_LIVE_CAMPAIGNS} campaigns that are not ended`,
  },
  tag,
  summary: `Creates a campaign as a draft (admin); start it with PATCH {status: "active"}. At most ${MAX_LIVE_CAMPAIGNS} campaigns not ended per organization`,
  auth: 'admin',
  audit: {
    action: 'campaign.create',
    target: ({ result }) => ({ type: 'campaign', id: answerField(result, 'campaign_id') }),
    keep: ['*'],
  },
  body: z
    .object({
      organization_id: organizationId,
      name,
      description: editable.description.optional(),
      starts_at: when,
      ends_at: editable.ends_at.optional(),
      time_zone: editable.time_zone.optional(),
      schedule: schedule.optional(),
      conditions: conditions.optional(),
      effect,
      stacking: editable.stacking.default('stackable'),
      priority: editable.priority.default(0),
      limit_per_member: editable.limit_per_member.optional(),
      max_points_per_award: editable.max_points_per_award.optional(),
      budget: editable.budget.optional(),
    })
    .strict(),
  response: oneCampaign,
  status: 201,
  handler: async ({ principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    requireLevel(principal, 'admin');
    const c = await createCampaign(org, input(body) as Parameters<typeof createCampaign>[1], principal.key_id);
    return { success: true, ...c };
  },
});

defineRoute({
  method: 'GET',
  paths: ['/loyalty/campaigns'],
  tag,
  summary: "The organization's campaigns, newest first (admin), optionally of one status",
  auth: 'admin',
  query: z.object({
    organization_id: organizationId,
    status: z.enum(STATUSES).optional(),
    page: z.coerce.number().int().min(1).default(1),
    limit: z.coerce.number().int().min(1).max(100).default(50),
  }),
  response: z.object({ success: z.literal(true), campaigns: z.array(campaign), page: z.number(), limit: z.number() }),
  handler: async ({ principal, query }) => {
    const org = organizationFor(principal, query.organization_id);
    requireLevel(principal, 'admin');
    const campaigns = await listCampaigns(org, query.status, query.page, query.limit);
    return { success: true, campaigns, page: query.page, limit: query.limit };
  },
});

defineRoute({
  method: 'GET',
  paths: ['/loyalty/campaigns/:campaign_id'],
  tag,
  summary: 'A campaign (admin), with its earlier versions',
  auth: 'admin',
  params: idParams,
  query: orgQuery,
  response: oneCampaign,
  handler: async ({ principal, params, query }) => {
    const org = organizationFor(principal, query.organization_id);
    requireLevel(principal, 'admin');
    return { success: true, ...(await getCampaign(org, params.campaign_id)) };
  },
});

defineRoute({
  method: 'PATCH',
  paths: ['/loyalty/campaigns/:campaign_id'],
  statuses: { 409: 'Not a move its status allows (an ended campaign changes no more), or edited meanwhile' },
  tag,
  summary:
    'Edits a campaign and/or moves its status (admin): draft → active (scheduled until its start) → paused ↔ active → ended. An edit after the draft makes a new version; a budget edit moves what is left by the difference',
  auth: 'admin',
  audit: {
    action: 'campaign.update',
    target: ({ params }) => ({ type: 'campaign', id: params.campaign_id }),
    keep: ['*'],
  },
  params: idParams,
  body: z
    .object(editable)
    .partial()
    .extend({ organization_id: organizationId, status: z.enum(['active', 'scheduled', 'paused', 'ended']).optional() })
    .strict(),
  response: oneCampaign,
  handler: async ({ principal, params, body }) => {
    const org = organizationFor(principal, body.organization_id);
    requireLevel(principal, 'admin');
    const patch = input(body) as Parameters<typeof patchCampaign>[2];
    return { success: true, ...(await patchCampaign(org, params.campaign_id, patch, principal.key_id)) };
  },
});

defineRoute({
  method: 'DELETE',
  paths: ['/loyalty/campaigns/:campaign_id'],
  statuses: { 409: 'Only a draft can be deleted; end a campaign that started' },
  tag,
  summary: 'Deletes a draft campaign (admin); one that started is ended instead, so its awards keep naming it',
  auth: 'admin',
  audit: { action: 'campaign.delete', target: ({ params }) => ({ type: 'campaign', id: params.campaign_id }) },
  params: idParams,
  query: orgQuery,
  response: z.object({ success: z.literal(true), message: z.string() }),
  handler: async ({ principal, params, query }) => {
    const org = organizationFor(principal, query.organization_id);
    requireLevel(principal, 'admin');
    await removeCampaign(org, params.campaign_id);
    return { success: true, message: 'Campaign deleted' };
  },
});

defineRoute({
  method: 'GET',
  paths: ['/loyalty/campaigns/:campaign_id/report'],
  tag,
  summary:
    "A campaign's points given (less those given back by reversals), awards, members reached and budget left, in all and per local day (admin)",
  auth: 'admin',
  params: idParams,
  query: orgQuery,
  response: z.object({
    success: z.literal(true),
    campaign_id: z.string(),
    status: z.enum(STATUSES),
    version: z.number(),
    points_given: z.number(),
    points_returned: z.number().describe('points of reversed awards, back in the budget'),
    awards: z.number(),
    members_reached: z.number(),
    budget: z.number().nullable(),
    budget_left: z.number().nullable(),
    per_day: z
      .array(z.object({ day: z.string(), points: z.number(), awards: z.number(), returned: z.number() }))
      .describe("per day of the program's calendar: points net of those given back that day"),
  }),
  handler: async ({ principal, params, query }) => {
    const org = organizationFor(principal, query.organization_id);
    requireLevel(principal, 'admin');
    return { success: true, ...(await campaignReport(org, params.campaign_id)) };
  },
});
