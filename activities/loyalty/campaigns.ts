/**
 * Campaigns an operator runs: created as drafts, started (scheduled until their start, active
 * until their end), paused, ended. An edit of a campaign past its draft makes a new version (the
 * one before is kept), and each award names the version that gave its points. Budgets and limits
 * are taken per award by engine.ts; this file keeps the campaigns themselves and their reports.
 */
import { noteChange } from '../core/audit-note.ts';
import { Cache } from '../core/db/index.ts';
import { conflict, invalid, notFound } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { recordEvent } from '../events/index.ts';
import type {
  CampaignConditions,
  CampaignDoc,
  CampaignEffect,
  CampaignSchedule,
  StoredStatus,
} from './campaign-models.ts';
import {
  activeCampaigns,
  campaignById,
  campaignDays,
  campaignMemberCount,
  campaignsOf,
  campaignVersions,
  deleteCampaign,
  insertCampaign,
  insertCampaignVersion,
  liveCampaignCount,
  updateCampaign,
} from './campaign-store.ts';
import type { LimitPeriod } from './policies.ts';
import { getRules } from './rules.ts';

export type { CampaignDoc } from './campaign-models.ts';

/** Campaigns not ended, per organization: every award evaluates the active ones. */
export const MAX_LIVE_CAMPAIGNS = 100;

export type CampaignStatus = 'draft' | 'scheduled' | 'active' | 'paused' | 'ended';

/** The status as readers see it: a started campaign is scheduled before its start and ended from its end. */
export function statusOf(c: Pick<CampaignDoc, 'status' | 'starts_at' | 'ends_at'>, now = new Date()): CampaignStatus {
  if (c.status !== 'active') return c.status;
  if (c.ends_at && now.getTime() >= c.ends_at.getTime()) return 'ended';
  return now.getTime() < c.starts_at.getTime() ? 'scheduled' : 'active';
}

const cache = new Cache<string, CampaignDoc[]>({ max: 10_000, ttlMs: 2000 });

/**
 * The organization's started campaigns, kept 2 s per process like the rules: a change is seen at
 * once by the process that made it and within 2 s by the others. Budgets are never read from
 * here: each grant takes its points from the stored budget (campaign-store.ts).
 */
export const startedCampaigns = (organization_id: string) =>
  cache.getOrLoad(organization_id, () => activeCampaigns(organization_id));

export interface CampaignInput {
  name: string;
  description?: string | null;
  starts_at: Date;
  ends_at?: Date | null;
  time_zone?: string | null;
  schedule?: Partial<CampaignSchedule>;
  conditions?: Partial<CampaignConditions>;
  effect: CampaignEffect;
  stacking?: 'stackable' | 'exclusive';
  priority?: number;
  limit_per_member?: { max: number; per: LimitPeriod } | null;
  max_points_per_award?: number | null;
  budget?: number | null;
}

const conditionsOf = (c: Partial<CampaignConditions> = {}): CampaignConditions => ({
  action_types: c.action_types ?? [],
  min_amount: c.min_amount ?? null,
  categories: c.categories ?? [],
  tiers: c.tiers ?? [],
  nth: c.nth ?? null,
  countries: c.countries ?? [],
  signed_up_after: c.signed_up_after ?? null,
  signed_up_before: c.signed_up_before ?? null,
});

function checkTimes(starts_at: Date, ends_at: Date | null) {
  if (ends_at && ends_at.getTime() <= starts_at.getTime()) throw invalid('ends_at', 'after starts_at');
}

async function checkAmountCondition(organization_id: string, c: CampaignConditions, effect: CampaignEffect) {
  if (c.min_amount === null && effect.type !== 'per_amount') return;
  const rules = await getRules(organization_id);
  const earning = c.action_types.filter((a) => Object.hasOwn(rules.earning, a));
  if (!c.action_types.length || earning.length !== c.action_types.length)
    throw invalid(
      c.min_amount === null ? 'effect.rate' : 'conditions.min_amount',
      'an amount is known only for actions that earn by amount: list them in conditions.action_types',
    );
}

export async function createCampaign(organization_id: string, input: CampaignInput, by: string): Promise<CampaignView> {
  if ((await liveCampaignCount(organization_id)) >= MAX_LIVE_CAMPAIGNS)
    throw conflict(`An organization runs at most ${MAX_LIVE_CAMPAIGNS} campaigns that are not ended; end one first`);
  const ends_at = input.ends_at ?? null;
  checkTimes(input.starts_at, ends_at);
  const conditions = conditionsOf(input.conditions);
  await checkAmountCondition(organization_id, conditions, input.effect);
  const now = new Date();
  const doc: CampaignDoc = {
    _id: newId('cmp'),
    organization_id,
    name: input.name,
    description: input.description ?? null,
    status: 'draft',
    starts_at: input.starts_at,
    ends_at,
    time_zone: input.time_zone ?? null,
    schedule: { days: input.schedule?.days ?? [], hours: input.schedule?.hours ?? null },
    conditions,
    effect: input.effect,
    stacking: input.stacking ?? 'stackable',
    priority: input.priority ?? 0,
    limit_per_member: input.limit_per_member ?? null,
    max_points_per_award: input.max_points_per_award ?? null,
    budget: input.budget ?? null,
    budget_left: input.budget ?? null,
    version: 1,
    created_by: by,
    created_at: now,
    updated_at: now,
  };
  await insertCampaign(doc);
  return viewCampaign(doc);
}

export async function getCampaign(organization_id: string, campaign_id: string): Promise<CampaignView> {
  const c = await campaignById(organization_id, campaign_id);
  if (!c) throw notFound(`Campaign not found: ${campaign_id}`);
  const versions = await campaignVersions(campaign_id);
  return {
    ...viewCampaign(c),
    versions: versions.map((v) => ({
      version: v.version,
      replaced_at: v.replaced_at.toISOString(),
      replaced_by: v.replaced_by,
      campaign: viewCampaign({ ...v.snapshot, budget_left: null } as CampaignDoc),
    })),
  };
}

export async function listCampaigns(
  organization_id: string,
  status: CampaignStatus | undefined,
  page: number,
  limit: number,
): Promise<CampaignView[]> {
  return (await campaignsOf(organization_id, status ?? null, limit, (page - 1) * limit)).map(viewCampaign);
}

/** Which status changes an admin may ask for, from each status as readers see it. */
const MOVES: Record<CampaignStatus, CampaignStatus[]> = {
  draft: ['active', 'scheduled', 'ended'],
  scheduled: ['paused', 'ended'],
  active: ['paused', 'ended'],
  paused: ['active', 'scheduled', 'ended'],
  ended: [],
};

export type CampaignPatch = Partial<CampaignInput> & { status?: CampaignStatus };

/**
 * Edits a campaign and/or moves its status. An edit of a campaign past its draft makes version
 * n+1 and keeps version n. A budget edit moves what is left by the same difference.
 */
export async function patchCampaign(
  organization_id: string,
  campaign_id: string,
  patch: CampaignPatch,
  by: string,
): Promise<CampaignView> {
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const c = await campaignById(organization_id, campaign_id);
    if (!c) throw notFound(`Campaign not found: ${campaign_id}`);
    const now = new Date();
    const from = statusOf(c, now);
    const { status, ...fields } = patch;
    const edits = Object.keys(fields).length > 0;
    if (from === 'ended') throw conflict('An ended campaign cannot be changed');
    if (status && status !== from && !MOVES[from].includes(status))
      throw conflict(
        `A ${from} campaign cannot become ${status}; it may become ${MOVES[from].join(', ') || 'nothing'}`,
      );
    if (status === 'active' || status === 'scheduled')
      if ((await liveCampaignCount(organization_id)) > MAX_LIVE_CAMPAIGNS)
        throw conflict(`An organization runs at most ${MAX_LIVE_CAMPAIGNS} campaigns that are not ended`);
    const set: Partial<CampaignDoc> = { updated_at: now };
    if (fields.name !== undefined) set.name = fields.name;
    if (fields.description !== undefined) set.description = fields.description;
    if (fields.starts_at !== undefined) set.starts_at = fields.starts_at;
    if (fields.ends_at !== undefined) set.ends_at = fields.ends_at;
    if (fields.time_zone !== undefined) set.time_zone = fields.time_zone;
    if (fields.schedule !== undefined) set.schedule = { ...c.schedule, ...fields.schedule };
    if (fields.conditions !== undefined) set.conditions = conditionsOf({ ...c.conditions, ...fields.conditions });
    if (fields.effect !== undefined) set.effect = fields.effect;
    if (fields.stacking !== undefined) set.stacking = fields.stacking;
    if (fields.priority !== undefined) set.priority = fields.priority;
    if (fields.limit_per_member !== undefined) set.limit_per_member = fields.limit_per_member;
    if (fields.max_points_per_award !== undefined) set.max_points_per_award = fields.max_points_per_award;
    let budgetDelta = 0;
    if (fields.budget !== undefined) {
      set.budget = fields.budget;
      // A draft has given nothing: its budget is what is left (two edits at once keep one, never both).
      if (fields.budget === null) set.budget_left = null;
      else if (c.budget === null || c.status === 'draft') set.budget_left = fields.budget;
      else budgetDelta = fields.budget - c.budget;
    }
    checkTimes(set.starts_at ?? c.starts_at, set.ends_at === undefined ? c.ends_at : set.ends_at);
    if (set.conditions || set.effect)
      await checkAmountCondition(organization_id, set.conditions ?? c.conditions, set.effect ?? c.effect);
    if (status && status !== from) set.status = status === 'scheduled' ? 'active' : (status as StoredStatus);
    const versioned = edits && c.status !== 'draft';
    if (versioned) set.version = c.version + 1;
    const { budget_left: _left, ...snapshot } = c;
    if (versioned)
      await insertCampaignVersion({
        _id: `${campaign_id}|${c.version}`,
        campaign_id,
        version: c.version,
        snapshot,
        replaced_at: now,
        replaced_by: by,
      });
    const next = await updateCampaign(organization_id, campaign_id, c.version, set, budgetDelta);
    if (!next) continue; // another edit got there first: read again
    for (const [k, v] of Object.entries(set))
      if (k !== 'updated_at' && k !== 'version') noteChange(k, (c as unknown as Record<string, unknown>)[k] ?? null, v);
    cache.delete(organization_id);
    const to = statusOf(next, now);
    if (to !== from)
      await recordEvent({
        organization_id,
        type: 'campaign.status_changed',
        key: `campaign:${campaign_id}:${next.version}:${to}:${now.getTime()}`,
        at: now,
        data: { campaign_id, version: next.version, from_status: from, to_status: to, by },
      });
    return viewCampaign(next);
  }
  throw conflict('The campaign is being edited by someone else; try again');
}

export async function removeCampaign(organization_id: string, campaign_id: string): Promise<void> {
  const c = await campaignById(organization_id, campaign_id);
  if (!c) throw notFound(`Campaign not found: ${campaign_id}`);
  if (c.status !== 'draft' || !(await deleteCampaign(organization_id, campaign_id)))
    throw conflict('Only a draft campaign can be deleted; end a campaign that started (its awards keep naming it)');
  noteChange('status', c.status, null);
}

export interface CampaignView {
  campaign_id: string;
  name: string;
  description: string | null;
  status: CampaignStatus;
  starts_at: string;
  ends_at: string | null;
  time_zone: string | null;
  schedule: CampaignSchedule;
  conditions: Omit<CampaignConditions, 'signed_up_after' | 'signed_up_before'> & {
    signed_up_after: string | null;
    signed_up_before: string | null;
  };
  effect: CampaignEffect;
  stacking: 'stackable' | 'exclusive';
  priority: number;
  limit_per_member: { max: number; per: LimitPeriod } | null;
  max_points_per_award: number | null;
  budget: number | null;
  budget_left: number | null;
  version: number;
  created_by: string;
  created_at: string;
  updated_at: string;
  versions?: { version: number; replaced_at: string; replaced_by: string; campaign: CampaignView }[];
}

const iso = (d: Date | string | null | undefined) => (d ? new Date(d).toISOString() : null);

function viewCampaign(c: CampaignDoc): CampaignView {
  return {
    campaign_id: c._id,
    name: c.name,
    description: c.description,
    status: statusOf({ ...c, starts_at: new Date(c.starts_at), ends_at: c.ends_at && new Date(c.ends_at) }),
    starts_at: iso(c.starts_at)!,
    ends_at: iso(c.ends_at),
    time_zone: c.time_zone,
    schedule: c.schedule,
    conditions: {
      ...c.conditions,
      signed_up_after: iso(c.conditions.signed_up_after),
      signed_up_before: iso(c.conditions.signed_up_before),
    },
    effect: c.effect,
    stacking: c.stacking,
    priority: c.priority,
    limit_per_member: c.limit_per_member,
    max_points_per_award: c.max_points_per_award,
    budget: c.budget,
    budget_left: c.budget_left === null ? null : Math.max(0, c.budget_left),
    version: c.version,
    created_by: c.created_by,
    created_at: iso(c.created_at)!,
    updated_at: iso(c.updated_at)!,
  };
}

/**
 * Points given, points given back (reversed awards), awards, members reached and the budget left,
 * in all and per day of the program's calendar. The sums are written by each process once a
 * second (campaign-stats.ts): an award shows within about a second.
 */
export async function campaignReport(organization_id: string, campaign_id: string) {
  const c = await campaignById(organization_id, campaign_id);
  if (!c) throw notFound(`Campaign not found: ${campaign_id}`);
  const [days, members_reached] = await Promise.all([campaignDays(campaign_id), campaignMemberCount(campaign_id)]);
  const sum = (f: (d: (typeof days)[number]) => number) => days.reduce((n, d) => n + f(d), 0);
  const returned = sum((d) => d.returned);
  return {
    campaign_id,
    status: statusOf(c),
    version: c.version,
    points_given: sum((d) => d.points) - returned,
    points_returned: returned,
    awards: sum((d) => d.awards),
    members_reached,
    budget: c.budget,
    budget_left: c.budget_left === null ? null : Math.max(0, c.budget_left),
    per_day: days.map((d) => ({ day: d.day, points: d.points - d.returned, awards: d.awards, returned: d.returned })),
  };
}
