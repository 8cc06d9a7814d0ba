/**
 * The points ledger: the only way any component credits or debits points. Every balance change
 * of every component goes through here, so one set of rules (idempotency, no overspending,
 * expiry, pending points) holds for all of them.
 * Each change is a new entry n+1 on top of the user's newest entry n: the entry's unique keys
 * (one entry n per user, one entry per operation; store.ts) decide between concurrent writers,
 * and a writer that lost drafts its entry again on the newer head.
 */
import { warnLine } from '../core/background.ts';
import { notFound, PlatformError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { isTombstone } from '../identity/index.ts';
import { credit, debit, expiring, isLapsed, restore, standing, taken } from './lots.ts';
import {
  type AppendResult,
  type AppendSpec,
  duplicateOf,
  earnedBy,
  type EntryView,
  ledgerHead,
  memberQueue,
  type Plan,
  viewEntry,
} from './member.ts';
import type { LedgerReason } from './models.ts';
import { getRules } from './rules.ts';
import { entriesBetween, entryAt, entryByOperation, entryByRequest } from './store.ts';
import type { MemberTierDoc } from './tier-models.ts';
import { afterEarning } from './tiers.ts';

export type { AppendResult, EntryView } from './member.ts';
export { ledgerHead, viewEntry } from './member.ts';

export interface LedgerChange extends Omit<AppendSpec, 'created_at'> {
  /** positive credits, negative debits; integers */
  amount: number;
  /** a debit may leave the spendable balance below zero (an admin's reversal) */
  allow_negative?: boolean;
  /** the instant of the change, which decides what has lapsed or is still pending (tests pass a clock) */
  now?: Date;
  /** the member's tier standing as the caller read it (an award's engine): not read again after the credit */
  standing?: MemberTierDoc | null;
}

/** `balance` is what could be spent at that instant (lapsed and pending points not counted). */
export class InsufficientPoints extends PlatformError {
  constructor(
    readonly balance: number,
    readonly needed: number,
  ) {
    super('conflict', `Not enough points: balance ${balance}, needed ${needed}`);
  }
}

/** The entry a caller's idempotency key already produced, as its operation id or as its request_id. */
export async function appliedRequest(
  organization_id: string,
  operation_id: string,
  request_id: string,
): Promise<AppendResult | null> {
  // Both documents at once: either answers.
  const [byOp, byRequest] = await Promise.all([
    entryByOperation(organization_id, operation_id),
    entryByRequest(organization_id, request_id),
  ]);
  const done = byOp ?? byRequest;
  return done && duplicateOf(done);
}

/**
 * Appends the entry `plan` drafts on top of the user's newest entry, as entry seq+1. `plan` may
 * be called again on a newer head (another writer got there first); it throws to refuse and
 * answers null when there is nothing to write. A repeated operation_id answers the first entry.
 * The member's changes queue in this process (member.ts): what waits is drafted together on one
 * fresh read of the head and written in one command.
 */
export function append(spec: AppendSpec, plan: Plan): Promise<AppendResult | null> {
  return memberQueue(spec.organization_id, spec.user_id, { spec, plan, entry_id: newId('pte'), attempts: 0 });
}

const DAY_MS = 86_400_000;
const HELD_REASONS = new Set<LedgerReason>(['receipt', 'ticket_scan']);

/** When a credit written now lapses and when it may be spent, by the organization's rules. */
async function creditTerms(
  organization_id: string,
  reason: LedgerReason,
  now: Date,
): Promise<{ expires_at?: Date; available_at?: Date }> {
  const rules = await getRules(organization_id);
  const available_at =
    HELD_REASONS.has(reason) && rules.pending_days > 0
      ? new Date(now.getTime() + rules.pending_days * DAY_MS)
      : undefined;
  const days = rules.points_expire_after_days;
  const expires_at = days ? new Date((available_at ?? now).getTime() + days * DAY_MS) : undefined;
  return { ...(expires_at && { expires_at }), ...(available_at && { available_at }) };
}

/**
 * Appends one change. A repeated operation_id returns the first entry (duplicate: true); a debit
 * that would spend more than is spendable at that instant throws InsufficientPoints (409) and
 * writes nothing.
 */
export async function applyChange(change: LedgerChange): Promise<AppendResult> {
  if (!Number.isSafeInteger(change.amount) || change.amount === 0)
    throw new PlatformError('invalid', 'amount: must be a non-zero integer', 'amount');
  const now = change.now ?? new Date();
  const { amount, allow_negative, now: _now, standing: tierStanding, ...spec } = change;
  const terms = amount > 0 ? await creditTerms(change.organization_id, change.reason, now) : {};
  const out = await append(spec, (head, entry_id) => {
    if (amount > 0)
      return { amount, lots: credit(head, { entry_id, seq: head.seq + 1, amount, ...terms }).lots, ...terms };
    const before = standing(head, now).spendable;
    const next = debit(head, -amount, now);
    const after = standing(next, now).spendable;
    if (after < 0 && after < before && !allow_negative) throw new InsufficientPoints(before, -amount);
    return { amount, lots: next.lots };
  });
  if (!out) throw new Error('a change always drafts an entry');
  // Points earned may reach a higher tier: the upgrade applies now (tiers.ts). The credit stands
  // whatever happens there (a failed upgrade is made by the member's next earning or review).
  if (amount > 0 && !out.duplicate && out.earned_after !== null && earnedBy(change.reason, amount) > 0)
    await afterEarning(change.organization_id, change.user_id, out.earned_after, tierStanding).catch((err) =>
      warnLine('loyalty: a tier upgrade was not written; the next earning or the review makes it', err),
    );
  return out;
}

export const creditPoints = (c: Omit<LedgerChange, 'amount'> & { points: number }) =>
  applyChange({ ...c, amount: Math.abs(c.points) });
export const debitPoints = (c: Omit<LedgerChange, 'amount'> & { points: number }) =>
  applyChange({ ...c, amount: -Math.abs(c.points) });

export interface Refund extends AppendResult {
  /**
   * of the points given back, those whose credit had lapsed by the refund (they came back lapsed):
   * exactly the pieces the debit had taken, never the rest of their credits
   */
  points_lapsed: number;
  /** the `expiry` entry that wrote the lapsed credits down (null when another entry had, or none lapsed) */
  lapsed_entry: EntryView | null;
}

/**
 * Gives back a debit (a refused redemption's hold): one `refund` entry (operation `operation_id`)
 * that returns exactly the lots the debit took, each to its credit with its original `expires_at`,
 * never a fresh credit (which would renew points about to lapse, and lapse by today's rule). What
 * lapsed meanwhile comes back lapsed and is written down at once by one `expiry` entry
 * (`<operation_id>:lapsed`): the daily run's cursor may be past those credits already, and their
 * own `expiry:<entry_id>` may have been written for the rest of them. Both entries are idempotent
 * by their operations, and each lapsed lot is removed whole by whichever entry reaches it first
 * (the daily run's or this one), so it is written down exactly once. That entry may thus also
 * write down the part of a lapsed credit the debit never took; `points_lapsed` counts only the
 * lapsed pieces given back, judged at the refund's instant (a retry days later counts the same),
 * so a redemption's figures add up: debit = points that came back spendable + points_lapsed.
 */
export async function refundDebit(c: {
  organization_id: string;
  user_id: string;
  debit_operation_id: string;
  operation_id: string;
  reason: LedgerReason;
  description?: string;
  now?: Date;
}): Promise<Refund> {
  const { organization_id } = c;
  const debited = await entryByOperation(organization_id, c.debit_operation_id);
  // The refund goes to whoever holds the debit now: the user, or their tombstone once an erasure
  // renamed their ledger (docs/privacy-components/gifts.md). Nobody else's debit.
  if (!debited || debited.amount >= 0 || (debited.user_id !== c.user_id && !isTombstone(debited.user_id)))
    throw notFound(`No debit ${c.debit_operation_id} of this user to give back`);
  const user_id = debited.user_id;
  const before = debited.seq > 1 ? await entryAt(organization_id, user_id, debited.seq - 1) : null;
  const back = taken(before?.lots ?? [], debited.lots ?? [], -debited.amount);
  // One instant for the refund: the lots are restored as of `now`, the entry is dated `now` (not
  // the insert's later clock), and what lapsed is judged at that date, by this call and by any
  // retry (even days later), so the pieces that paid as spendable are never also counted lapsed.
  const now = c.now ?? new Date();
  const refund = await append(
    {
      organization_id,
      user_id,
      reason: c.reason,
      operation_id: c.operation_id,
      description: c.description,
      ...(!c.now && { created_at: now }),
    },
    (head) => ({
      amount: -debited.amount,
      lots: restore(head, back, now).lots,
    }),
  );
  if (!refund) throw new Error('a refund always drafts an entry');
  const at = c.now ?? new Date(refund.entry.created_at);
  const gone = back.lots.filter((l) => isLapsed(l, at));
  const credits = new Set(gone.map((l) => l.entry_id));
  const lapsedOp = `${c.operation_id}:lapsed`;
  const lapsed =
    credits.size === 0
      ? null
      : await append(
          {
            organization_id,
            user_id,
            reason: 'expiry',
            operation_id: lapsedOp,
            description: `lapsed credits given back by ${c.operation_id}`,
          },
          (head) => {
            const lots = head.lots.filter((l) => credits.has(l.entry_id) && isLapsed(l, at));
            if (!lots.length) return null;
            return {
              amount: -lots.reduce((n, l) => n + l.points, 0),
              lots: head.lots.filter((l) => !lots.includes(l)),
            };
          },
        );
  return { ...refund, points_lapsed: gone.reduce((n, l) => n + l.points, 0), lapsed_entry: lapsed?.entry ?? null };
}

export interface Balance {
  /** spendable now: never counts lapsed or pending points */
  points: number;
  pending_points: number;
  /** the next lapses, soonest first */
  expiring: { points: number; expires_at: string }[];
  user_id: string;
  organization_id: string;
  last_updated: string;
  entries: number;
}

/** From the newest entry alone (its lots), whatever the user's history: no replay. */
export async function getBalance(organization_id: string, user_id: string, now = new Date()): Promise<Balance> {
  const head = await ledgerHead(organization_id, user_id);
  if (!head.seq || !head.at) throw notFound('User points not found');
  const s = standing(head, now);
  return {
    points: s.spendable,
    pending_points: s.pending,
    expiring: expiring(head, now),
    user_id,
    organization_id,
    last_updated: head.at.toISOString(),
    entries: head.seq,
  };
}

export async function getHistory(organization_id: string, user_id: string, page: number, limit: number) {
  const head = await ledgerHead(organization_id, user_id);
  if (!head.seq) throw notFound('User points not found');
  // seq numbers are dense from 1, so page p is the seqs (top - limit, top].
  const total = head.seq;
  const top = total - (page - 1) * limit;
  const entries = top > 0 ? await entriesBetween(organization_id, user_id, Math.max(0, top - limit), top) : [];
  return {
    points: standing(head, new Date()).spendable,
    entries: entries.map(viewEntry),
    page,
    limit,
    total,
    has_more: top - limit > 0,
  };
}
