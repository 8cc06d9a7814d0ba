import mongoose, { Schema } from 'mongoose';

export const GIFT_TYPES = ['mobile_top-ups', 'electronic_pins', 'service_payments'] as const;
export type GiftType = (typeof GIFT_TYPES)[number];

/** Fields each gift type must carry (interface document, "Required fields per gift type"). */
export const REQUIRED_BY_TYPE: Record<GiftType, readonly string[]> = {
  'mobile_top-ups': ['telco_supplier', 'recharge_amount', 'points_value'],
  electronic_pins: ['supplier', 'electronic_pin_amount', 'points_value'],
  service_payments: ['service_provider'],
};

export const GIFT_FIELDS = ['gift_name', 'gift_type', 'country', 'url_photo', 'telco_supplier', 'recharge_amount', 'points_value', 'supplier', 'electronic_pin_amount', 'service_provider'] as const;

const giftSchema = new Schema(
  {
    /** the gift_id: lookups by primary key are the cheapest on FerretDB 1.x */
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
 * A redemption mirrors its ledger debit (same operation id, unique), which is the source of
 * truth for the points; the gift's name and price are kept as they were when redeemed.
 */
const redemptionSchema = new Schema(
  {
    /** `<organization_id>|<operation_id>`: one redemption per ledger operation */
    _id: { type: String, required: true },
    redemption_id: { type: String, required: true, unique: true },
    operation_id: { type: String, required: true },
    organization_id: { type: String, required: true },
    user_id: { type: String, required: true },
    gift_id: { type: String, required: true },
    gift_name: { type: String, required: true },
    points_spent: { type: Number, required: true },
    balance_after: { type: Number, required: true },
    ledger_entry_id: { type: String, required: true },
    status: { type: String, enum: ['completed'], required: true },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: false }, versionKey: false },
);
redemptionSchema.index({ organization_id: 1, user_id: 1, created_at: -1 });

export interface RedemptionDoc {
  _id: string;
  redemption_id: string;
  operation_id: string;
  organization_id: string;
  user_id: string;
  gift_id: string;
  gift_name: string;
  points_spent: number;
  balance_after: number;
  ledger_entry_id: string;
  status: 'completed';
  created_at: Date;
}

export const Gift = mongoose.model<GiftDoc>('Gift', giftSchema, 'gifts');
export const Redemption = mongoose.model<RedemptionDoc>('Redemption', redemptionSchema, 'gift_redemptions');
