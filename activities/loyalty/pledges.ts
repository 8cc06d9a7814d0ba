/**
 * Points this process has pledged to debits that run elsewhere: a redemption's run holds its
 * points in a worker, after the request that started it. Without pledges, 200 concurrent
 * redemptions of a member with points for 100 start 200 runs, and half of them only learn in
 * their hold that the points are gone. With them, a request is admitted (its run started) only
 * while the member's spendable balance covers it beside the pledges whose holds are not written
 * yet; a request the fresh balance cannot cover is refused at once with the ledger's own 409, and
 * one the balance covers only if a pledge fails waits, decided again when a pledge settles and
 * every RECHECK_MS (a hold written shows in the balance then, and stops counting as a pledge).
 *
 * A pledge is a promise of this process only: across processes the hold itself (the ledger's
 * check on the newest entry) still decides, so an admitted debit may still be refused there.
 * One round (the pledged holds written, then the balance) decides everyone waiting for a member
 * at that moment. docs/storage.md, "Pledges".
 */
import { InsufficientPoints } from './ledger.ts';
import { standing } from './lots.ts';
import { ledgerHead } from './member.ts';
import { appliedOperations } from './store.ts';

const RECHECK_MS = 100;

interface Waiter {
  points: number;
  operation_id: string;
  admit: () => void;
  refuse: (err: unknown) => void;
}

interface Gate {
  /** admitted debits that have not settled yet: their hold's operation id → points */
  pledged: Map<string, number>;
  waiting: Waiter[];
  deciding: boolean;
  /** something changed while deciding: decide again */
  again: boolean;
  recheck?: NodeJS.Timeout;
}

const gates = new Map<string, Gate>();

/**
 * Runs `debit` once `points` are pledged to its hold (the ledger operation `operation_id`), and
 * releases them when it settles (resolves or rejects). Throws InsufficientPoints (409) without
 * running it when the member's spendable balance, read fresh, is below `points`.
 */
export async function whilePledged<T>(
  pledge: { organization_id: string; user_id: string; points: number; operation_id: string },
  debit: () => Promise<T>,
): Promise<T> {
  const { organization_id, user_id, points, operation_id } = pledge;
  const member = `${organization_id}\u0000${user_id}`;
  let gate = gates.get(member);
  if (!gate) gates.set(member, (gate = { pledged: new Map(), waiting: [], deciding: false, again: false }));
  const g = gate;
  await new Promise<void>((admit, refuse) => {
    g.waiting.push({ points, operation_id, admit, refuse });
    void decide(member, g, organization_id, user_id);
  });
  try {
    return await debit();
  } finally {
    g.pledged.delete(operation_id);
    // (a round under way may have taken the waiters out of the list: it decides again)
    if (g.waiting.length || g.deciding) void decide(member, g, organization_id, user_id);
    else forget(member, g);
  }
}

function forget(member: string, g: Gate): void {
  if (!g.pledged.size && !g.waiting.length && !g.deciding && gates.get(member) === g) gates.delete(member);
}

async function decide(member: string, g: Gate, organization_id: string, user_id: string): Promise<void> {
  if (g.deciding) {
    g.again = true;
    return;
  }
  g.deciding = true;
  clearTimeout(g.recheck);
  g.recheck = undefined;
  try {
    do {
      g.again = false;
      const batch = g.waiting.splice(0);
      let spendable: number;
      let outstanding = 0;
      try {
        // The holds first, then the balance: a hold written in between is counted twice (a wait),
        // never missed (an admission the balance does not cover).
        const open = [...g.pledged.keys()];
        const written = open.length ? await appliedOperations(organization_id, open) : new Set<string>();
        for (const [op, points] of g.pledged) if (!written.has(op)) outstanding += points;
        spendable = standing(await ledgerHead(organization_id, user_id), new Date()).spendable;
      } catch {
        // The store did not answer: admit them, and let each hold decide (and retry) as it would have.
        for (const w of batch) admit(g, w);
        continue;
      }
      const blocked: Waiter[] = [];
      for (const w of batch) {
        // The same hold pledged already (a retry of one request, whose run the caller joins):
        // its points are counted, or already spent by the hold.
        if (g.pledged.has(w.operation_id)) admit(g, w);
        else if (spendable < w.points) w.refuse(new InsufficientPoints(spendable, w.points));
        else if (spendable - outstanding >= w.points) {
          outstanding += w.points;
          admit(g, w);
        } else blocked.push(w);
      }
      g.waiting.unshift(...blocked);
    } while (g.again);
  } finally {
    g.deciding = false;
    if (g.waiting.length && !g.recheck) {
      g.recheck = setTimeout(() => void decide(member, g, organization_id, user_id), RECHECK_MS);
      g.recheck.unref();
    }
    forget(member, g);
  }
}

function admit(g: Gate, w: Waiter): void {
  g.pledged.set(w.operation_id, (g.pledged.get(w.operation_id) ?? 0) || w.points);
  w.admit();
}
