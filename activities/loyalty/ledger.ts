/**
 * The points ledger: the only way any component credits or debits points (CONTRACT.md, issue 3).
 * Correct on MongoDB and on FerretDB 1.x, which has no transactions and no atomic single-document
 * updates: every change is an insert guarded by unique indexes (see models.ts).
 */
import { PlatformError, isDuplicateKey, notFound } from '../errors';
import { newId } from '../ids';
import { withKeyLock } from '../locks';
import { LedgerEntry, type LedgerEntryDoc, type LedgerReason } from './models';

export interface LedgerChange {
  organization_id: string;
  user_id: string;
  /** positive credits, negative debits; integers */
  amount: number;
  reason: LedgerReason;
  /** idempotency key, unique per organization: `award:<key>`, `referral:<id>:referrer`, … */
  operation_id: string;
  /** the operation id was generated for this call, so it cannot have been applied before */
  new_operation?: boolean;
  /** the caller's idempotency key, kept on the entry when operation_id is not derived from it */
  request_id?: string;
  description?: string;
}

export interface EntryView {
  entry_id: string;
  seq: number;
  amount: number;
  balance_after: number;
  reason: LedgerReason;
  operation_id: string;
  description: string | null;
  created_at: string;
}

export interface AppendResult {
  entry: EntryView;
  /** true when the operation had already been applied: nothing changed this time */
  duplicate: boolean;
  /** the entry's request_id (of the first application, for a duplicate) */
  request_id: string | null;
}

export const viewEntry = (e: LedgerEntryDoc): EntryView => ({
  entry_id: e.entry_id,
  seq: e.seq,
  amount: e.amount,
  balance_after: e.balance_after,
  reason: e.reason,
  operation_id: e.operation_id,
  description: e.description ?? null,
  created_at: e.created_at.toISOString(),
});

export class InsufficientPoints extends PlatformError {
  constructor(readonly balance: number, readonly needed: number) {
    super(409, `Not enough points: balance ${balance}, needed ${needed}`);
  }
}

const MAX_ATTEMPTS = 200;
const entryKey = (organization_id: string, user_id: string, seq: number) => `${organization_id}|${user_id}|${seq}`;
const userKey = (organization_id: string, user_id: string) => `${organization_id}\u0000${user_id}`;

interface Head {
  seq: number;
  balance: number;
  at: Date | null;
}

/**
 * Each process remembers the newest entry it knows of per user. FerretDB 1.x scans a collection
 * for most queries, so the hot path must not query: a known head is confirmed with primary-key
 * probes (is there an entry seq+1?), and appending is one insert. The head is only a hint;
 * correctness rests on the primary key and the unique operation index.
 */
const heads = new Map<string, Head>();

const entryAt = (organization_id: string, user_id: string, seq: number) =>
  LedgerEntry.findById(entryKey(organization_id, user_id, seq)).lean<LedgerEntryDoc>();

/**
 * The newest entry of a user this process knows nothing about. Entries are dense from seq 1, so
 * "does entry n exist" is monotone and the last one is found by doubling then bisecting: about
 * 2·log2(n) reads by primary key. On FerretDB 1.x each such read scans the table until the row
 * (a read of an absent key scans it all, ~40 ms at 10,000 entries), and a sorted query for the
 * user's newest entry scanned and sorted the whole ledger (~250 ms); a user without entries costs
 * one read.
 */
export async function headFromProbes(organization_id: string, user_id: string): Promise<Head> {
  let found = await entryAt(organization_id, user_id, 1);
  if (!found) return { seq: 0, balance: 0, at: null };
  let missing = 2;
  for (;;) {
    const next = await entryAt(organization_id, user_id, missing);
    if (!next) break;
    found = next;
    missing *= 2;
  }
  let low = found.seq; // exists
  while (missing - low > 1) {
    const mid = Math.floor((low + missing) / 2);
    const probe = await entryAt(organization_id, user_id, mid);
    if (probe) {
      found = probe;
      low = mid;
    } else missing = mid;
  }
  return { seq: found.seq, balance: found.balance_after, at: found.created_at };
}

/** The newest entry: the cached head moved forward past later entries, or found by probes. */
async function currentHead(organization_id: string, user_id: string): Promise<Head> {
  const key = userKey(organization_id, user_id);
  let head = heads.get(key);
  if (!head) head = await headFromProbes(organization_id, user_id); // exact: its last probe missed entry seq+1
  else {
    // Entries are dense and only appended, so probing seq+1 until a miss finds the true head.
    for (;;) {
      const next: LedgerEntryDoc | null = await entryAt(organization_id, user_id, head.seq + 1);
      if (!next) break;
      head = { seq: next.seq, balance: next.balance_after, at: next.created_at };
    }
  }
  if (heads.size > 200_000) heads.clear();
  heads.set(key, head);
  return head;
}

const byOperation = (organization_id: string, operation_id: string) =>
  LedgerEntry.findOne({ organization_id, operation_id }).lean<LedgerEntryDoc>();

export const operationApplied = async (organization_id: string, operation_id: string) => (await byOperation(organization_id, operation_id)) !== null;

/** The entry a caller's idempotency key already produced, as its operation id or as its request_id. */
export async function appliedRequest(organization_id: string, operation_id: string, request_id: string): Promise<AppendResult | null> {
  const done = await LedgerEntry.findOne({ organization_id, $or: [{ operation_id }, { request_id }] }).lean<LedgerEntryDoc>();
  return done && { entry: viewEntry(done), duplicate: true, request_id: done.request_id ?? null };
}

/**
 * Appends one change. A repeated operation_id returns the first entry (duplicate: true); a debit
 * that would make the balance negative throws InsufficientPoints (409) and writes nothing.
 */
export async function applyChange(change: LedgerChange): Promise<AppendResult> {
  if (!Number.isSafeInteger(change.amount) || change.amount === 0) throw new PlatformError(422, 'amount: must be a non-zero integer', 'amount');
  const { organization_id, user_id } = change;
  return withKeyLock(userKey(organization_id, user_id), async () => {
    const applied = async () => (change.new_operation ? null : byOperation(organization_id, change.operation_id));
    let verifyNext = false;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
      // First try the remembered head without a query: if another process appended meanwhile,
      // the insert collides on the primary key and the next attempt verifies the head.
      const cached: Head | undefined = verifyNext ? undefined : heads.get(userKey(organization_id, user_id));
      const head = cached ?? (await currentHead(organization_id, user_id));
      if (head.balance + change.amount < 0) {
        // Refuse only on a verified head, never on a possibly stale hint.
        if (cached) {
          verifyNext = true;
          continue;
        }
        const done = await applied();
        if (done) return { entry: viewEntry(done), duplicate: true, request_id: done.request_id ?? null };
        throw new InsufficientPoints(head.balance, -change.amount);
      }
      const seq = head.seq + 1;
      try {
        const doc = await LedgerEntry.create({
          _id: entryKey(organization_id, user_id, seq),
          entry_id: newId('pte'),
          organization_id,
          user_id,
          seq,
          amount: change.amount,
          balance_after: head.balance + change.amount,
          reason: change.reason,
          operation_id: change.operation_id,
          request_id: change.request_id,
          description: change.description,
        });
        heads.set(userKey(organization_id, user_id), { seq, balance: head.balance + change.amount, at: doc.created_at });
        return { entry: viewEntry(doc.toObject()), duplicate: false, request_id: change.request_id ?? null };
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        // Either this operation was applied before, or another process appended entry `seq`.
        const done = await applied();
        if (done) return { entry: viewEntry(done), duplicate: true, request_id: done.request_id ?? null };
        verifyNext = true;
        await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, 2 + attempt * 2)));
      }
    }
    throw new PlatformError(503, 'The points ledger is busy for this user; retry shortly', undefined, { 'Retry-After': '1' });
  });
}

export const creditPoints = (c: Omit<LedgerChange, 'amount'> & { points: number }) =>
  applyChange({ ...c, amount: Math.abs(c.points) });
export const debitPoints = (c: Omit<LedgerChange, 'amount'> & { points: number }) =>
  applyChange({ ...c, amount: -Math.abs(c.points) });

export interface Balance {
  points: number;
  user_id: string;
  organization_id: string;
  last_updated: string;
  entries: number;
}

export async function getBalance(organization_id: string, user_id: string): Promise<Balance> {
  const head = await currentHead(organization_id, user_id);
  if (!head.seq || !head.at) throw notFound('User points not found');
  return { points: head.balance, user_id, organization_id, last_updated: head.at.toISOString(), entries: head.seq };
}

export async function getHistory(organization_id: string, user_id: string, page: number, limit: number) {
  const head = await currentHead(organization_id, user_id);
  if (!head.seq) throw notFound('User points not found');
  // seq numbers are dense, so a page is a known set of primary keys.
  const total = head.seq;
  const top = total - (page - 1) * limit;
  const seqs = Array.from({ length: Math.max(0, Math.min(limit, top)) }, (_, i) => top - i);
  // One query for the page (FerretDB 1.x scans once per query, whatever the filter).
  const found = seqs.length ? await LedgerEntry.find({ _id: { $in: seqs.map((seq) => entryKey(organization_id, user_id, seq)) } }).lean<LedgerEntryDoc[]>() : [];
  const entries = found.sort((a, b) => b.seq - a.seq);
  return { points: head.balance, entries: entries.map(viewEntry), page, limit, total, has_more: top - limit > 0 };
}
