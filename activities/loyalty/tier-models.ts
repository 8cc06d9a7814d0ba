/**
 * Tiers' schemas, imported by tier-store.ts alone: the organization's tier program, each member's
 * standing (tier, until when, what earned it) and the history of a member's tier changes.
 */
import mongoose, { Schema } from 'mongoose';

export interface TierDef {
  /** a slug the organization chose (`gold`) */
  tier_id: string;
  name: string;
  /** points earned in the qualifying window that reach the tier */
  threshold: number;
  /** earning multiplier as a decimal string ("1.25"), applied to an award's base points */
  multiplier: string;
  /** campaigns only members of this tier (or of another tier that lists them) take part in */
  unlocks: string[];
}

export type TierWindow = { type: 'calendar_year' } | { type: 'rolling_months'; months: number };

/** One per organization (`_id` the organization), absent while it has no tiers. */
export interface TierProgramDoc {
  _id: string;
  tiers: TierDef[];
  window: TierWindow;
  grace_days: number;
  updated_by?: string;
  updated_at: Date;
}

const tierProgramSchema = new Schema(
  {
    _id: { type: String, required: true },
    tiers: { type: Schema.Types.Mixed, required: true },
    window: { type: Schema.Types.Mixed, required: true },
    grace_days: { type: Number, required: true },
    updated_by: { type: String },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);

/**
 * A member's standing, `_id` `<organization>|<user>`. Written when a member first reaches a tier,
 * changes tier, or is set by hand; `changes` numbers the changes (a change is written only on the
 * number it read, so two at once make one). `review_at` is when the scheduled run looks at the
 * member again (the end of the tier's validity): the run reads only members due.
 */
export interface MemberTierDoc {
  _id: string;
  organization_id: string;
  user_id: string;
  tier_id: string | null;
  since: Date;
  valid_until: Date | null;
  review_at: Date | null;
  manual: { reason: string; until: Date; by: string } | null;
  changes: number;
  /** the start of the qualifying window last read, and the points earned before it */
  window_start: Date | null;
  earned_before_window: number;
  /** what campaigns may ask of the member (country…), set by an admin */
  attributes: Record<string, string>;
  updated_at: Date;
}

const memberTierSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    user_id: { type: String, required: true },
    tier_id: { type: String, default: null },
    since: { type: Date, required: true },
    valid_until: { type: Date, default: null },
    review_at: { type: Date, default: null },
    manual: { type: Schema.Types.Mixed, default: null },
    changes: { type: Number, required: true },
    window_start: { type: Date, default: null },
    earned_before_window: { type: Number, default: 0 },
    attributes: { type: Schema.Types.Mixed, default: {} },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
// The scheduled review reads the members due, oldest first.
memberTierSchema.index({ review_at: 1 });

export type TierChangeKind = 'upgrade' | 'downgrade' | 'renewal' | 'manual';

/** A member's tier change `n`, `_id` `<organization>|<user>|<n>`. */
export interface TierChangeDoc {
  _id: string;
  organization_id: string;
  user_id: string;
  n: number;
  from_tier: string | null;
  to_tier: string | null;
  kind: TierChangeKind;
  earned_in_window: number | null;
  valid_until: Date | null;
  /** a change by hand: the admin's reason (free text: an erasure replaces it) */
  reason: string | null;
  by: string | null;
  at: Date;
}

const tierChangeSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    user_id: { type: String, required: true },
    n: { type: Number, required: true },
    from_tier: { type: String, default: null },
    to_tier: { type: String, default: null },
    kind: { type: String, required: true },
    earned_in_window: { type: Number, default: null },
    valid_until: { type: Date, default: null },
    reason: { type: String, default: null },
    by: { type: String, default: null },
    at: { type: Date, required: true },
  },
  { versionKey: false },
);
tierChangeSchema.index({ organization_id: 1, user_id: 1, n: -1 });

export const TierProgram = mongoose.model<TierProgramDoc>('LoyaltyTierProgram', tierProgramSchema, 'loyalty_tiers');
export const MemberTier = mongoose.model<MemberTierDoc>('LoyaltyMemberTier', memberTierSchema, 'loyalty_members');
export const TierChange = mongoose.model<TierChangeDoc>('LoyaltyTierChange', tierChangeSchema, 'loyalty_tier_changes');
