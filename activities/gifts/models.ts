import mongoose, { Schema } from 'mongoose';

import {
  GIFT_TYPES,
  type GiftType,
  REDEMPTION_STATUSES,
  type RedemptionStatus,
  SETTLE_OUTCOMES,
  type SettleOutcome,
} from './constants.ts';

export { GIFT_FIELDS, type GiftType, type RedemptionStatus, type SettleOutcome } from './constants.ts';

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
  },
  { timestamps: { createdAt: 'created_at', updatedAt: 'updated_at' }, versionKey: false },
);
giftSchema.index({ organization_id: 1, gift_type: 1, country: 1 });

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
  created_at: Date;
  updated_at: Date;
}

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
    rule: { type: String, enum: ['deliver', 'refuse', 'delay'], required: true },
    kind: { type: String, enum: GIFT_TYPES, required: true },
    created_at: { type: Date, required: true },
  },
  { versionKey: false },
);

export interface SandboxTransactionDoc {
  _id: string;
  transaction_id: string;
  rule: 'deliver' | 'refuse' | 'delay';
  kind: GiftType;
  created_at: Date;
}

export const Gift = mongoose.model<GiftDoc>('Gift', giftSchema, 'gifts');
export const Redemption = mongoose.model<RedemptionDoc>('Redemption', redemptionSchema, 'gift_redemptions');
export const SandboxTransaction = mongoose.model<SandboxTransactionDoc>(
  'GiftSandboxTransaction',
  sandboxTransactionSchema,
  'gift_sandbox_transactions',
);
