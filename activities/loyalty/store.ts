/**
 * Loyalty's data: ledger entries, the rules per organization, the expiry run's cursors, referral
 * codes, referrals, their pair claims and reversals. The only file that reads or writes loyalty's
 * models; the ledger, rules, expiry and referral code (and other components, through them) call
 * these functions. Every hot path is answered from an index the schemas declare (models.ts); how
 * each is answered, and the rules' 2 s cache: docs/storage.md, "Loyalty".
 */
import {
  byId,
  byKey,
  insertEach,
  insertInOrder,
  insertOnce,
  isDuplicateKey,
  jsonText,
  keyFilter,
} from '../core/db/index.ts';
import { groupCommit } from '../core/group-commit.ts';
import type { EarningRule } from './earning.ts';
import {
  ExpiryCursor,
  type ExpiryCursorDoc,
  LedgerEntry,
  type LedgerEntryDoc,
  LoyaltyRules,
  type LoyaltyRulesDoc,
} from './models.ts';
import type { ActionPolicy } from './policies.ts';
import {
  Referral,
  ReferralCode,
  type ReferralCodeDoc,
  type ReferralDoc,
  ReferralPair,
  type ReferralPairDoc,
  ReferralReversal,
  type ReferralReversalDoc,
} from './referral-models.ts';

// ---- ledger entries ----

/** The user's newest entry, or null (one row of the index {organization_id, user_id, seq: -1}). */
export const newestEntry = (organization_id: string, user_id: string) =>
  LedgerEntry.findOne({ organization_id, user_id }).sort({ seq: -1 }).lean<LedgerEntryDoc>();

export const entryAt = (organization_id: string, user_id: string, seq: number) =>
  LedgerEntry.findOne({ organization_id, user_id, seq }).lean<LedgerEntryDoc>();

/** The user's entries with from < seq <= through, newest first (a range of the same index). */
export const entriesBetween = (organization_id: string, user_id: string, from: number, through: number) =>
  LedgerEntry.find({ organization_id, user_id, seq: { $gt: from, $lte: through } })
    .sort({ seq: -1 })
    .lean<LedgerEntryDoc[]>();

/** The points a ledger earned (credits of earning reasons less reversals), summed over its entries. */
export async function earnedSum(organization_id: string, user_id: string): Promise<number> {
  const rows = await LedgerEntry.find(
    { organization_id, user_id, reason: { $in: ['action', 'referral', 'receipt', 'ticket_scan', 'reversal'] } },
    { _id: 0, amount: 1 },
  ).lean<{ amount: number }[]>();
  return rows.reduce((n, r) => n + r.amount, 0);
}

/**
 * The points the ledger had earned before `at`: earned_after of its newest entry written before
 * then (0 when none). Read from the newest entry backwards on {organization_id, user_id, seq}.
 */
export async function earnedBefore(organization_id: string, user_id: string, at: Date): Promise<number> {
  const e = await LedgerEntry.findOne(
    { organization_id, user_id, created_at: { $lt: at } },
    { _id: 0, earned_after: 1, seq: 1 },
  )
    .sort({ seq: -1 })
    .lean<Pick<LedgerEntryDoc, 'earned_after' | 'seq'>>();
  if (!e) return 0;
  if (e.earned_after !== undefined) return e.earned_after;
  const rows = await LedgerEntry.find(
    {
      organization_id,
      user_id,
      seq: { $lte: e.seq },
      reason: { $in: ['action', 'referral', 'receipt', 'ticket_scan', 'reversal'] },
    },
    { _id: 0, amount: 1 },
  ).lean<{ amount: number }[]>();
  return rows.reduce((n, r) => n + r.amount, 0);
}

/** How many awards of the action the user's ledger holds (a campaign's n-th award condition). */
export const actionAwardsOf = (organization_id: string, user_id: string, action_type: string) =>
  LedgerEntry.countDocuments({
    organization_id,
    user_id,
    reason: 'action',
    description: action_type,
    amount: { $gt: 0 },
  });

/** The user's awards per action (their descriptions), for the once-only facts of an erasure. */
export async function actionAwardCounts(organization_id: string, user_id: string): Promise<Record<string, number>> {
  const rows = await LedgerEntry.find(
    { organization_id, user_id, reason: 'action', amount: { $gt: 0 } },
    { _id: 0, description: 1 },
  ).lean<{ description?: string }[]>();
  const counts: Record<string, number> = {};
  for (const r of rows) if (r.description) counts[r.description] = (counts[r.description] ?? 0) + 1;
  return counts;
}

type NewEntry = Omit<LedgerEntryDoc, '_id' | 'created_at'>;

/**
 * The `_id` prefix of the ledger's next entry: the newest entry's own (`<org>|<user>`), so a ledger
 * an erasure tombstoned in place (its entries keep `<org>|<the erased user>|<seq>`) goes on in the
 * same key space and an append under either name collides with the other on the primary key,
 * even halfway through the renaming; `<org>|<user_id>` for a new ledger.
 */
export function keySpaceOf(
  newest: Pick<LedgerEntryDoc, '_id'> | null,
  organization_id: string,
  user_id: string,
): string {
  return newest ? newest._id.slice(0, newest._id.lastIndexOf('|')) : `${organization_id}|${user_id}`;
}

/** An entry as the ledger writes it: its `_id` in its key space (keySpaceOf) and its date. */
export type EntryToWrite = NewEntry & { _id: string; created_at: Date };

/**
 * Writes one entry, in one unordered insert with the other members' entries of the moment (group
 * commit: each member has at most one entry in flight here). Throws the duplicate-key error when
 * the ledger has that entry `seq` already (primary key) or the operation was applied (unique
 * operation index). Written as drafted (the raw collection: the drafts are typed, and the
 * model's cast would cost more than the write).
 */
export const insertEntry = groupCommit<EntryToWrite, true>(async (docs) => insertEach(LedgerEntry.collection, docs));

/**
 * Writes one member's consecutive entries in one ordered insert, stopping at the first refused:
 * how many were written, and the error that stopped the rest.
 */
export const insertEntries = (docs: EntryToWrite[]) => insertInOrder(LedgerEntry.collection, docs);

/** Entries written before `before` whose event is not recorded yet, oldest first. */
export const entriesWithPendingEvent = (before: Date, limit: number) =>
  LedgerEntry.find({ event_pending: true, created_at: { $lt: before } })
    .sort({ created_at: 1 })
    .limit(limit)
    .lean<LedgerEntryDoc[]>();

export async function clearEventPending(ids: string[]): Promise<void> {
  if (ids.length) await LedgerEntry.updateMany({ _id: { $in: ids } }, { $unset: { event_pending: 1 } });
}

/** The entry of an operation, or null when it was never applied. */
export const entryByOperation = (organization_id: string, operation_id: string) =>
  LedgerEntry.findOne({ organization_id, operation_id }).lean<LedgerEntryDoc>();

/** Which of these operations of the organization have their entry (one read on the operation index). */
export const appliedOperations = async (organization_id: string, operation_ids: string[]) =>
  new Set(
    (
      await LedgerEntry.find({ organization_id, operation_id: { $in: operation_ids } }, { operation_id: 1 }).lean<
        { operation_id: string }[]
      >()
    ).map((e) => e.operation_id),
  );

/** An entry written with this request_id (the caller's idempotency key), or null. Several may carry one: any answers. */
export const entryByRequest = (organization_id: string, request_id: string) =>
  LedgerEntry.findOne({ organization_id, request_id }).lean<LedgerEntryDoc>();

/**
 * The operation ids of the organization that start with `prefix` (a range of the unique operation
 * index), with their users. `prefix` must end with ':' (the range stops before ';', the next character).
 */
export const operationsStartingWith = (organization_id: string, prefix: string) =>
  LedgerEntry.find(
    { organization_id, operation_id: { $gte: prefix, $lt: `${prefix.slice(0, -1)};` } },
    { _id: 0, operation_id: 1, user_id: 1, request_id: 1 },
  ).lean<Pick<LedgerEntryDoc, 'operation_id' | 'user_id' | 'request_id'>[]>();

// ---- expiry ----

export type LapsedCredit = Pick<LedgerEntryDoc, 'entry_id' | 'user_id' | 'expires_at'>;
const LAPSED_FIELDS = { entry_id: 1, user_id: 1, expires_at: 1 };

/** Up to `limit` credits of the organization lapsing in (after, through], soonest first (index {organization_id, expires_at}). */
export const lapsedCredits = (organization_id: string, after: Date, through: Date, limit: number) =>
  LedgerEntry.find({ organization_id, expires_at: { $gt: after, $lte: through } }, LAPSED_FIELDS)
    .sort({ expires_at: 1 })
    .limit(limit)
    .lean<LapsedCredit[]>();

/** Every credit of the organization lapsing at exactly that instant. */
export const creditsLapsingAt = (organization_id: string, at: Date) =>
  LedgerEntry.find({ organization_id, expires_at: at }, LAPSED_FIELDS).lean<LapsedCredit[]>();

/** Makes the expiry run look at this organization from the beginning (idempotent). */
export async function startExpiryCursor(organization_id: string): Promise<void> {
  await insertOnce(ExpiryCursor, { _id: organization_id, through: new Date(0) });
}

/** The expiry run's cursors: every organization's, or one's. */
export const expiryCursors = (organization_id?: string) =>
  ExpiryCursor.find(organization_id ? { _id: organization_id } : {}).lean<ExpiryCursorDoc[]>();

export async function moveExpiryCursor(organization_id: string, through: Date): Promise<void> {
  await ExpiryCursor.updateOne({ _id: organization_id }, { $set: { through } });
}

// ---- rules ----

/** Action names are free keys (dots and `$` allowed), hence JSON text. */
const actionsText = jsonText<Record<string, number>>(() => ({}));
const policiesText = jsonText<Record<string, ActionPolicy>>(() => ({}));
const earningText = jsonText<Record<string, EarningRule>>(() => ({}));

/** A rules document as its readers see it: the JSON-text fields decoded. */
export interface StoredRules extends Omit<
  LoyaltyRulesDoc,
  '_id' | 'organization_id' | 'actions_json' | 'policies_json' | 'earning_json' | 'updated_at'
> {
  earning: Record<string, EarningRule>;
  actions: Record<string, number>;
  /** absent for an action: its default policy (rules written before policies existed) */
  policies: Record<string, ActionPolicy>;
  updated_at?: Date;
}

/** The organization's stored rules, or null while it keeps the defaults. */
export async function readRules(organization_id: string): Promise<StoredRules | null> {
  const doc = await byKey<LoyaltyRulesDoc>(LoyaltyRules, 'organization_id', organization_id);
  if (!doc) return null;
  const { actions_json, policies_json, earning_json, _id, organization_id: _org, ...rest } = doc;
  return {
    ...rest,
    actions: actionsText.decode(actions_json),
    policies: policiesText.decode(policies_json),
    earning: earningText.decode(earning_json),
  };
}

/**
 * Replaces the organization's rules. One writer per organization document (an admin's edit): two
 * admins saving at the same instant keep one of the two complete rule sets, never a mix.
 */
export async function writeRules(organization_id: string, rules: Omit<StoredRules, 'updated_at'>): Promise<void> {
  const { actions, policies, earning, ...rest } = rules;
  const doc = {
    organization_id,
    ...rest,
    actions_json: actionsText.encode(actions),
    policies_json: policiesText.encode(policies),
    earning_json: earningText.encode(earning),
    updated_at: new Date(),
  };
  await LoyaltyRules.replaceOne(await keyFilter(LoyaltyRules, 'organization_id', organization_id), doc, {
    upsert: true,
  });
}

// ---- referrals ----

export const referralCodeOf = (organization_id: string, user_id: string) =>
  ReferralCode.findOne({ organization_id, user_id }).lean<ReferralCodeDoc>();

export const referralCodeByCode = (code: string) => ReferralCode.findOne({ code }).lean<ReferralCodeDoc>();

/** Creates the user's code; null when the code or the user's code exists already. */
export async function insertReferralCode(doc: Omit<ReferralCodeDoc, 'created_at'>): Promise<ReferralCodeDoc | null> {
  try {
    return (await ReferralCode.create(doc)).toObject() as ReferralCodeDoc;
  } catch (err) {
    if (isDuplicateKey(err)) return null;
    throw err;
  }
}

/** How many referrals of the referrer completed (the index {organization_id, referrer_user_id}). */
export const completedReferralsOf = (organization_id: string, referrer_user_id: string) =>
  Referral.countDocuments({ organization_id, referrer_user_id, status: 'completed' });

/** The referral of a referred user (at most one per organization). */
export const referralOf = (organization_id: string, referred_user_id: string) =>
  Referral.findOne({ organization_id, referred_user_id }).lean<ReferralDoc>();

/** Records a referral; null when the referred user has one already (the unique index decides). */
export async function insertReferral(
  doc: Omit<ReferralDoc, 'created_at' | 'completed_at'>,
): Promise<ReferralDoc | null> {
  try {
    return (await Referral.create(doc)).toObject() as ReferralDoc;
  } catch (err) {
    if (isDuplicateKey(err)) return null;
    throw err;
  }
}

/**
 * Only the referral's own workflow writes this document. Answers the referral as it stands after
 * (completed now or by an earlier attempt), or null when there is no referral with this id.
 */
export async function completeReferralDoc(referral_id: string): Promise<ReferralDoc | null> {
  const done = await Referral.findOneAndUpdate(
    { referral_id, status: 'pending' },
    { $set: { status: 'completed', completed_at: new Date() } },
    { new: true },
  ).lean<ReferralDoc>();
  return done ?? Referral.findOne({ referral_id }).lean<ReferralDoc>();
}

/**
 * A side of a referral reversed, written once (an insert under `<referral>|<side>`: a repeated
 * reversal changes nothing). Its own document, apart from the referral its workflow updates.
 */
export async function insertReferralReversal(
  organization_id: string,
  referral_id: string,
  side: 'referrer' | 'referred',
  reversal: object,
): Promise<void> {
  await insertOnce(ReferralReversal, { _id: `${referral_id}|${side}`, referral_id, organization_id, side, reversal });
}

// ---- referral pairs (referral-models.ts says why) ----

const pairKey = (organization_id: string, a: string, b: string) =>
  a < b ? `${organization_id}|${a}|${b}` : `${organization_id}|${b}|${a}`;

/** Claims the pair {referrer, referred} for this referral; false when the pair is claimed already (either direction). */
export const insertReferralPair = (doc: Omit<ReferralPairDoc, '_id' | 'created_at'>) =>
  insertOnce(ReferralPair, { _id: pairKey(doc.organization_id, doc.referrer_user_id, doc.referred_user_id), ...doc });

/** The claim on the pair of these two users, in whichever direction. */
export const referralPairOf = (organization_id: string, a: string, b: string) =>
  byId<ReferralPairDoc>(ReferralPair, pairKey(organization_id, a, b));

/** Drops a claim that never became its referral (only that claim: a newer one is kept). */
export async function deleteReferralPair(
  pair: Pick<ReferralPairDoc, 'organization_id' | 'referrer_user_id' | 'referred_user_id' | 'referral_id'>,
): Promise<void> {
  await ReferralPair.deleteOne({
    _id: pairKey(pair.organization_id, pair.referrer_user_id, pair.referred_user_id),
    referral_id: pair.referral_id,
  });
}

// ---- one person's data (user-data.ts: export and erasure) ----

/** Every entry of the user, oldest first (the index {organization_id, user_id, seq: -1}, read backwards). */
export const entriesOfUser = (organization_id: string, user_id: string) =>
  LedgerEntry.find({ organization_id, user_id }).sort({ seq: 1 }).lean<LedgerEntryDoc[]>();

/** The fields of an entry an erasure replaces: who it is for, and the texts that named them. */
export type EntryTombstone = Pick<LedgerEntryDoc, 'user_id' | 'operation_id'> & {
  request_id?: string;
  description?: string;
};

/**
 * Rewrites entries in place (one `_id` update each, in one bulk write): each only while it still
 * belongs to `user_id`, so a second run changes nothing. The `_id` (`<org>|<user>|<seq>`) is kept:
 * it is what refuses any later append for the erased user id (store.ts insertEntry), never shown.
 * An award's note (an admin's words about the person) is removed. Answers how many entries changed.
 */
export async function tombstoneEntries(
  user_id: string,
  changes: { _id: string; set: EntryTombstone }[],
): Promise<number> {
  if (!changes.length) return 0;
  const res = await LedgerEntry.bulkWrite(
    changes.map((c) => ({
      updateOne: { filter: { _id: c._id, user_id }, update: { $set: c.set, $unset: { note: 1 } } },
    })),
    { ordered: false },
  );
  return res.modifiedCount;
}

/** Removes the user's referral code (at most one per organization, unique index {organization_id, user_id}). */
export async function deleteReferralCodesOf(organization_id: string, user_id: string): Promise<number> {
  return (await ReferralCode.deleteMany({ organization_id, user_id })).deletedCount ?? 0;
}

export const referralCodesOf = (organization_id: string, user_id: string) =>
  ReferralCode.find({ organization_id, user_id }).lean<ReferralCodeDoc[]>();

/**
 * Every referral the user is in, on either side: the unique index {organization_id,
 * referred_user_id} and the index {organization_id, referrer_user_id}.
 */
export async function referralsNaming(organization_id: string, user_id: string): Promise<ReferralDoc[]> {
  const [referred, referrer] = await Promise.all([
    Referral.find({ organization_id, referred_user_id: user_id }).lean<ReferralDoc[]>(),
    Referral.find({ organization_id, referrer_user_id: user_id }).lean<ReferralDoc[]>(),
  ]);
  return [...referred, ...referrer];
}

/** Replaces the user on the side(s) of their referrals; a second run finds nothing to change. */
export async function tombstoneReferrals(organization_id: string, user_id: string, tombstone: string): Promise<number> {
  const [a, b] = await Promise.all([
    Referral.updateMany({ organization_id, referred_user_id: user_id }, { $set: { referred_user_id: tombstone } }),
    Referral.updateMany({ organization_id, referrer_user_id: user_id }, { $set: { referrer_user_id: tombstone } }),
  ]);
  return a.modifiedCount + b.modifiedCount;
}

/** The reversal marks of these referrals (by `_id` `<referral>|<side>`). */
export const referralReversalsOf = (referral_ids: string[]) =>
  referral_ids.length
    ? ReferralReversal.find({ _id: { $in: referral_ids.flatMap((id) => [`${id}|referrer`, `${id}|referred`]) } }).lean<
        ReferralReversalDoc[]
      >()
    : Promise.resolve([] as ReferralReversalDoc[]);

export async function setReferralReversal(_id: string, reversal: Record<string, unknown>): Promise<void> {
  await ReferralReversal.updateOne({ _id }, { $set: { reversal } });
}

/**
 * The pair claims naming the user (`referral_pairs` has no index but `_id`, which begins with the
 * organization: a range of it, then the server's filter).
 */
export const referralPairsNaming = (organization_id: string, user_id: string) =>
  ReferralPair.find({
    _id: { $gte: `${organization_id}|`, $lt: `${organization_id}}` },
    organization_id,
    $or: [{ referrer_user_id: user_id }, { referred_user_id: user_id }],
  }).lean<ReferralPairDoc[]>();

/**
 * Moves a pair claim to the key of its tombstoned users: the new claim is inserted first, then the
 * old one deleted, so a crash in between leaves both (a second run deletes the old one) and never none.
 */
export async function rekeyReferralPair(
  old: ReferralPairDoc,
  next: Omit<ReferralPairDoc, '_id' | 'created_at'>,
): Promise<void> {
  const _id = pairKey(next.organization_id, next.referrer_user_id, next.referred_user_id);
  if (_id !== old._id) {
    await insertOnce(ReferralPair, { _id, ...next, created_at: old.created_at });
    await ReferralPair.deleteOne({ _id: old._id });
  }
}
