/** Referral codes with QR images, and the steps of the referral workflow. */
import { randomBytes } from 'node:crypto';
import { config } from '../config';
import { notFound } from '../errors';
import { newId } from '../ids';
import { qrPngBase64 } from '../engines/qr';
import { creditPoints } from './ledger';
import { getRules } from './rules';
import type { ReferralCodeDoc, ReferralDoc } from './referral-models';
import { completeReferralDoc, insertReferral, insertReferralCode, insertReferralReversal, referralCodeByCode, referralCodeOf, referralOf } from './store';

// Crockford-style alphabet: no 0/O or 1/I/L to misread from a printed code.
const ALPHABET = 'ABCDEFGHJKMNPQRSTVWXYZ23456789';
const newCode = () => Array.from(randomBytes(10), (b) => ALPHABET[b % ALPHABET.length]).join('');

export function referralUrl(code: string): string {
  return `${config().publicUrl}/referral/${code}`;
}

/** The user's referral code (created once), its URL and a QR PNG of that URL. */
export async function referralQr(organization_id: string, user_id: string): Promise<{ code: string; referral_url: string; qr_code: string }> {
  let doc = await referralCodeOf(organization_id, user_id);
  // A refused insert: either a concurrent request created this user's code, or (rarely) the code was taken.
  while (!doc) doc = (await insertReferralCode({ code: newCode(), organization_id, user_id })) ?? (await referralCodeOf(organization_id, user_id));
  const referral_url = referralUrl(doc.code);
  return { code: doc.code, referral_url, qr_code: await qrPngBase64(referral_url) };
}

export async function lookupReferralCode(code: string): Promise<ReferralCodeDoc> {
  const doc = await referralCodeByCode(code.toUpperCase());
  if (!doc) throw notFound('Referral code not found');
  return doc;
}

/** The user a referral code belongs to in the organization, or null (unknown code, or another organization's). */
export async function referralCodeOwner(organization_id: string, code: string): Promise<string | null> {
  if (!/^[A-Za-z0-9]{4,32}$/.test(code)) return null;
  const doc = await referralCodeByCode(code.toUpperCase());
  return doc && doc.organization_id === organization_id ? doc.user_id : null;
}

export interface ReferralRecord {
  referral: Omit<ReferralDoc, 'created_at' | 'completed_at'> & { created_at: string };
  /** the referred user had already been referred (by this or another referrer) */
  existing: boolean;
}

const record = (r: ReferralDoc, existing: boolean): ReferralRecord => ({
  existing,
  referral: {
    referral_id: r.referral_id,
    organization_id: r.organization_id,
    referred_user_id: r.referred_user_id,
    referrer_user_id: r.referrer_user_id,
    referrer_points: r.referrer_points,
    referred_points: r.referred_points,
    status: r.status,
    created_at: r.created_at.toISOString(),
  },
});

/** Workflow step 1: records the referral, or finds the one that exists for the referred user. */
export async function recordReferral(input: { organization_id: string; referrer_user_id: string; referred_user_id: string }): Promise<ReferralRecord> {
  const found = await referralOf(input.organization_id, input.referred_user_id);
  if (found) return record(found, true);
  const rules = await getRules(input.organization_id);
  const doc = await insertReferral({ referral_id: newId('ref'), ...input, referrer_points: rules.referral_points, referred_points: rules.referred_points, status: 'pending' });
  if (doc) return record(doc, false);
  // A concurrent request recorded this user's referral first.
  const winner = await referralOf(input.organization_id, input.referred_user_id);
  if (!winner) throw new Error('a refused referral insert leaves the referral it collided with');
  return record(winner, true);
}

/** Workflow step 2: credits one side; the operation id makes a retry credit nothing more. */
export async function creditReferral(input: { organization_id: string; referral_id: string; user_id: string; side: 'referrer' | 'referred'; points: number }) {
  const out = await creditPoints({
    organization_id: input.organization_id,
    user_id: input.user_id,
    points: input.points,
    reason: 'referral',
    operation_id: `referral:${input.referral_id}:${input.side}`,
    description: `referral ${input.referral_id} (${input.side})`,
  });
  return { balance: out.entry.balance_after, duplicate: out.duplicate };
}

/** Workflow step 3. Only the referral's own workflow writes this document. */
export async function completeReferral(referral_id: string): Promise<void> {
  await completeReferralDoc(referral_id);
}

/** Marks one side of a referral reversed, once (a repeated reversal finds the mark there). */
export async function markReferralReversed(organization_id: string, referral_id: string, side: 'referrer' | 'referred', mark: object): Promise<void> {
  await insertReferralReversal(organization_id, referral_id, side, mark);
}

