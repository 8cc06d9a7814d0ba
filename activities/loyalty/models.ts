import mongoose, { Schema } from 'mongoose';

import { idFrom } from '../core/db/index.ts';
import { LEDGER_REASONS, type LedgerReason } from './constants.ts';

export { type LedgerReason } from './constants.ts';

/** What is left of one credit that expires or waits (see LedgerEntryDoc.lots). */
const lotSchema = new Schema(
  {
    entry_id: { type: String, required: true },
    seq: { type: Number, required: true },
    points: { type: Number, required: true },
    expires_at: { type: Date },
    available_at: { type: Date },
  },
  { _id: false },
);

export interface LotDoc {
  entry_id: string;
  seq: number;
  points: number;
  expires_at?: Date | null;
  available_at?: Date | null;
}

/**
 * One change of one user's balance. Entries are only ever inserted: `seq` numbers a user's
 * entries 1, 2, 3… and is part of the primary key, so two writers can never both append entry n+1, and
 * `balance_after` of the newest entry is the balance (it equals the sum of all amounts).
 * `operation_id` is unique per organization: the same operation is never applied twice.
 * Indexes: {organization_id, user_id, seq: -1} gives a user's newest entry and history pages,
 * the unique {organization_id, operation_id} answers "was this operation applied".
 */
const ledgerEntrySchema = new Schema(
  {
    /** `<organization_id>|<user_id>|<seq>`: the primary key makes (user, seq) unique */
    _id: { type: String, required: true },
    entry_id: { type: String, required: true, unique: true },
    organization_id: { type: String, required: true },
    user_id: { type: String, required: true },
    seq: { type: Number, required: true },
    amount: { type: Number, required: true },
    balance_after: { type: Number, required: true },
    reason: { type: String, enum: LEDGER_REASONS, required: true },
    operation_id: { type: String, required: true },
    /** the caller's idempotency key when the operation id cannot carry it (limited awards) */
    request_id: { type: String },
    description: { type: String },
    /**
     * An admin's free-text note on an award (why it was given): shown in the history, never in an
     * event or the audit trail, cleared by the person's erasure (user-data.ts).
     */
    note: { type: String },
    /** a credit written while the organization's points expire: when what is left of it lapses */
    expires_at: { type: Date },
    /** a credit held before it may be spent (receipt and ticket-scan points with pending days) */
    available_at: { type: Date },
    /** a reversal: the entry_id of the credit it takes back */
    reverses: { type: String },
    /**
     * What is left of each credit that expires or waits, after this entry (absent: none). The
     * newest entry's lots tell the spendable balance at any instant without reading older entries.
     */
    lots: { type: [lotSchema], default: undefined },
    /**
     * Points earned so far by the user's ledger after this entry (credits of actions, referrals
     * and scans, less their reversals; never lowered by spending or expiry): tiers read the points
     * earned in a window as the difference of two entries' values (tiers.ts). Absent on entries
     * written before tiers: the head is then summed once (member.ts).
     */
    earned_after: { type: Number },
    /**
     * How an award's points were made (engine.ts): base, tier multiplier, each campaign's points
     * and its grant, caps. A reversal names the same campaigns with their points taken back.
     */
    breakdown: { type: Schema.Types.Mixed },
    /**
     * The entry's event (publish.ts) is not recorded yet: written with the entry, so the change
     * and the fact that it must be told happen in one write; removed once the event is recorded.
     */
    event_pending: { type: Boolean },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: false }, versionKey: false },
);
ledgerEntrySchema.index({ organization_id: 1, user_id: 1, seq: -1 });
// The events sweep: entries whose event a crash left unrecorded.
ledgerEntrySchema.index({ event_pending: 1, created_at: 1 });
// The expiry run reads one organization's credits by expiry date.
ledgerEntrySchema.index({ organization_id: 1, expires_at: 1 });
ledgerEntrySchema.index({ organization_id: 1, operation_id: 1 }, { unique: true });
ledgerEntrySchema.index({ organization_id: 1, request_id: 1 });

export interface LedgerEntryDoc {
  _id: string;
  entry_id: string;
  organization_id: string;
  user_id: string;
  seq: number;
  amount: number;
  balance_after: number;
  reason: LedgerReason;
  operation_id: string;
  request_id?: string;
  description?: string;
  note?: string;
  expires_at?: Date;
  available_at?: Date;
  reverses?: string;
  lots?: LotDoc[];
  earned_after?: number;
  breakdown?: EntryBreakdown;
  event_pending?: boolean;
  created_at: Date;
}

/** A campaign's share of an award (and of its reversal, negative); `budgeted`: taken from its budget. */
export interface CampaignShare {
  campaign_id: string;
  version: number;
  points: number;
  budgeted?: boolean;
  /** the campaign applied but gave nothing: its budget was spent, or the member's limit reached */
  refused?: 'budget_exhausted' | 'limit_reached';
}

export interface EntryBreakdown {
  base: number;
  tier_id: string | null;
  tier_multiplier: string;
  campaigns: CampaignShare[];
  capped: boolean;
}

/**
 * Points per action and per referral, one document per organization. Actions and their policies
 * are JSON text (action names are free keys); a document without policies (written before they
 * existed) means the default policy of each action.
 */
const loyaltyRulesSchema = new Schema(
  {
    /** the organization_id: the rules are read by `_id` */
    _id: idFrom('organization_id'),
    organization_id: { type: String, required: true, unique: true },
    actions_json: { type: String, required: true },
    policies_json: { type: String },
    referral_points: { type: Number, required: true },
    referred_points: { type: Number, required: true },
    max_points_per_scan: { type: Number },
    /** absent or null: points never expire */
    points_expire_after_days: { type: Number },
    pending_days: { type: Number },
    /** absent: the default window (rules.ts) */
    referral_window_days: { type: Number },
    /** earning rules by amount, per action (JSON text, like actions); absent: none */
    earning_json: { type: String },
    /** the IANA time zone of the program's calendar (campaign hours, calendar-year windows); absent: UTC */
    time_zone: { type: String },
    /** bonuses at the n-th successful referral of a referrer; absent: none */
    referral_milestones: { type: [{ _id: false, count: Number, points: Number }], default: undefined },
    updated_by: { type: String },
  },
  { timestamps: { createdAt: false, updatedAt: 'updated_at' }, versionKey: false },
);

export interface LoyaltyRulesDoc {
  _id: string;
  organization_id: string;
  actions_json: string;
  policies_json?: string;
  referral_points: number;
  referred_points: number;
  max_points_per_scan?: number;
  points_expire_after_days?: number | null;
  pending_days?: number;
  referral_window_days?: number;
  earning_json?: string;
  time_zone?: string;
  referral_milestones?: { count: number; points: number }[];
  updated_by?: string;
  updated_at: Date;
}

/**
 * How far the expiry run has looked, per organization: credits expiring up to `through` were
 * handled. Created when an organization first sets an expiry; the run only ever moves it forward,
 * and handling a credit twice changes nothing (its expiry is one ledger operation).
 */
const expiryCursorSchema = new Schema(
  {
    _id: { type: String, required: true },
    through: { type: Date, required: true },
  },
  { versionKey: false },
);

export interface ExpiryCursorDoc {
  _id: string;
  through: Date;
}

export const LedgerEntry = mongoose.model<LedgerEntryDoc>('LedgerEntry', ledgerEntrySchema, 'ledger_entries');
export const LoyaltyRules = mongoose.model<LoyaltyRulesDoc>('LoyaltyRules', loyaltyRulesSchema, 'loyalty_rules');
export const ExpiryCursor = mongoose.model<ExpiryCursorDoc>(
  'LoyaltyExpiryCursor',
  expiryCursorSchema,
  'loyalty_expiry_cursors',
);
