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
const latest = (organization_id: string, user_id: string) =>
  LedgerEntry.findOne({ organization_id, user_id }).sort({ seq: -1 }).lean<LedgerEntryDoc>();
const byOperation = (organization_id: string, operation_id: string) =>
  LedgerEntry.findOne({ organization_id, operation_id }).lean<LedgerEntryDoc>();

/**
 * Appends one change. A repeated operation_id returns the first entry (duplicate: true); a debit
 * that would make the balance negative throws InsufficientPoints (409) and writes nothing.
 */
export async function applyChange(change: LedgerChange): Promise<AppendResult> {
  if (!Number.isSafeInteger(change.amount) || change.amount === 0) throw new PlatformError(422, 'amount: must be a non-zero integer', 'amount');
  return withKeyLock(`${change.organization_id}\u0000${change.user_id}`, async () => {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
      const done = await byOperation(change.organization_id, change.operation_id);
      if (done) return { entry: viewEntry(done), duplicate: true };
      const last = await latest(change.organization_id, change.user_id);
      const balance = last?.balance_after ?? 0;
      if (balance + change.amount < 0) throw new InsufficientPoints(balance, -change.amount);
      try {
        const doc = await LedgerEntry.create({
          entry_id: newId('pte'),
          organization_id: change.organization_id,
          user_id: change.user_id,
          seq: (last?.seq ?? 0) + 1,
          amount: change.amount,
          balance_after: balance + change.amount,
          reason: change.reason,
          operation_id: change.operation_id,
          description: change.description,
        });
        return { entry: viewEntry(doc.toObject()), duplicate: false };
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        // Another process appended first (same seq) or applied this very operation: look again,
        // after a short random pause so competing processes spread out.
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
  const last = await latest(organization_id, user_id);
  if (!last) throw notFound('User points not found');
  return { points: last.balance_after, user_id, organization_id, last_updated: last.created_at.toISOString(), entries: last.seq };
}

export async function getHistory(organization_id: string, user_id: string, page: number, limit: number) {
  const last = await latest(organization_id, user_id);
  if (!last) throw notFound('User points not found');
  // seq numbers are dense, so page boundaries are exact without counting documents.
  const total = last.seq;
  const top = total - (page - 1) * limit;
  const entries = top > 0
    ? await LedgerEntry.find({ organization_id, user_id, seq: { $lte: top, $gt: top - limit } }).sort({ seq: -1 }).lean<LedgerEntryDoc[]>()
    : [];
  return { points: last.balance_after, entries: entries.map(viewEntry), page, limit, total, has_more: top - limit > 0 };
}
