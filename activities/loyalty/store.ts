/**
 * Loyalty's data: ledger entries and where each operation's entry is, the rules per organization,
 * the expiry run's cursors, referral codes, referrals, their pair claims and reversals. The only file that
 * reads or writes loyalty's models; the ledger, rules, expiry and referral code (and other
 * components, through them) call these functions.
 *
 * Keyed for both database servers (activities/db/README.md): the hot paths read by `_id` only.
 * - A user's entries are `<organization>|<user>|<seq>`, seq dense from 1, so the newest entry is
 *   found by probing keys (ledger.ts) and a history page is one `$in` of known keys; a sorted
 *   query for the newest entry would be served by an index on MongoDB but read and sort the
 *   whole ledger on the embedded server (FerretDB 1.x: about 250 ms at 10,000 entries).
 * - "Was this operation applied" (idempotency keys, the slots of a limited award, a collision)
 *   reads the operation's document `<organization>|<operation_id>` (models.ts), not the entries'
 *   unique (organization, operation) index, which only MongoDB answers from the index (FerretDB
 *   reads every entry: 240 ms at 10,000 documents, linear beyond). It costs each change with a
 *   caller's key one insert and one update by `_id` more, a generated one an insert. The
 *   operation document is written before the entry (so its absence proves the operation was never
 *   applied) and points at the entry once it is written; one left without a pointer (a writer
 *   that stopped, or refused between the two) sends that operation's reads to the index.
 *   A ledger that held entries before operation documents existed answers every "not found" from
 *   the index instead, which the first write of a process finds out once.
 * - The rules are read by `_id` = organization_id.
 * The expiry run, the referral lookups by code or by referred user and the reversal of an
 * operation use the schemas' declared indexes: background work and rare calls, not hot paths.
 *
 * Per-process caches in front of this store (activities/db `Cache`):
 * - the newest entry per user (ledger.ts), no expiry: a hint only, checked by probing the next
 *   key before it is trusted for a refusal, and overtaken by a collision on insert, so a change
 *   made by another process is always seen by the next append or read of that user;
 * - the rules (rules.ts), 2 s: read on every award; a change is seen at once by the process that
 *   made it and within 2 s by the others.
 */
import { byId, byIds, byKey, insertOnce, isDuplicateKey, onlyDuplicates, jsonText, keyFilter, markedOnce } from '../db';
import type { ActionPolicy } from './policies';
import { ExpiryCursor, LedgerEntry, LedgerOperation, LoyaltyRules, type ExpiryCursorDoc, type LedgerEntryDoc, type LedgerOperationDoc, type LoyaltyRulesDoc } from './models';
import { Referral, ReferralCode, ReferralPair, ReferralReversal, type ReferralCodeDoc, type ReferralDoc, type ReferralPairDoc } from './referral-models';

// ---- ledger entries ----

export const entryKey = (organization_id: string, user_id: string, seq: number) => `${organization_id}|${user_id}|${seq}`;

export const entryAt = (organization_id: string, user_id: string, seq: number) => byId<LedgerEntryDoc>(LedgerEntry, entryKey(organization_id, user_id, seq));

/** The user's entries of these seqs, in any order (one read by `_id`). */
export async function entriesAt(organization_id: string, user_id: string, seqs: readonly number[]): Promise<LedgerEntryDoc[]> {
  return [...(await byIds<LedgerEntryDoc>(LedgerEntry, seqs.map((seq) => entryKey(organization_id, user_id, seq)))).values()];
}

const operationKey = (organization_id: string, operation_id: string) => `${organization_id}|${operation_id}`;
const requestKey = (organization_id: string, request_id: string) => `${organization_id}|?${request_id}`;
/** The database marker (activities/db) saying every entry of the ledger has its operation documents. */
export const LEDGER_COMPLETE = 'ledger_operations:complete';

let complete: Promise<boolean> | undefined;

/**
 * Whether every entry of the ledger was written with its operation document, asked once per
 * process: a ledger without entries when this is first asked is marked complete for good.
 */
function ledgerComplete(): Promise<boolean> {
  if (!complete) {
    complete = markedOnce(LEDGER_COMPLETE, async () => !(await LedgerEntry.exists({})));
    complete.catch(() => (complete = undefined)); // asked again next time
  }
  return complete;
}

export type NewEntry = Omit<LedgerEntryDoc, 'created_at'>;

/**
 * Writes one entry: its operation documents first, then the entry, then their pointers. Throws
 * the duplicate-key error when entry `seq` exists or the operation was applied (the entry's
 * primary key and unique operation index decide). `generated`: the operation id was made for
 * this call, so nobody can ask for it before it exists.
 */
export async function insertEntry(doc: NewEntry, generated = false): Promise<LedgerEntryDoc> {
  await ledgerComplete();
  const keys = [operationKey(doc.organization_id, doc.operation_id), ...(doc.request_id ? [requestKey(doc.organization_id, doc.request_id)] : [])];
  // The operation documents in one round trip (either may exist already: a retry, a repeated request).
  if (!generated) await LedgerOperation.insertMany(keys.map((_id) => ({ _id })), { ordered: false }).catch(onlyDuplicates);
  const entry = (await LedgerEntry.create(doc)).toObject() as LedgerEntryDoc;
  // The entry is written: a pointer that fails to be written only sends that operation's reads
  // to the index, so it does not fail the change. Both pointers are written at once.
  await Promise.all([
    (generated ? insertOnce(LedgerOperation, { _id: keys[0], entry: doc._id }) : LedgerOperation.updateOne({ _id: keys[0] }, { $set: { entry: doc._id } })).catch(() => undefined),
    // Several entries may carry one request_id (a request repeated across a limit's window): any one answers it.
    keys[1] && LedgerOperation.updateOne({ _id: keys[1], entry: { $exists: false } }, { $set: { entry: doc._id } }).catch(() => undefined),
  ]);
  return entry;
}

/** The entry a keyed operation document points at, or what the entries' index says when it cannot tell. */
async function entryOf(key: string, fallback: Record<string, string>, answersMissing: boolean): Promise<LedgerEntryDoc | null> {
  const op = await byId<LedgerOperationDoc>(LedgerOperation, key);
  if (op?.entry) {
    const entry = await byId<LedgerEntryDoc>(LedgerEntry, op.entry);
    if (entry) return entry;
  }
  if (!op && answersMissing && (await ledgerComplete())) return null;
  const found = await LedgerEntry.findOne(fallback).lean<LedgerEntryDoc>();
  if (found) await LedgerOperation.updateOne({ _id: key }, { $set: { entry: found._id } }, { upsert: true });
  return found;
}

/** The entry of an operation, or null when it was never applied. */
export const entryByOperation = (organization_id: string, operation_id: string) =>
  entryOf(operationKey(organization_id, operation_id), { organization_id, operation_id }, true);

/**
 * The same for an operation whose id may have been generated by a writer that stopped before its
 * operation document (an admin naming any entry): a missing document is checked in the index.
 */
export const entryByAnyOperation = (organization_id: string, operation_id: string) =>
  entryOf(operationKey(organization_id, operation_id), { organization_id, operation_id }, false);

/** An entry written with this request_id (the caller's idempotency key), or null. */
export const entryByRequest = (organization_id: string, request_id: string) =>
  entryOf(requestKey(organization_id, request_id), { organization_id, request_id }, true);

/**
 * Drops the document of a request that earned nothing (every slot of its limit was taken by
 * other requests), so that asking for it again is answered by `_id` rather than by the index.
 */
export async function forgetRequest(organization_id: string, request_id: string): Promise<void> {
  await LedgerOperation.deleteOne({ _id: requestKey(organization_id, request_id), entry: { $exists: false } });
}

// ---- expiry ----

export type LapsedCredit = Pick<LedgerEntryDoc, 'entry_id' | 'user_id' | 'expires_at'>;
const LAPSED_FIELDS = { entry_id: 1, user_id: 1, expires_at: 1 };

/** Up to `limit` credits of the organization lapsing in (after, through], soonest first (index {organization_id, expires_at}). */
export const lapsedCredits = (organization_id: string, after: Date, through: Date, limit: number) =>
  LedgerEntry.find({ organization_id, expires_at: { $gt: after, $lte: through } }, LAPSED_FIELDS).sort({ expires_at: 1 }).limit(limit).lean<LapsedCredit[]>();

/** Every credit of the organization lapsing at exactly that instant. */
export const creditsLapsingAt = (organization_id: string, at: Date) => LedgerEntry.find({ organization_id, expires_at: at }, LAPSED_FIELDS).lean<LapsedCredit[]>();

/** Makes the expiry run look at this organization from the beginning (idempotent). */
export async function startExpiryCursor(organization_id: string): Promise<void> {
  await insertOnce(ExpiryCursor, { _id: organization_id, through: new Date(0) });
}

/** The expiry run's cursors: every organization's, or one's. */
export const expiryCursors = (organization_id?: string) => ExpiryCursor.find(organization_id ? { _id: organization_id } : {}).lean<ExpiryCursorDoc[]>();

export async function moveExpiryCursor(organization_id: string, through: Date): Promise<void> {
  await ExpiryCursor.updateOne({ _id: organization_id }, { $set: { through } });
}

// ---- rules ----

/** Action names are free keys (dots and `$` allowed), hence JSON text. */
const actionsText = jsonText<Record<string, number>>(() => ({}));
const policiesText = jsonText<Record<string, ActionPolicy>>(() => ({}));

/** A rules document as its readers see it: the JSON-text fields decoded. */
export interface StoredRules extends Omit<LoyaltyRulesDoc, '_id' | 'organization_id' | 'actions_json' | 'policies_json' | 'updated_at'> {
  actions: Record<string, number>;
  /** absent for an action: its default policy (rules written before policies existed) */
  policies: Record<string, ActionPolicy>;
  updated_at?: Date;
}

/** The organization's stored rules, or null while it keeps the defaults. */
export async function readRules(organization_id: string): Promise<StoredRules | null> {
  const doc = await byKey<LoyaltyRulesDoc>(LoyaltyRules, 'organization_id', organization_id);
  if (!doc) return null;
  const { actions_json, policies_json, _id, organization_id: _org, ...rest } = doc;
  return { ...rest, actions: actionsText.decode(actions_json), policies: policiesText.decode(policies_json) };
}

/**
 * Replaces the organization's rules. One writer per organization document (an admin's edit): two
 * admins saving at the same instant keep one of the two complete rule sets, never a mix.
 */
export async function writeRules(organization_id: string, rules: Omit<StoredRules, 'updated_at'>): Promise<void> {
  const { actions, policies, ...rest } = rules;
  const doc = { organization_id, ...rest, actions_json: actionsText.encode(actions), policies_json: policiesText.encode(policies), updated_at: new Date() };
  await LoyaltyRules.replaceOne(await keyFilter(LoyaltyRules, 'organization_id', organization_id), doc, { upsert: true });
}

// ---- referrals ----

export const referralCodeOf = (organization_id: string, user_id: string) => ReferralCode.findOne({ organization_id, user_id }).lean<ReferralCodeDoc>();

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

/** The referral of a referred user (at most one per organization). */
export const referralOf = (organization_id: string, referred_user_id: string) => Referral.findOne({ organization_id, referred_user_id }).lean<ReferralDoc>();

/** Records a referral; null when the referred user has one already (the unique index decides). */
export async function insertReferral(doc: Omit<ReferralDoc, 'created_at' | 'completed_at'>): Promise<ReferralDoc | null> {
  try {
    return (await Referral.create(doc)).toObject() as ReferralDoc;
  } catch (err) {
    if (isDuplicateKey(err)) return null;
    throw err;
  }
}

/** Only the referral's own workflow writes this document. */
export async function completeReferralDoc(referral_id: string): Promise<void> {
  await Referral.updateOne({ referral_id, status: 'pending' }, { $set: { status: 'completed', completed_at: new Date() } });
}

/**
 * A side of a referral reversed, written once. Its own document: the referral's workflow updates
 * the referral itself, and the embedded server may lose one of two concurrent updates of one
 * document.
 */
export async function insertReferralReversal(organization_id: string, referral_id: string, side: 'referrer' | 'referred', reversal: object): Promise<void> {
  await insertOnce(ReferralReversal, { _id: `${referral_id}|${side}`, referral_id, organization_id, side, reversal });
}

// ---- referral pairs (referral-models.ts says why) ----

const pairKey = (organization_id: string, a: string, b: string) => (a < b ? `${organization_id}|${a}|${b}` : `${organization_id}|${b}|${a}`);

/** Claims the pair {referrer, referred} for this referral; false when the pair is claimed already (either direction). */
export const insertReferralPair = (doc: Omit<ReferralPairDoc, '_id' | 'created_at'>) =>
  insertOnce(ReferralPair, { _id: pairKey(doc.organization_id, doc.referrer_user_id, doc.referred_user_id), ...doc });

/** The claim on the pair of these two users, in whichever direction. */
export const referralPairOf = (organization_id: string, a: string, b: string) => byId<ReferralPairDoc>(ReferralPair, pairKey(organization_id, a, b));

/** Drops a claim that never became its referral (only that claim: a newer one is kept). */
export async function deleteReferralPair(pair: Pick<ReferralPairDoc, 'organization_id' | 'referrer_user_id' | 'referred_user_id' | 'referral_id'>): Promise<void> {
  await ReferralPair.deleteOne({ _id: pairKey(pair.organization_id, pair.referrer_user_id, pair.referred_user_id), referral_id: pair.referral_id });
}
