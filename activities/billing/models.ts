import mongoose, { Schema } from 'mongoose';

/**
 * Billing's schemas, imported by store.ts alone. Every balance change is an insert whose primary
 * key makes it happen once (a purchase is credited once, a refund applied once, a payment event
 * processed once); the balance is computed from those records (store.ts says why).
 */
const ts = { createdAt: 'created_at', updatedAt: 'updated_at' } as const;

const tokenPackageSchema = new Schema(
  {
    _id: { type: String, required: true },
    name: { type: String, required: true },
    tokens: { type: Number, required: true },
    price: { type: Number, required: true },
    currency: { type: String, required: true },
    validity_days: { type: Number, required: true },
  },
  { timestamps: ts, versionKey: false },
);

const PURCHASE_STATUSES = ['pending', 'requires_action', 'succeeded', 'failed', 'refunded'] as const;
export type PurchaseStatus = (typeof PURCHASE_STATUSES)[number];

const purchaseSchema = new Schema(
  {
    /** the transaction_id */
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    user_id: { type: String, required: true },
    package_id: { type: String, required: true },
    tokens: { type: Number, required: true },
    price: { type: Number, required: true },
    currency: { type: String, required: true },
    validity_days: { type: Number, required: true },
    provider: { type: String, enum: ['stripe', 'sandbox'], required: true },
    payment_intent_id: { type: String },
    status: { type: String, enum: PURCHASE_STATUSES, required: true },
    failure_reason: { type: String },
  },
  { timestamps: ts, versionKey: false },
);
purchaseSchema.index({ payment_intent_id: 1 });
purchaseSchema.index({ organization_id: 1, user_id: 1 });

/** Tokens credited by a purchase: `_id` = `credit:<transaction_id>`, so a purchase credits once. */
const tokenCreditSchema = new Schema(
  {
    _id: { type: String, required: true },
    transaction_id: { type: String, required: true },
    organization_id: { type: String, required: true },
    user_id: { type: String, required: true },
    tokens: { type: Number, required: true },
    expires_at: { type: Date, required: true },
    source: { type: String, required: true },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: false }, versionKey: false },
);
tokenCreditSchema.index({ organization_id: 1, user_id: 1 });

/** A refund removes what is left of one credit: `_id` = `refund:<transaction_id>`. */
const tokenRefundSchema = new Schema(
  {
    _id: { type: String, required: true },
    transaction_id: { type: String, required: true },
    organization_id: { type: String, required: true },
    user_id: { type: String, required: true },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: false }, versionKey: false },
);
tokenRefundSchema.index({ organization_id: 1, user_id: 1 });

/** Tokens used by one model call (written by the LLM gateway). */
const tokenUsageSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    user_id: { type: String, required: true },
    agent: { type: String, required: true },
    model: { type: String, required: true },
    prompt_tokens: { type: Number, required: true },
    completion_tokens: { type: Number, required: true },
    tokens: { type: Number, required: true },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: false }, versionKey: false },
);
tokenUsageSchema.index({ organization_id: 1, user_id: 1, created_at: -1 });

/** One row per provider event id: the webhook's dedupe, and a record of unknown types too. */
const paymentEventSchema = new Schema(
  {
    _id: { type: String, required: true },
    type: { type: String, required: true },
    outcome: { type: String, required: true },
    transaction_id: { type: String },
    livemode: { type: Boolean },
  },
  { timestamps: { createdAt: 'received_at', updatedAt: false }, versionKey: false },
);

export interface TokenPackageDoc {
  _id: string;
  name: string;
  tokens: number;
  price: number;
  currency: string;
  validity_days: number;
  created_at: Date;
  updated_at: Date;
}
export interface PurchaseDoc {
  _id: string;
  organization_id: string;
  user_id: string;
  package_id: string;
  tokens: number;
  price: number;
  currency: string;
  validity_days: number;
  provider: 'stripe' | 'sandbox';
  payment_intent_id?: string;
  status: PurchaseStatus;
  failure_reason?: string;
  created_at: Date;
  updated_at: Date;
}
export interface TokenCreditDoc {
  _id: string;
  transaction_id: string;
  organization_id: string;
  user_id: string;
  tokens: number;
  expires_at: Date;
  source: string;
  created_at: Date;
}
export interface TokenRefundDoc {
  _id: string;
  transaction_id: string;
  organization_id: string;
  user_id: string;
  created_at: Date;
}
export interface TokenUsageDoc {
  _id: string;
  organization_id: string;
  user_id: string;
  agent: string;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  tokens: number;
  created_at: Date;
}
export interface PaymentEventDoc {
  _id: string;
  type: string;
  outcome: string;
  transaction_id?: string;
  livemode?: boolean;
  received_at: Date;
}

export const TokenPackage = mongoose.model<TokenPackageDoc>('TokenPackage', tokenPackageSchema, 'billing_packages');
export const Purchase = mongoose.model<PurchaseDoc>('Purchase', purchaseSchema, 'billing_purchases');
export const TokenCredit = mongoose.model<TokenCreditDoc>('TokenCredit', tokenCreditSchema, 'billing_credits');
export const TokenRefund = mongoose.model<TokenRefundDoc>('TokenRefund', tokenRefundSchema, 'billing_refunds');
export const TokenUsage = mongoose.model<TokenUsageDoc>('TokenUsage', tokenUsageSchema, 'billing_usage');
export const PaymentEvent = mongoose.model<PaymentEventDoc>(
  'PaymentEvent',
  paymentEventSchema,
  'billing_payment_events',
);
