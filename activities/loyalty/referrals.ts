/** Referral codes with QR images, and the steps of the referral workflow. */
import { randomBytes } from 'node:crypto';

import { qrPngBase64 } from '../adapters/qr.ts';
import { busy, conflict, notFound } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { recordEvent } from '../events/index.ts';
import { findUser, isTombstone } from '../identity/index.ts';
import { creditPoints } from './ledger.ts';
import { loyaltyFactsOf } from './once-only.ts';
import type { ReferralCodeDoc, ReferralDoc } from './referral-models.ts';
import { getRules } from './rules.ts';
import { loyaltySettings } from './settings.ts';
import {
  completedReferralsOf,
  completeReferralDoc,
  deleteReferralPair,
  insertReferral,
  insertReferralCode,
  insertReferralPair,
  insertReferralReversal,
  referralCodeByCode,
  referralCodeOf,
  referralOf,
  referralPairOf,
} from './store.ts';

// Crockford-style alphabet: no 0/O or 1/I/L to misread from a printed code.
const ALPHABET = 'ABCDEFGHJKMNPQRSTVWXYZ23456789';
const newCode = () => Array.from(randomBytes(10), (b) => ALPHABET[b % ALPHABET.length]).join('');

export function referralUrl(code: string): string {
  return `${loyaltySettings().publicUrl}/referral/${code}`;
}

/** The user's referral code (created once), its URL and a QR PNG of that URL. */
export async function referralQr(
  organization_id: string,
  user_id: string,
): Promise<{ code: string; referral_url: string; qr_code: string }> {
  let doc = await referralCodeOf(organization_id, user_id);
  // A refused insert: either a concurrent request created this user's code, or (rarely) the code was taken.
  while (!doc)
    doc =
      (await insertReferralCode({ code: newCode(), organization_id, user_id })) ??
      (await referralCodeOf(organization_id, user_id));
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

type Parties = { organization_id: string; referrer_user_id: string; referred_user_id: string };

const DAY_MS = 86_400_000;
const MUTUAL = 'The referrer was referred by this user: a user is never referred by someone they referred';
// Says nothing of why (an erased account): whoever reads it learns no one's past.
const REFERRED_BEFORE =
  'This user cannot be referred (a person is referred once, and never by someone they were paired with); nothing was credited';

/**
 * A new referral's conditions, read before anything is written: the referred user's account is
 * younger than the rules' referral_window_days (no referral after the fact), and the referrer is
 * not someone the referred user referred. Only that direct case is refused: longer cycles
 * (A→B→C→A) are not looked for, since each user is still referred at most once, so a cycle earns
 * no more than a chain of the same accounts. The direct check covers referrals recorded before
 * pair claims existed; two requests at the same instant are decided by the pair claim.
 */
async function checkNewReferral(input: Parties, window_days: number, now: Date): Promise<void> {
  const referred = await findUser(input.organization_id, input.referred_user_id);
  if (!referred) throw notFound(`User not found: ${input.referred_user_id}`);
  // A person who joins again after an erasure (docs/privacy.md) is as old as their first account,
  // was referred if any of their accounts was, and stays paired with whom they were paired.
  const [referredBefore, referrerBefore] = await Promise.all([
    loyaltyFactsOf(input.organization_id, input.referred_user_id),
    loyaltyFactsOf(input.organization_id, input.referrer_user_id),
  ]);
  const late = (joined: Date) => now.getTime() - joined.getTime() > window_days * DAY_MS;
  if (late(referred.created_at)) {
    throw conflict(
      `Referrals are accepted only within ${window_days} days of the referred user's account creation (created ${referred.created_at.toISOString()}); nothing was credited`,
    );
  }
  if (
    (referredBefore && late(referredBefore.first_joined_at)) ||
    referredBefore?.referred ||
    referredBefore?.partners.includes(input.referrer_user_id) ||
    referrerBefore?.partners.includes(input.referred_user_id)
  )
    throw conflict(REFERRED_BEFORE);
  const referrersOwn = await referralOf(input.organization_id, input.referrer_user_id);
  if (referrersOwn?.referrer_user_id === input.referred_user_id) throw conflict(MUTUAL);
}

/**
 * Claims the unordered pair {referrer, referred} for this referral (referral-models.ts) and
 * answers the referral id to record: an earlier attempt's claim in the same direction is this
 * referral's (an activity retried after the claim keeps its id). A claim in the other direction
 * is refused, unless its referred user was referred by someone else meanwhile (then it is stale: dropped).
 * A claim whose run stopped for good before recording its referral keeps blocking the other
 * direction: the safe side, and the same request sent again completes it.
 */
async function claimPair(input: Parties): Promise<string> {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const referral_id = newId('ref');
    if (await insertReferralPair({ ...input, referral_id })) return referral_id;
    const pair = await referralPairOf(input.organization_id, input.referrer_user_id, input.referred_user_id);
    if (!pair) continue; // dropped meanwhile
    if (pair.referrer_user_id === input.referrer_user_id) return pair.referral_id;
    const theirs = await referralOf(input.organization_id, pair.referred_user_id);
    // Recorded, or being recorded (no referral yet): refused. Stale only when another referrer won.
    if (!theirs || theirs.referrer_user_id === pair.referrer_user_id) throw conflict(MUTUAL);
    await deleteReferralPair(pair);
  }
  throw busy('Referral busy for these users; retry shortly', 1);
}

/**
 * Workflow step 1: records the referral, or finds the one that exists for the referred user.
 * A referral found is answered as it was (also once the window has passed); a new one must pass
 * checkNewReferral and win the pair claim, else 409 and nothing is written or credited.
 */
export async function recordReferral(input: Parties): Promise<ReferralRecord> {
  const found = await referralOf(input.organization_id, input.referred_user_id);
  if (found) return record(found, true);
  const rules = await getRules(input.organization_id);
  await checkNewReferral(input, rules.referral_window_days, new Date());
  const referral_id = await claimPair(input);
  const doc = await insertReferral({
    referral_id,
    ...input,
    referrer_points: rules.referral_points,
    referred_points: rules.referred_points,
    status: 'pending',
  });
  if (doc) return record(doc, false);
  // A concurrent request recorded this user's referral first.
  const winner = await referralOf(input.organization_id, input.referred_user_id);
  if (!winner) throw new Error('a refused referral insert leaves the referral it collided with');
  // Another referrer won: this claim never becomes a referral, so it must not block the pair.
  if (winner.referrer_user_id !== input.referrer_user_id) await deleteReferralPair({ ...input, referral_id });
  return record(winner, true);
}

/** Workflow step 2: credits one side; the operation id makes a retry credit nothing more. */
export async function creditReferral(input: {
  organization_id: string;
  referral_id: string;
  user_id: string;
  side: 'referrer' | 'referred';
  points: number;
}) {
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

/**
 * Workflow step 3. Only the referral's own workflow writes this document. The event
 * `referral.completed` (key: the referral id) is recorded once it is completed, also when an
 * earlier attempt (or run) completed it and stopped before recording: a repeat records nothing new.
 */
export async function completeReferral(referral_id: string): Promise<void> {
  const r = await completeReferralDoc(referral_id);
  if (r?.status !== 'completed') return;
  await payMilestones(r);
  await recordEvent({
    organization_id: r.organization_id,
    type: 'referral.completed',
    key: r.referral_id,
    at: r.completed_at,
    data: {
      referral_id: r.referral_id,
      referrer_user_id: r.referrer_user_id,
      referred_user_id: r.referred_user_id,
      referrer_points: r.referrer_points,
      referred_points: r.referred_points,
      status: r.status,
      created_at: new Date(r.created_at).toISOString(),
      completed_at: r.completed_at ? new Date(r.completed_at).toISOString() : null,
    },
  });
}

/**
 * The referrer's milestones reached (rules.referral_milestones: the 5th and 10th successful
 * referral pay a bonus): each is one ledger operation `referral-milestone:<referrer>:<count>`, so
 * it pays once however often a completion runs again. Every milestone up to the referrer's count of
 * completed referrals is paid, so one added later pays at the next completion.
 */
async function payMilestones(r: ReferralDoc): Promise<void> {
  const { referral_milestones } = await getRules(r.organization_id);
  if (!referral_milestones.length || isTombstone(r.referrer_user_id)) return;
  const done = await completedReferralsOf(r.organization_id, r.referrer_user_id);
  for (const m of referral_milestones) {
    if (m.count > done) break;
    await creditPoints({
      organization_id: r.organization_id,
      user_id: r.referrer_user_id,
      points: m.points,
      reason: 'referral',
      operation_id: `referral-milestone:${r.referrer_user_id}:${m.count}`,
      description: `referral milestone ${m.count}`,
    });
  }
}

/** Marks one side of a referral reversed, once (a repeated reversal finds the mark there). */
export async function markReferralReversed(
  organization_id: string,
  referral_id: string,
  side: 'referrer' | 'referred',
  mark: object,
): Promise<void> {
  await insertReferralReversal(organization_id, referral_id, side, mark);
}
