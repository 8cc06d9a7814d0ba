/**
 * Each organization's records form a hash chain: record n carries the hash of record n-1, and its
 * own hash covers every field of it (the canonical JSON: keys sorted, dates as ISO text). Appends
 * take the next seq under the records' primary key, so concurrent writers never fork the chain:
 * of two writers of seq n one wins, the other reads forward to the real tail and tries again.
 */
import { createHash } from 'node:crypto';

import { groupCommit } from '../core/group-commit.ts';
import { type BreakReason, ZERO_HASH } from './constants.ts';
import type { AuditRecordDoc } from './models.ts';
import { advanceHead, headOf, insertRecordsInOrder, recordId, recordsFrom, seqOfId } from './store.ts';

/** JSON with object keys sorted at every depth; dates as ISO text; undefined fields left out. */
function canonicalJson(value: unknown): string {
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (value && typeof value === 'object') {
    const keys = Object.keys(value)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** SHA-256 (hex) over the record's canonical JSON without its `hash`. */
export function hashOf(doc: Omit<AuditRecordDoc, 'hash'> | AuditRecordDoc): string {
  const { hash: _ignored, ...rest } = doc as AuditRecordDoc;
  return createHash('sha256').update(canonicalJson(rest)).digest('hex');
}

export type RecordBody = Omit<AuditRecordDoc, '_id' | 'seq' | 'prev_hash' | 'hash'>;

const seal = (body: RecordBody, seq: number, prev_hash: string): AuditRecordDoc => {
  const doc = { _id: recordId(body.organization_id, seq), seq, ...body, prev_hash } as Omit<AuditRecordDoc, 'hash'>;
  return { ...doc, hash: hashOf(doc) } as AuditRecordDoc;
};

const TAIL_BATCH = 16;

/** `seq` is taken: the first free seq from there and the hash of the record before it. */
async function tailFrom(organization_id: string, seq: number): Promise<{ seq: number; prev: string }> {
  let prev = ZERO_HASH;
  for (let first = seq; ; first += TAIL_BATCH) {
    const found = await recordsFrom(organization_id, first, TAIL_BATCH);
    for (let s = first; s < first + TAIL_BATCH; s++) {
      const doc = found.get(s);
      if (!doc) return { seq: s, prev };
      prev = doc.hash;
    }
  }
}

/**
 * Appends records at the organization's tail. Appends are grouped per organization in this
 * process (core/group-commit.ts): one writer per organization takes every record waiting and
 * writes them as consecutive seqs in one ordered insert, so N concurrent admin changes cost about one insert, not N racing
 * ones (awards by admin keys are audited, and arrive by the hundred a second). The tail is kept
 * per process; another process's appends make the insert stop at the first taken seq, and the
 * rest is written after the real tail (read forward by `_id`). The head is only a hint, moved
 * after each batch.
 */
export const appendRecord = groupCommit<RecordBody, AuditRecordDoc>(
  async (bodies, org) => {
    try {
      return await appendBatch(org, bodies);
    } catch (err) {
      tails.delete(org);
      throw err;
    }
  },
  { key: (body) => body.organization_id, max: 200 },
);

/** The last tail this process wrote or read per organization: saves the head's read. */
const tails = new Map<string, { seq: number; prev: string }>();

async function appendBatch(org: string, bodies: RecordBody[]): Promise<AuditRecordDoc[]> {
  let tail = tails.get(org);
  if (!tail) {
    const head = await headOf(org);
    tail = { seq: (head?.seq ?? 0) + 1, prev: head?.hash ?? ZERO_HASH };
  }
  const written: AuditRecordDoc[] = [];
  for (let attempt = 0; written.length < bodies.length; attempt++) {
    if (attempt >= 10_000) throw new Error(`audit: no free seq found for organization ${org}`);
    const docs: AuditRecordDoc[] = [];
    let prev: string = tail.prev;
    for (const [i, body] of bodies.slice(written.length).entries()) {
      const doc = seal(body, tail.seq + i, prev);
      prev = doc.hash;
      docs.push(doc);
    }
    const n = await insertRecordsInOrder(docs);
    written.push(...docs.slice(0, n));
    tail = n === docs.length ? { seq: tail.seq + n, prev } : await tailFrom(org, tail.seq + n);
  }
  tails.set(org, tail);
  const last = written[written.length - 1];
  await advanceHead(org, last.seq, last.hash);
  return written;
}

export interface VerifyResult {
  organization_id: string;
  ok: boolean;
  records_checked: number;
  /** the first kept seq (retention removes older records; verify starts here) */
  checked_from: number;
  first_break: null | { seq: number; id: string; reason: BreakReason };
}

const VERIFY_BATCH = 500;

/**
 * Walks the organization's chain from its oldest kept record (retention's anchor, else seq 1) in
 * batches of `_id`s, recomputing each hash and link. The chain ends at the first seq with no
 * record, unless the head says it reaches further or a later record exists: then that seq is
 * `missing`.
 */
export function verifyChain(organization_id: string): Promise<VerifyResult> {
  // Concurrent verifies of one organization share one walk: it reads the whole kept chain.
  let walk = verifying.get(organization_id);
  if (!walk) {
    walk = walkChain(organization_id).finally(() => verifying.delete(organization_id));
    verifying.set(organization_id, walk);
  }
  return walk;
}

const verifying = new Map<string, Promise<VerifyResult>>();

async function walkChain(organization_id: string): Promise<VerifyResult> {
  const head = await headOf(organization_id);
  const start = head?.retained_from_seq ?? 1;
  let prev = head?.retained_from_prev_hash ?? ZERO_HASH;
  const known = head?.seq ?? 0;
  let checked = 0;
  const broken = (seq: number, reason: BreakReason): VerifyResult => ({
    organization_id,
    ok: false,
    records_checked: checked,
    checked_from: start,
    first_break: { seq, id: recordId(organization_id, seq), reason },
  });
  for (let first = start; ; first += VERIFY_BATCH) {
    const found = await recordsFrom(organization_id, first, VERIFY_BATCH);
    for (let s = first; s < first + VERIFY_BATCH; s++) {
      const doc = found.get(s);
      if (!doc) {
        const later =
          [...found.keys()].some((k) => k > s) ||
          (await recordsFrom(organization_id, first + VERIFY_BATCH, VERIFY_BATCH)).size > 0;
        if (s <= known || later) return broken(s, 'missing');
        return { organization_id, ok: true, records_checked: checked, checked_from: start, first_break: null };
      }
      if (hashOf(doc) !== doc.hash || doc.seq !== seqOfId(doc._id) || doc.organization_id !== organization_id)
        return broken(s, 'hash_mismatch');
      if (doc.prev_hash !== prev) return broken(s, 'prev_hash_mismatch');
      prev = doc.hash;
      checked += 1;
    }
  }
}
