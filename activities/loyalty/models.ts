import mongoose, { Schema } from 'mongoose';

export const LEDGER_REASONS = ['action', 'referral', 'receipt', 'ticket_scan', 'redemption', 'refund', 'reversal', 'expiry'] as const;
export type LedgerReason = (typeof LEDGER_REASONS)[number];

/**
 * One change of one user's balance. Entries are only ever inserted: `seq` numbers a user's
 * entries 1, 2, 3… and is part of the primary key, so two writers can never both append entry n+1, and
 * `balance_after` of the newest entry is the balance (it equals the sum of all amounts).
 * `operation_id` is unique per organization: the same operation is never applied twice.
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
  },
  { timestamps: { createdAt: 'created_at', updatedAt: false }, versionKey: false },
);
ledgerEntrySchema.index({ organization_id: 1, user_id: 1, seq: -1 });
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
  created_at: Date;
}

/**
 * Points per action and per referral, one document per organization. Actions and their policies
 * are JSON text (action names are free keys); a document without policies (written before they
 * existed) means the default policy of each action.
 */
const loyaltyRulesSchema = new Schema(
  {
    organization_id: { type: String, required: true, unique: true },
    actions_json: { type: String, required: true },
    policies_json: { type: String },
    referral_points: { type: Number, required: true },
    referred_points: { type: Number, required: true },
    max_points_per_scan: { type: Number },
    updated_by: { type: String },
  },
  { timestamps: { createdAt: false, updatedAt: 'updated_at' }, versionKey: false },
);

export interface LoyaltyRulesDoc {
  organization_id: string;
  actions_json: string;
  policies_json?: string;
  referral_points: number;
  referred_points: number;
  max_points_per_scan?: number;
  updated_by?: string;
  updated_at: Date;
}

export const LedgerEntry = mongoose.model<LedgerEntryDoc>('LedgerEntry', ledgerEntrySchema, 'ledger_entries');
export const LoyaltyRules = mongoose.model<LoyaltyRulesDoc>('LoyaltyRules', loyaltyRulesSchema, 'loyalty_rules');
