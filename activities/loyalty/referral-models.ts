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
  },
  { timestamps: { createdAt: 'created_at', updatedAt: false }, versionKey: false },
);
referralSchema.index({ organization_id: 1, referred_user_id: 1 }, { unique: true });
// The referrer's side (their export and erasure), without reading the organization's referrals.
referralSchema.index({ organization_id: 1, referrer_user_id: 1 });

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
  created_at: Date;
}

/**
 * One side of a referral whose credit an admin reversed: `_id` = `<referral_id>|<side>`. Its own
 * document, written once (store.ts says why).
 */
const referralReversalSchema = new Schema(
  {
    _id: { type: String, required: true },
    referral_id: { type: String, required: true },
    organization_id: { type: String, required: true },
    side: { type: String, enum: ['referrer', 'referred'], required: true },
    reversal: { type: Schema.Types.Mixed, required: true },
  },
  { versionKey: false, minimize: false },
);

export interface ReferralReversalDoc {
  _id: string;
  referral_id: string;
  organization_id: string;
  side: 'referrer' | 'referred';
  reversal: Record<string, unknown>;
}

/**
 * Two users are joined by at most one referral, in one direction: `_id` =
 * `<organization>|<lower user_id>|<higher user_id>`, inserted before the referral itself, so of
 * "A refers B" and "B refers A" sent at the same instant (two workflows, one per referred user)
 * the primary key lets exactly one through. A store without transactions cannot check "B never
 * referred A" and insert in one step; one key for the unordered pair can.
 */
const referralPairSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    referrer_user_id: { type: String, required: true },
    referred_user_id: { type: String, required: true },
    /** the referral this claim is for (an activity's retry records that same referral) */
    referral_id: { type: String, required: true },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: false }, versionKey: false },
);

export interface ReferralPairDoc {
  _id: string;
  organization_id: string;
  referrer_user_id: string;
  referred_user_id: string;
  referral_id: string;
  created_at: Date;
}

export const ReferralCode = mongoose.model<ReferralCodeDoc>('ReferralCode', referralCodeSchema, 'referral_codes');
export const Referral = mongoose.model<ReferralDoc>('Referral', referralSchema, 'referrals');
export const ReferralReversal = mongoose.model<ReferralReversalDoc>(
  'ReferralReversal',
  referralReversalSchema,
  'referral_reversals',
);
export const ReferralPair = mongoose.model<ReferralPairDoc>('ReferralPair', referralPairSchema, 'referral_pairs');
