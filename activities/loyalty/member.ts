/**
 * One actor per member for money: every change of one member's balance in this process (awards,
 * redemptions, refunds, reversals, expiry) waits in that member's queue. The actor takes what
 * waits, reads the head once, drafts each change on the head the previous one leaves, and writes
 * the drafted entries in one ordered insert. A member alone writes through the ledger's group
 * commit, with the other members' entries of the moment. Across processes the entry's primary key
 * (`<org>|<user>|<seq>`) and the unique operation index still decide: a writer that lost drafts
 * again on a fresh head. A head this process read is used to draft for at most HEAD_KEPT_MS: a
 * write on it that another process got ahead of collides and is drafted again on a fresh read,
 * and a refusal is only ever answered from a fresh read. docs/storage.md, "Group commit", says
 * what each write relies on.
 */
import { Cache } from '../core/db/index.ts';
import { busy, isDuplicateKey, PlatformError } from '../core/errors.ts';
import { type LotState, standing } from './lots.ts';
import type { EntryBreakdown, LedgerEntryDoc, LedgerReason, LotDoc } from './models.ts';
import { publishLater } from './publish.ts';
import {
  earnedSum,
  entryByOperation,
  type EntryToWrite,
  insertEntries,
  insertEntry,
  keySpaceOf,
  newestEntry,
} from './store.ts';

export interface EntryView {
  entry_id: string;
  seq: number;
  amount: number;
  balance_after: number;
  reason: LedgerReason;
  operation_id: string;
  description: string | null;
  /** an admin's note on an award (null: none) */
  note: string | null;
  /** a credit that lapses: when what is left of it does */
  expires_at: string | null;
  /** a credit held until then before it may be spent */
  available_at: string | null;
  created_at: string;
}

export interface AppendResult {
  entry: EntryView;
  /** true when the operation had already been applied: nothing changed this time */
  duplicate: boolean;
  /** the entry's request_id (of the first application, for a duplicate) */
  request_id: string | null;
  /** what the user could spend right after the entry (balance_after less pending and lapsed points) */
  spendable_after: number;
  /** points earned by the ledger after the entry (tiers) */
  earned_after: number | null;
  /** how the entry's points were made (an award's) */
  breakdown: EntryBreakdown | null;
}

export const viewEntry = (e: LedgerEntryDoc): EntryView => ({
  entry_id: e.entry_id,
  seq: e.seq,
  amount: e.amount,
  balance_after: e.balance_after,
  reason: e.reason,
  operation_id: e.operation_id,
  description: e.description ?? null,
  note: e.note ?? null,
  expires_at: e.expires_at ? e.expires_at.toISOString() : null,
  available_at: e.available_at ? e.available_at.toISOString() : null,
  created_at: e.created_at.toISOString(),
});

export interface Head extends LotState {
  seq: number;
  at: Date | null;
  /**
   * points earned so far (the newest entry's earned_after); null for a ledger whose newest entry
   * predates earned_after: summed once by the writer that drafts on it (earnedOf), never by a read
   */
  earned: number | null;
  /** the `_id` prefix the next entry is written under (store.ts keySpaceOf) */
  key: string;
  /** whose entries the newest is (the user, or their tombstone) */
  user_id?: string;
}

/** The user's newest entry as a head (seq 0 and no balance for a user without entries). */
export async function ledgerHead(organization_id: string, user_id: string): Promise<Head> {
  const e = await newestEntry(organization_id, user_id);
  const key = keySpaceOf(e, organization_id, user_id);
  if (!e) return { seq: 0, balance: 0, at: null, lots: [], key, earned: 0 };
  return {
    seq: e.seq,
    balance: e.balance_after,
    at: e.created_at,
    lots: e.lots ?? [],
    key,
    earned: e.earned_after ?? null,
    user_id: e.user_id,
  };
}

/** The head's earned points, summed over the ledger's entries when its newest entry predates earned_after. */
export async function earnedOf(organization_id: string, head: Head): Promise<number> {
  return head.earned ?? (head.user_id ? earnedSum(organization_id, head.user_id) : 0);
}

/** Reasons whose credits count as earned (tiers), and reversals, which take them back. */
const EARNING = new Set<LedgerReason>(['action', 'referral', 'receipt', 'ticket_scan', 'reversal']);
export const earnedBy = (reason: LedgerReason, amount: number) => (EARNING.has(reason) ? amount : 0);

const spendableAfter = (e: Pick<LedgerEntryDoc, 'balance_after' | 'lots'>) =>
  standing({ balance: e.balance_after, lots: e.lots ?? [] }, new Date()).spendable;

export const duplicateOf = (done: LedgerEntryDoc): AppendResult => {
  // A repeat of a change whose event is not recorded yet records it (its first run died in between).
  publishLater(done);
  return {
    entry: viewEntry(done),
    duplicate: true,
    request_id: done.request_id ?? null,
    spendable_after: spendableAfter(done),
    earned_after: done.earned_after ?? null,
    breakdown: done.breakdown ?? null,
  };
};

/** The entry to write on top of the head: its amount and the lots after it. */
interface Draft {
  amount: number;
  lots: LotDoc[];
  expires_at?: Date;
  available_at?: Date;
  reverses?: string;
}

/** What a change says of itself; its amount and lots come from its plan. */
export interface AppendSpec {
  organization_id: string;
  user_id: string;
  reason: LedgerReason;
  /** idempotency key, unique per organization: `award:<key>`, `referral:<id>:referrer`, … */
  operation_id: string;
  /** the operation id was generated for this call, so it cannot have been applied before */
  new_operation?: boolean;
  /** the caller's idempotency key, kept on the entry when operation_id is not derived from it */
  request_id?: string;
  description?: string;
  /** an admin's note on an award (never told in its event) */
  note?: string;
  /** the entry's date (else the instant it is drafted) */
  created_at?: Date;
  /** how an award's points were made (engine.ts) */
  breakdown?: EntryBreakdown;
}

export type Plan = (head: Head, entry_id: string) => Draft | null | Promise<Draft | null>;

interface Change {
  spec: AppendSpec;
  plan: Plan;
  entry_id: string;
  /** rounds this change lost to another writer */
  attempts: number;
  resolve?: (r: AppendResult | null) => void;
  reject?: (err: unknown) => void;
}

/**
 * How long after its read from the store a member's head drafts this process's next changes
 * without reading it again. An erasure waits this out twice before its last round (user-data.ts),
 * so no head of an erased member is drafted on after it.
 */
export const HEAD_KEPT_MS = 1000;
/** The head after this process's last write or read of a member, and until when it may be drafted on. */
const heads = new Cache<string, { head: Head; until: number }>({ max: 100_000, ttlMs: HEAD_KEPT_MS });

const MAX_ATTEMPTS = 200;
/** Changes drafted on one read of the head and written in one command. */
const MAX_BATCH = 100;
const queues = new Map<string, Change[]>();

/** Queues a change in its member's actor; resolves with its outcome. */
export function memberQueue(organization_id: string, user_id: string, change: Change): Promise<AppendResult | null> {
  return new Promise((resolve, reject) => {
    const member = `${organization_id}\u0000${user_id}`;
    let queue = queues.get(member);
    const idle = !queue;
    if (!queue) queues.set(member, (queue = []));
    queue.push({ ...change, resolve, reject });
    if (idle) void run(member, organization_id, user_id);
  });
}

async function run(member: string, organization_id: string, user_id: string): Promise<void> {
  const queue = queues.get(member)!;
  try {
    while (queue.length) {
      const batch = queue.splice(0, MAX_BATCH);
      let retry: Change[] = [];
      try {
        retry = await step(member, organization_id, user_id, batch);
      } catch (err) {
        heads.delete(member);
        for (const c of batch) c.reject!(err);
      }
      if (!retry.length) continue;
      queue.unshift(...retry);
      // Another process wrote this member meanwhile: let it get ahead before drafting again.
      const n = Math.max(...retry.map((c) => c.attempts));
      await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, 2 + n * 2)));
    }
  } finally {
    queues.delete(member);
  }
}

/** The change's operation applied before (by an earlier call, or another process): its entry. */
const applied = async (c: Change) =>
  c.spec.new_operation ? null : entryByOperation(c.spec.organization_id, c.spec.operation_id);

type Drafted = { change: Change; doc?: EntryToWrite; refusal?: unknown };

/**
 * One round of the member's actor: drafts the batch on a fresh head, writes what it drafted, and
 * answers each change. Answers the changes to draft again (another writer took a seq).
 */
async function step(member: string, organization_id: string, user_id: string, batch: Change[]): Promise<Change[]> {
  const kept = heads.get(member);
  if (kept && Date.now() < kept.until) {
    const drafted = await draft(organization_id, user_id, kept.head, batch);
    // A refusal, or nothing to write, is decided on a fresh read only.
    if (drafted.drafts.every((d) => d.doc)) return write(member, kept.until, drafted);
  }
  heads.delete(member);
  const until = Date.now() + HEAD_KEPT_MS;
  return write(member, until, await draft(organization_id, user_id, await ledgerHead(organization_id, user_id), batch));
}

interface Drafts {
  drafts: Drafted[];
  /** the head after the last drafted entry */
  head: Head;
}

/** Drafts the batch's changes, each on the head the previous one leaves. */
async function draft(organization_id: string, user_id: string, first: Head, batch: Change[]): Promise<Drafts> {
  let head = first.earned === null ? { ...first, earned: await earnedOf(organization_id, first) } : first;
  const drafted: Drafted[] = [];
  for (const change of batch) {
    try {
      const draft = await change.plan(head, change.entry_id);
      if (!draft) {
        drafted.push({ change });
        continue;
      }
      const seq = head.seq + 1;
      const balance = head.balance + draft.amount;
      const earned = (head.earned ?? 0) + earnedBy(change.spec.reason, draft.amount);
      const created_at = change.spec.created_at ?? new Date();
      const doc = {
        _id: `${head.key}|${seq}`,
        entry_id: change.entry_id,
        organization_id,
        user_id,
        seq,
        amount: draft.amount,
        balance_after: balance,
        reason: change.spec.reason,
        operation_id: change.spec.operation_id,
        request_id: change.spec.request_id,
        description: change.spec.description,
        note: change.spec.note,
        expires_at: draft.expires_at,
        available_at: draft.available_at,
        reverses: draft.reverses,
        lots: draft.lots.length ? draft.lots : undefined,
        earned_after: earned,
        breakdown: change.spec.breakdown,
        event_pending: true,
        created_at,
      };
      drafted.push({ change, doc });
      head = { seq, balance, at: created_at, lots: draft.lots, key: head.key, earned, user_id: head.user_id };
    } catch (err) {
      // Refused on this head (not enough points): answered once what was drafted before it is written.
      drafted.push({ change, refusal: err });
    }
  }
  return { drafts: drafted, head };
}

/** Writes what was drafted; the member's head is kept as the last entry written (until `until`). */
async function write(member: string, until: number, { drafts, head }: Drafts): Promise<Change[]> {
  const docs = drafts.flatMap((d) => (d.doc ? [d.doc] : []));
  let out: { written: number; error?: unknown };
  if (docs.length === 1) {
    // Alone: written with the other members' entries of the moment (store.ts insertEntry).
    try {
      await insertEntry(docs[0]);
      out = { written: 1 };
    } catch (err) {
      out = { written: 0, error: err };
    }
  } else out = docs.length ? await insertEntries(docs) : { written: 0 };
  // Another writer got ahead (or the write failed): the next batch reads the head afresh.
  if (out.written === docs.length) heads.set(member, { head, until });
  else heads.delete(member);
  return settle(drafts, out);
}

/**
 * Answers the changes in order: the first `written` entries stand. At the first entry refused,
 * a duplicate key sends it (unless its operation was applied already: that entry answers) and
 * every change after it back to the queue, to be drafted again; any other error refuses them.
 */
async function settle(drafted: Drafted[], out: { written: number; error?: unknown }): Promise<Change[]> {
  const retry: Change[] = [];
  let left = out.written;
  let broken: 'no' | 'retry' | 'failed' = 'no';
  for (const d of drafted) {
    const { change } = d;
    if (broken === 'retry') {
      retry.push(change);
      continue;
    }
    if (broken === 'failed') {
      change.reject!(out.error);
      continue;
    }
    if (d.doc && left > 0) {
      left -= 1;
      publishLater(d.doc as LedgerEntryDoc);
      change.resolve!({
        entry: viewEntry(d.doc as LedgerEntryDoc),
        duplicate: false,
        request_id: change.spec.request_id ?? null,
        spendable_after: spendableAfter(d.doc),
        earned_after: d.doc.earned_after ?? null,
        breakdown: d.doc.breakdown ?? null,
      });
      continue;
    }
    if (d.doc) {
      // The first entry not written: what follows was drafted on it.
      if (!isDuplicateKey(out.error)) {
        broken = 'failed';
        change.reject!(out.error);
        continue;
      }
      broken = 'retry';
      if (await answerApplied(change)) continue;
      change.attempts += 1;
      if (change.attempts >= MAX_ATTEMPTS)
        change.reject!(busy('The points ledger is busy for this user; retry shortly', 1));
      else retry.push(change);
      continue;
    }
    // Nothing to write, or refused on the head it was drafted on: a change applied before answers as then.
    if ((!d.refusal || d.refusal instanceof PlatformError) && (await answerApplied(change))) continue;
    if (d.refusal) change.reject!(d.refusal);
    else change.resolve!(null);
  }
  return retry;
}

async function answerApplied(change: Change): Promise<boolean> {
  const done = await applied(change);
  if (!done) return false;
  change.resolve!(duplicateOf(done));
  return true;
}
