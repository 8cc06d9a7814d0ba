/**
 * The audit trail's store: records, heads and intents (models.ts). Every read of a chain is keyed
 * by `_id` (`$in` of computed ids), the one lookup both database servers answer from an index;
 * the list reads the `{organization_id, …, at}` indexes.
 */
import { byId, byIds, insertEach, insertInOrder, isDuplicateKey } from '../core/db/index.ts';
import { groupCommit } from '../core/group-commit.ts';
import {
  AuditHead,
  type AuditHeadDoc,
  AuditIntent,
  type AuditIntentDoc,
  AuditRecord,
  type AuditRecordDoc,
} from './models.ts';

const SEQ_DIGITS = 12;

export const recordId = (organization_id: string, seq: number) =>
  `${organization_id}:${String(seq).padStart(SEQ_DIGITS, '0')}`;

/** The seq an `_id` names (the `_id` is the truth: the stored `seq` field is covered by the hash). */
export const seqOfId = (id: string) => Number(id.slice(id.lastIndexOf(':') + 1));

export const headOf = (organization_id: string) => byId<AuditHeadDoc>(AuditHead, organization_id);

export const allHeads = () => AuditHead.find({}).lean<AuditHeadDoc[]>();

/** True when this call wrote record `doc._id`; false when another writer holds that seq. */

/**
 * Inserts consecutive records in one command, in order, stopping at the first whose seq is taken
 * (another process appended there): answers how many were written, from the first. Written as
 * sealed (the raw collection: no cast or default may change a hashed field).
 */
export async function insertRecordsInOrder(docs: AuditRecordDoc[]): Promise<number> {
  const { written, error } = await insertInOrder(AuditRecord.collection, docs as unknown as Record<string, unknown>[]);
  if (error && !isDuplicateKey(error)) throw error;
  return written;
}

/** The records `first`..`first+count-1` of the organization that exist, by seq. */
export async function recordsFrom(
  organization_id: string,
  first: number,
  count: number,
): Promise<Map<number, AuditRecordDoc>> {
  const ids = Array.from({ length: count }, (_, i) => recordId(organization_id, first + i));
  const found = await byIds<AuditRecordDoc>(AuditRecord, ids);
  return new Map([...found.values()].map((d) => [seqOfId(d._id), d]));
}

/**
 * Moves the head forward to `seq` (never back: a slower writer of an earlier seq changes nothing).
 * The first record of an organization creates the head; an insert that collides with a head
 * written meanwhile is that slower writer.
 */
export async function advanceHead(organization_id: string, seq: number, hash: string): Promise<void> {
  try {
    await AuditHead.updateOne({ _id: organization_id, seq: { $lt: seq } }, { $set: { seq, hash } }, { upsert: true });
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
  }
}

/** Retention's anchor: verify starts at `seq`, whose record links to `prev_hash`. Never moves back. */
export async function setAnchor(organization_id: string, seq: number, prev_hash: string): Promise<boolean> {
  const res = await AuditHead.updateOne(
    { _id: organization_id, $or: [{ retained_from_seq: { $exists: false } }, { retained_from_seq: { $lt: seq } }] },
    { $set: { retained_from_seq: seq, retained_from_prev_hash: prev_hash } },
  );
  return res.modifiedCount === 1;
}

/** Deletes the organization's records `from`..`to` (by `_id`, in batches). */
export async function deleteRecords(organization_id: string, from: number, to: number): Promise<number> {
  let removed = 0;
  for (let s = from; s <= to; s += 500) {
    const ids = Array.from({ length: Math.min(500, to - s + 1) }, (_, i) => recordId(organization_id, s + i));
    removed += (await AuditRecord.deleteMany({ _id: { $in: ids } })).deletedCount ?? 0;
  }
  return removed;
}

/**
 * The organization's newest record written before `cutoff` (the `{organization_id, at}` index;
 * records of one millisecond by seq). Only records aged past the cutoff since the previous run
 * match: older ones are gone.
 */
export const newestBefore = (organization_id: string, cutoff: Date) =>
  AuditRecord.findOne({ organization_id, at: { $lt: cutoff } })
    .sort({ at: -1, _id: -1 })
    .lean<AuditRecordDoc>();

export interface RecordFilter {
  organization_id: string;
  action?: string;
  actor_key_id?: string;
  target_id?: string;
  from?: Date;
  to?: Date;
}

/** A page of records newest first (`limit + 1` rows tell whether more follow). */
export function recordsPage(f: RecordFilter, skip: number, limit: number): Promise<AuditRecordDoc[]> {
  const at: Record<string, Date> = {};
  if (f.from) at.$gte = f.from;
  if (f.to) at.$lt = f.to;
  const filter: Record<string, unknown> = { organization_id: f.organization_id };
  if (f.action) filter.action = f.action;
  if (f.actor_key_id) filter.actor_key_id = f.actor_key_id;
  if (f.target_id) filter.target_id = f.target_id;
  if (Object.keys(at).length) filter.at = at;
  return AuditRecord.find(filter)
    .sort({ at: -1, _id: -1 })
    .skip(skip)
    .limit(limit + 1)
    .lean<AuditRecordDoc[]>();
}

/**
 * Whether the organization holds the record of this intent (the `{organization_id, intent_id}`
 * index). By the intent's id, never the request id: a client chooses its X-Request-Id, and two
 * requests may carry the same one.
 */
export async function recordOfIntent(organization_id: string, intent_id: string): Promise<boolean> {
  return (await AuditRecord.exists({ organization_id, intent_id })) !== null;
}

// ---- intents ----

/** Intents are written and removed in groups: every audited request writes one and removes it (core/group-commit). */
export const insertIntent = groupCommit<AuditIntentDoc, true>((docs) =>
  insertEach(AuditIntent.collection, docs as unknown as Record<string, unknown>[]),
);

export const deleteIntent = groupCommit<string>(async (ids) => {
  await AuditIntent.deleteMany({ _id: { $in: ids } });
});

/** Intents older than `before`, oldest first (the `{created_at}` index). */
export const staleIntents = (before: Date, limit: number) =>
  AuditIntent.find({ created_at: { $lt: before } })
    .sort({ created_at: 1 })
    .limit(limit)
    .lean<AuditIntentDoc[]>();
