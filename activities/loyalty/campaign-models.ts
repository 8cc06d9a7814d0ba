/**
 * Campaigns' schemas, imported by campaign-store.ts alone: the campaigns, the versions an edit of
 * a live campaign leaves, the members' uses of limited campaigns and the reports' daily sums.
 */
import mongoose, { Schema } from 'mongoose';

import type { LimitPeriod } from './policies.ts';

export type CampaignEffect =
  { type: 'bonus'; points: number } | { type: 'multiplier'; factor: string } | { type: 'per_amount'; rate: string };

export interface CampaignConditions {
  /** empty: every action */
  action_types: string[];
  /** the award's amount at least this (a decimal string of the action's earning currency) */
  min_amount: string | null;
  /** an item of one of these categories in the award */
  categories: string[];
  /** members of one of these tiers */
  tiers: string[];
  /** the member's n-th award of the action (1: the first) */
  nth: number | null;
  /** the member's country attribute is one of these */
  countries: string[];
  signed_up_after: Date | null;
  signed_up_before: Date | null;
}

export interface CampaignSchedule {
  /** mon…sun; empty: every day */
  days: string[];
  /** local `HH:MM` from (inclusive) to (exclusive); null: all day */
  hours: { from: string; to: string } | null;
}

/** Stored status: `active` shows as scheduled before `starts_at` and ended from `ends_at` (campaigns.ts). */
export type StoredStatus = 'draft' | 'active' | 'paused' | 'ended';

export interface CampaignDoc {
  _id: string;
  organization_id: string;
  name: string;
  description: string | null;
  status: StoredStatus;
  starts_at: Date;
  ends_at: Date | null;
  /** null: the program's (rules.time_zone) */
  time_zone: string | null;
  schedule: CampaignSchedule;
  conditions: CampaignConditions;
  effect: CampaignEffect;
  stacking: 'stackable' | 'exclusive';
  priority: number;
  limit_per_member: { max: number; per: LimitPeriod } | null;
  max_points_per_award: number | null;
  /** points the campaign may give in all; null: no budget */
  budget: number | null;
  /** what the budget still holds: taken by one conditional update per award, so never below 0 by an award */
  budget_left: number | null;
  version: number;
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

const campaignSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    name: { type: String, required: true },
    description: { type: String, default: null },
    status: { type: String, required: true },
    starts_at: { type: Date, required: true },
    ends_at: { type: Date, default: null },
    time_zone: { type: String, default: null },
    schedule: { type: Schema.Types.Mixed, required: true },
    conditions: { type: Schema.Types.Mixed, required: true },
    effect: { type: Schema.Types.Mixed, required: true },
    stacking: { type: String, required: true },
    priority: { type: Number, required: true },
    limit_per_member: { type: Schema.Types.Mixed, default: null },
    max_points_per_award: { type: Number, default: null },
    budget: { type: Number, default: null },
    budget_left: { type: Number, default: null },
    version: { type: Number, required: true },
    created_by: { type: String, required: true },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
// Every award reads the organization's active campaigns (kept 2 s per process); listings page by creation.
campaignSchema.index({ organization_id: 1, status: 1 });
campaignSchema.index({ organization_id: 1, created_at: -1 });

/** A campaign as it was before an edit made version `version + 1`: `_id` `<campaign>|<version>`. */
const campaignVersionSchema = new Schema(
  {
    _id: { type: String, required: true },
    campaign_id: { type: String, required: true },
    version: { type: Number, required: true },
    snapshot: { type: Schema.Types.Mixed, required: true },
    replaced_at: { type: Date, required: true },
    replaced_by: { type: String, required: true },
  },
  { versionKey: false, minimize: false },
);
campaignVersionSchema.index({ campaign_id: 1, version: -1 });

export interface CampaignVersionDoc {
  _id: string;
  campaign_id: string;
  version: number;
  snapshot: Omit<CampaignDoc, 'budget_left'>;
  replaced_at: Date;
  replaced_by: string;
}

/**
 * A member's uses of a limited campaign in one window, `_id` `<campaign>|<user>|<window>`
 * (`<window>` `nth` for an n-th award's bonus, whose limit is 1). A use is taken by one
 * conditional increment (only while `used` is below the limit), so concurrent awards of the
 * member cannot exceed it; an award that is not written gives its use back. A reversed award's
 * use stays used.
 */
export interface CampaignUseDoc {
  _id: string;
  organization_id: string;
  campaign_id: string;
  user_id: string;
  window: string;
  used: number;
}

const campaignUseSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    campaign_id: { type: String, required: true },
    user_id: { type: String, required: true },
    window: { type: String, required: true },
    used: { type: Number, required: true },
  },
  { versionKey: false },
);
// An erasure reads and tombstones a person's uses (their once-only facts count them first).
campaignUseSchema.index({ organization_id: 1, user_id: 1 });

export const Campaign = mongoose.model<CampaignDoc>('LoyaltyCampaign', campaignSchema, 'loyalty_campaigns');
export const CampaignVersion = mongoose.model<CampaignVersionDoc>(
  'LoyaltyCampaignVersion',
  campaignVersionSchema,
  'loyalty_campaign_versions',
);
export const CampaignUse = mongoose.model<CampaignUseDoc>(
  'LoyaltyCampaignUse',
  campaignUseSchema,
  'loyalty_campaign_uses',
);

/**
 * A campaign's totals for one day of the program's calendar, `_id` `<campaign>|<YYYY-MM-DD>`:
 * added up in each process and written once a second (campaign-stats.ts).
 */
export interface CampaignDayDoc {
  _id: string;
  organization_id: string;
  campaign_id: string;
  day: string;
  points: number;
  awards: number;
  /** points of reversed awards (given back) */
  returned: number;
}

const campaignDaySchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    campaign_id: { type: String, required: true },
    day: { type: String, required: true },
    points: { type: Number, default: 0 },
    awards: { type: Number, default: 0 },
    returned: { type: Number, default: 0 },
  },
  { versionKey: false },
);
campaignDaySchema.index({ campaign_id: 1, day: 1 });

/** A member a campaign reached, `_id` `<campaign>|<user>`: written once (members_reached counts them). */
export interface CampaignMemberDoc {
  _id: string;
  organization_id: string;
  campaign_id: string;
  user_id: string;
  at: Date;
}

const campaignMemberSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    campaign_id: { type: String, required: true },
    user_id: { type: String, required: true },
    at: { type: Date, required: true },
  },
  { versionKey: false },
);
campaignMemberSchema.index({ campaign_id: 1 });
campaignMemberSchema.index({ organization_id: 1, user_id: 1 });

export const CampaignDay = mongoose.model<CampaignDayDoc>(
  'LoyaltyCampaignDay',
  campaignDaySchema,
  'loyalty_campaign_days',
);
export const CampaignMember = mongoose.model<CampaignMemberDoc>(
  'LoyaltyCampaignMember',
  campaignMemberSchema,
  'loyalty_campaign_members',
);
