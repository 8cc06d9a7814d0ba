/**
 * Points given back: an admin takes back a credit given in error. One `reversal` entry per
 * operation (`reversal:<operation_id>`), so a repeated request answers the first reversal; the
 * scan or referral that earned the credit is marked reversed. A credit is named by its ledger
 * operation id or, with its user, by the idempotency key the client sent with the award.
 */
import { notFound, PlatformError } from '../core/errors.ts';
import { handedIn } from '../core/wiring.ts';
import { clientRequestId } from './awards.ts';
import { countShares } from './campaign-stats.ts';
import { releaseShares } from './engine.ts';
import { append, type EntryView, getBalance, viewEntry } from './ledger.ts';
import { debit, standing } from './lots.ts';
import type { LedgerEntryDoc, LedgerReason } from './models.ts';
import { markReferralReversed } from './referrals.ts';
import { getRules } from './rules.ts';
import { entryByOperation, entryByRequest } from './store.ts';

/** Credits that earned something. A redemption is given back by its refund, never reversed. */
const REVERSIBLE_REASONS: readonly LedgerReason[] = ['action', 'referral', 'receipt', 'ticket_scan'];

export interface ReversalInput {
  organization_id: string;
  /** the credit's ledger operation id, or (with user_id) the id the client sent with the award */
  operation_id: string;
  /** the credited user (a platform user_id): needed to find a credit by the client's id */
  user_id?: string;
  reason: string;
  /** take the points back even when that leaves the user's spendable balance below zero */
  allow_negative?: boolean;
  reversed_by?: string;
  now?: Date;
}

interface ReversalRecord {
  type: 'scan' | 'referral';
  id: string;
}

export interface Reversal {
  duplicate: boolean;
  operation_id: string;
  user_id: string;
  points_reversed: number;
  reversal: EntryView;
  record: ReversalRecord | null;
}

/**
 * The credit an admin names. A client's key is unique per user only (two users may both have an
 * "order-123"), so it is looked up with the user; with a user the ledger id is accepted as well,
 * but only for that user's own credit.
 */
async function namedCredit(
  organization_id: string,
  operation_id: string,
  user_id: string | undefined,
): Promise<LedgerEntryDoc | null> {
  if (user_id === undefined) return entryByOperation(organization_id, operation_id);
  const sent = await entryByRequest(organization_id, clientRequestId(user_id, operation_id));
  if (sent?.user_id === user_id) return sent;
  const named = await entryByOperation(organization_id, operation_id);
  return named?.user_id === user_id ? named : null;
}

export async function reverseOperation(input: ReversalInput): Promise<Reversal> {
  const { organization_id } = input;
  const now = input.now ?? new Date();
  const original = await namedCredit(organization_id, input.operation_id, input.user_id);
  if (!original) throw notFound(`Operation not found: ${input.operation_id}`);
  // Whichever name was given, the reversal is keyed by the credit's ledger id: one per credit.
  const operation_id = original.operation_id;
  if (!REVERSIBLE_REASONS.includes(original.reason)) {
    throw new PlatformError(
      'invalid',
      `operation_id: a "${original.reason}" entry cannot be reversed; only credits earned by ${REVERSIBLE_REASONS.join(', ')} can`,
      'operation_id',
    );
  }
  const spec = {
    organization_id,
    user_id: original.user_id,
    reason: 'reversal' as const,
    operation_id: `reversal:${operation_id}`,
    description: `reversal of ${operation_id}: ${input.reason}`,
    // The campaigns that gave part of the credit, taken back with it (their budgets get it back below).
    ...(original.breakdown?.campaigns.length && {
      breakdown: {
        ...original.breakdown,
        campaigns: original.breakdown.campaigns.map((c) => ({ ...c, points: -c.points })),
      },
    }),
  };
  const earlier = await entryByOperation(organization_id, spec.operation_id);
  const out = earlier
    ? { entry: viewEntry(earlier), duplicate: true }
    : await append(spec, async (head) => {
        // What already lapsed of the credit was taken by its expiry entry: the rest is taken back.
        let amount = original.amount;
        if (original.expires_at && !head.lots.some((l) => l.entry_id === original.entry_id)) {
          const expired = await entryByOperation(organization_id, `expiry:${original.entry_id}`);
          if (expired) amount += expired.amount;
        }
        if (amount <= 0)
          throw new PlatformError(
            'invalid',
            `operation_id: nothing left to reverse, the points of ${operation_id} expired`,
            'operation_id',
          );
        const before = standing(head, now).spendable;
        // The credit's own points first (pending ones included: reversing a pending credit cancels it).
        const next = debit(head, amount, now, original.entry_id);
        const after = standing(next, now).spendable;
        if (after < 0 && after < before && !input.allow_negative) {
          throw new PlatformError(
            'conflict',
            `Reversing ${operation_id} takes back ${amount} points and would leave the user ${after} spendable points; send allow_negative: true to reverse anyway`,
          );
        }
        return { amount: -amount, lots: next.lots, reverses: original.entry_id };
      });
  if (!out) throw new Error('a reversal always drafts an entry');
  // By the call that wrote the reversal only (a crash in between leaves the budget short, never over).
  if (!out.duplicate && original.breakdown?.campaigns.length) {
    await releaseShares(original.breakdown.campaigns);
    const { time_zone } = await getRules(organization_id);
    countShares(
      organization_id,
      original.user_id,
      original.breakdown.campaigns.map((c) => ({ ...c, points: -c.points })),
      new Date(out.entry.created_at),
      time_zone,
    );
  }
  // Marked on every call: a crash between the entry and the mark is mended by the retry.
  const record = await markRecord(original, {
    reversed_at: out.entry.created_at,
    reason: input.reason,
    entry_id: out.entry.entry_id,
    points: -out.entry.amount,
    reversed_by: input.reversed_by ?? null,
  });
  return {
    duplicate: out.duplicate,
    operation_id,
    user_id: original.user_id,
    points_reversed: -out.entry.amount,
    reversal: out.entry,
    record,
  };
}

/**
 * Told when a credit earned by a scan (operation `scan:<id>`) is reversed, so the scan shows it.
 * Scanning owns scans; the composition root hands its function in (workers/root.ts).
 */
export type ScanReversedListener = (organization_id: string, scan_id: string, mark: ReversalMark) => Promise<void>;
const scanReversed = handedIn<ScanReversedListener>("loyalty's listener of reversed scan credits");

export function onScanCreditReversed(listener: ScanReversedListener): void {
  scanReversed.set(listener);
}

interface ReversalMark {
  reversed_at: string;
  reason: string;
  entry_id: string;
  points: number;
  reversed_by: string | null;
}

async function markRecord(original: LedgerEntryDoc, mark: ReversalMark): Promise<ReversalRecord | null> {
  const scan = /^scan:(.+)$/.exec(original.operation_id);
  if (scan) {
    await scanReversed.get()(original.organization_id, scan[1], mark);
    return { type: 'scan', id: scan[1] };
  }
  const referral = /^referral:(.+):(referrer|referred)$/.exec(original.operation_id);
  if (referral) {
    await markReferralReversed(original.organization_id, referral[1], referral[2] as 'referrer' | 'referred', mark);
    return { type: 'referral', id: referral[1] };
  }
  return null;
}

/** A reversal asked for by an admin (POST /loyalty/reversals): the reversal and the user's balance after it. */
export async function reverseCredit(
  input: ReversalInput,
): Promise<Reversal & { points: number; pending_points: number }> {
  const out = await reverseOperation(input);
  const { points, pending_points } = await getBalance(input.organization_id, out.user_id);
  return { ...out, points, pending_points };
}
