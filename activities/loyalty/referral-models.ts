import mongoose, { Schema } from 'mongoose';

/** One referral code per user and organization. */
const referralCodeSchema = new Schema(
  {
    code: { type: String, required: true, unique: true },
    organization_id: { type: String, required: true },
    user_id: { type: String, required: true },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: false }, versionKey: false },
);
referralCodeSchema.index({ organization_id: 1, user_id: 1 }, { unique: true });

/**
 * A user is referred at most once per organization: the unique (organization, referred user)
 * index backs the workflow id `referral:<org>:<referred>` beyond Temporal's retention.
 * Points are fixed when the referral is recorded, so a retried step credits the same amounts.
 */
const referralSchema = new Schema(
  {
    referral_id: { type: String, required: true, unique: true },
    organization_id: { type: String, required: true },
    referred_user_id: { type: String, required: true },
    referrer_user_id: { type: String, required: true },
    referrer_points: { type: Number, required: true },
    referred_points: { type: Number, required: true },
    status: { type: String, enum: ['pending', 'completed'], required: true },
    completed_at: { type: Date },
    /** set when an admin reverses that side's credit (the ledger's reversal entry decides it) */
    referrer_reversal: { type: Schema.Types.Mixed },
    referred_reversal: { type: Schema.Types.Mixed },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: false }, versionKey: false },
);
referralSchema.index({ organization_id: 1, referred_user_id: 1 }, { unique: true });

export interface ReferralCodeDoc {
  code: string;
  organization_id: string;
  user_id: string;
  created_at: Date;
}
export interface ReferralDoc {
  referral_id: string;
  organization_id: string;
  referred_user_id: string;
  referrer_user_id: string;
  referrer_points: number;
  referred_points: number;
  status: 'pending' | 'completed';
  completed_at?: Date;
  referrer_reversal?: Record<string, unknown>;
  referred_reversal?: Record<string, unknown>;
  created_at: Date;
}

export const ReferralCode = mongoose.model<ReferralCodeDoc>('ReferralCode', referralCodeSchema, 'referral_codes');
export const Referral = mongoose.model<ReferralDoc>('Referral', referralSchema, 'referrals');
