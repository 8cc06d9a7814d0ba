import mongoose, { Schema } from 'mongoose';

import {
  DENOMINATION_TYPES,
  GIFT_TYPES,
  type GiftType,
  REDEMPTION_STATUSES,
  type RedemptionStatus,
  SETTLE_OUTCOMES,
  type SettleOutcome,
} from './constants.ts';

export {
  GIFT_FIELDS,
  type GiftType,
  PROVIDER_GIFT_FIELDS,
  type RedemptionStatus,
  type SettleOutcome,
} from './constants.ts';

const giftSchema = new Schema(
  {
    /** the gift_id: a gift is read by its primary key (see store.ts) */
    _id: { type: String, required: true },
    gift_id: { type: String, required: true, unique: true },
    organization_id: { type: String, required: true },
    gift_name: { type: String, required: true },
    gift_type: { type: String, enum: GIFT_TYPES, required: true },
    country: { type: String },
    url_photo: { type: String },
    telco_supplier: { type: String },
    recharge_amount: { type: Number },
    points_value: { type: Number },
    supplier: { type: String },
    electronic_pin_amount: { type: Number },
    service_provider: { type: String },
    /** the amounts a redemption may ask for, in `currency`: a list, or a range */
    denominations: {
      type: new Schema(
        {
          type: { type: String, enum: DENOMINATION_TYPES, required: true },
          currency: { type: String, required: true },
          amounts: { type: [Number], default: undefined },
          min: { type: Number },
          max: { type: Number },
        },
        { _id: false },
      ),
      default: undefined,
    },
    /** points per unit of the denominations' currency (a redemption costs ceil(amount × this)) */
    points_per_unit: { type: Number },
    /** a top-up's operator as the provider names it: a number it detects as another's is refused */
    operator_id: { type: String },
    provider_product_id: { type: String },
    provider_currency: { type: String },
    provider_rate: { type: Number },
    available: { type: Boolean },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: 'updated_at' }, versionKey: false },
);
giftSchema.index({ organization_id: 1, gift_type: 1, country: 1 });
giftSchema.index({ organization_id: 1, provider_product_id: 1 });

export interface GiftDoc {
  _id: string;
  gift_id: string;
  organization_id: string;
  gift_name: string;
  gift_type: GiftType;
  country?: string;
  url_photo?: string;
  telco_supplier?: string;
  recharge_amount?: number;
  points_value?: number;
  supplier?: string;
  electronic_pin_amount?: number;
  service_provider?: string;
  denominations?: Denominations;
  points_per_unit?: number;
  operator_id?: string;
  provider_product_id?: string;
  provider_currency?: string;
  /** what one unit of the denominations' currency costs in provider_currency */
  provider_rate?: number;
  available?: boolean;
  created_at: Date;
  updated_at: Date;
}

type Denominations =
  | { type: 'fixed'; currency: string; amounts: number[] }
  | { type: 'range'; currency: string; min: number; max: number };

/**
 * A redemption, written by its workflow `redemption:<redemption_id>` once its points are held
 * (ledger operation `redemption:<id>:hold`), then settled (`completed`: the hold is the debit) or
 * released (`refunded`: operation `redemption:<id>:refund`), or, when the provider's outcome is
 * unknown, left `needs_review` with the hold until an admin settles it (`settlement`). The gift's
 * name, type and price are kept as they were when redeemed. Only the workflow writes it, one step
 * at a time.
 */
const redemptionSchema = new Schema(
  {
    /** the redemption_id: reads by id are primary-key lookups */
    _id: { type: String, required: true },
    redemption_id: { type: String, required: true, unique: true },
    /** the hold's ledger operation */
    operation_id: { type: String, required: true },
    organization_id: { type: String, required: true },
    user_id: { type: String, required: true },
    gift_id: { type: String, required: true },
    gift_name: { type: String, required: true },
    gift_type: { type: String },
    points_spent: { type: Number, required: true },
    points_refunded: { type: Number, default: 0 },
    balance_after: { type: Number, required: true },
    ledger_entry_id: { type: String },
    refund_entry_id: { type: String },
    status: { type: String, enum: REDEMPTION_STATUSES, required: true },
    status_reason: { type: String },
    provider: { type: String },
    provider_transaction_id: { type: String },
    phone_number: { type: String },
    account_reference: { type: String },
    /** the denomination asked for, in `currency` (gifts with denominations) */
    amount: { type: Number },
    currency: { type: String },
    /** an electronic PIN, encrypted with the configuration key; shown to its owner only */
    pin_encrypted: { type: String },
    /** of the points given back, those whose credit had lapsed meanwhile (written down at once; not in points_refunded) */
    points_lapsed: { type: Number },
    /** an admin's decision on a redemption in needs_review */
    settlement: {
      type: new Schema(
        {
          outcome: { type: String, enum: SETTLE_OUTCOMES, required: true },
          settled_by: { type: String, required: true },
          reason: { type: String },
          settled_at: { type: Date, required: true },
        },
        { _id: false },
      ),
      default: undefined,
    },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: 'updated_at' }, versionKey: false },
);
redemptionSchema.index({ organization_id: 1, user_id: 1, created_at: -1 });
redemptionSchema.index({ organization_id: 1, created_at: -1 });
redemptionSchema.index({ organization_id: 1, status: 1, created_at: -1 });

export interface RedemptionDoc {
  _id: string;
  redemption_id: string;
  operation_id: string;
  organization_id: string;
  user_id: string;
  gift_id: string;
  gift_name: string;
  gift_type?: GiftType;
  points_spent: number;
  points_refunded?: number;
  balance_after: number;
  ledger_entry_id?: string;
  refund_entry_id?: string;
  status: RedemptionStatus;
  status_reason?: string;
  provider?: string;
  provider_transaction_id?: string;
  phone_number?: string;
  account_reference?: string;
  pin_encrypted?: string;
  amount?: number;
  currency?: string;
  points_lapsed?: number;
  settlement?: { outcome: SettleOutcome; settled_by: string; reason?: string | null; settled_at: Date };
  created_at: Date;
  updated_at?: Date;
}

/** The sandbox gift provider's own transactions, one per order id (its customIdentifier). */
const sandboxTransactionSchema = new Schema(
  {
    /** the customIdentifier (redemption id): a retried order finds the first transaction */
    _id: { type: String, required: true },
    transaction_id: { type: String, required: true },
    rule: { type: String, enum: ['deliver', 'refuse', 'delay', 'unfunded'], required: true },
    kind: { type: String, enum: GIFT_TYPES, required: true },
    created_at: { type: Date, required: true },
  },
  { versionKey: false },
);

export interface SandboxTransactionDoc {
  _id: string;
  transaction_id: string;
  rule: 'deliver' | 'refuse' | 'delay' | 'unfunded';
  kind: GiftType;
  created_at: Date;
}

/** The sandbox provider's account of an organization (absent: SANDBOX_OPENING_BALANCE in USD). */
const sandboxAccountSchema = new Schema(
  {
    /** the organization id */
    _id: { type: String, required: true },
    balance: { type: Number, required: true },
    currency: { type: String, required: true },
  },
  { versionKey: false, timestamps: { createdAt: false, updatedAt: 'updated_at' } },
);

export interface SandboxAccountDoc {
  _id: string;
  balance: number;
  currency: string;
}

/**
 * An organization's gift settings: the low-balance threshold (in the provider account's currency)
 * and its alert's state (`low_balance_since`: the event of this episode was recorded; cleared when
 * a read finds the balance at or above the threshold again), and the scheduled catalogue sync.
 */
const giftSettingsSchema = new Schema(
  {
    /** the organization id */
    _id: { type: String, required: true },
    low_balance_threshold: { type: Number },
    low_balance_since: { type: Date },
    /** counts the episodes: the event of episode n is keyed `low_balance:n`, recorded once */
    low_balance_episodes: { type: Number, default: 0 },
    catalogue_sync: {
      type: new Schema(
        { scheduled: { type: Boolean, required: true }, points_per_unit: { type: Number, required: true } },
        { _id: false },
      ),
      default: undefined,
    },
    last_sync: {
      type: new Schema(
        {
          at: { type: Date, required: true },
          created: Number,
          updated: Number,
          withdrawn: Number,
          unchanged: Number,
          skipped: Number,
        },
        { _id: false },
      ),
      default: undefined,
    },
  },
  { versionKey: false, timestamps: { createdAt: false, updatedAt: 'updated_at' } },
);
giftSettingsSchema.index({ 'catalogue_sync.scheduled': 1 });

export interface SyncCounts {
  created: number;
  updated: number;
  withdrawn: number;
  unchanged: number;
  skipped: number;
}

export interface GiftSettingsDoc {
  _id: string;
  low_balance_threshold?: number | null;
  low_balance_since?: Date | null;
  low_balance_episodes?: number;
  catalogue_sync?: { scheduled: boolean; points_per_unit: number } | null;
  last_sync?: (SyncCounts & { at: Date }) | null;
  updated_at?: Date;
}

export const Gift = mongoose.model<GiftDoc>('Gift', giftSchema, 'gifts');
export const Redemption = mongoose.model<RedemptionDoc>('Redemption', redemptionSchema, 'gift_redemptions');
export const SandboxAccount = mongoose.model<SandboxAccountDoc>(
  'GiftSandboxAccount',
  sandboxAccountSchema,
  'gift_sandbox_accounts',
);
export const GiftSettings = mongoose.model<GiftSettingsDoc>('GiftSettings', giftSettingsSchema, 'gift_settings');
export const SandboxTransaction = mongoose.model<SandboxTransactionDoc>(
  'GiftSandboxTransaction',
  sandboxTransactionSchema,
  'gift_sandbox_transactions',
);
