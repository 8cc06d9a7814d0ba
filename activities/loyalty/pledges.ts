/**
 * Points this process has pledged to debits that run elsewhere: a redemption's run holds its
 * points in a worker, seconds after the request that started it. Without pledges, 200 concurrent
 * redemptions of a member with points for 100 start 200 runs, and half of them only learn in
 * their hold that the points are gone. With them, a request is admitted (its run started) only
 * while the member's spendable balance covers it beside what is already pledged; a request the
 * fresh balance cannot cover is refused at once with the ledger's own 409, and one the balance
 * covers only if a pledge fails waits for the pledges to settle, then is decided again.
 *
 * A pledge is a promise of this process only: across processes the hold itself (the ledger's
 * check on the newest entry) still decides, so an admitted debit may still be refused there.
 * One read of the balance decides everyone waiting for a member at that moment.
 */
import { InsufficientPoints } from './ledger.ts';
import { standing } from './lots.ts';
import { ledgerHead } from './member.ts';

interface Waiter {
  points: number;
  admit: () => void;
  refuse: (err: unknown) => void;
}

interface Gate {
  /** points of admitted debits that have not settled yet */
  pledged: number;
  waiting: Waiter[];
  deciding: boolean;
  /** something changed while deciding: decide again */
  again: boolean;
}

const gates = new Map<string, Gate>();

/**
 * Runs `debit` once `points` are pledged to it, and releases them when it settles (resolves or
 * rejects: by then its hold is written or refused). Throws InsufficientPoints (409) without
 * running it when the member's spendable balance, read fresh, is below `points`.
 */
export async function whilePledged<T>(
  organization_id: string,
  user_id: string,
  points: number,
  debit: () => Promise<T>,
): Promise<T> {
  const member = `${organization_id}\u0000${user_id}`;
  let gate = gates.get(member);
  if (!gate) gates.set(member, (gate = { pledged: 0, waiting: [], deciding: false, again: false }));
  const g = gate;
  await new Promise<void>((admit, refuse) => {
    g.waiting.push({ points, admit, refuse });
    void decide(member, g, organization_id, user_id);
  });
  try {
    return await debit();
  } finally {
    g.pledged -= points;
    // (a round under way may have taken the waiters out of the list: it decides again)
    if (g.waiting.length || g.deciding) void decide(member, g, organization_id, user_id);
    else forget(member, g);
  }
}

function forget(member: string, g: Gate): void {
  if (g.pledged === 0 && !g.waiting.length && !g.deciding && gates.get(member) === g) gates.delete(member);
}

async function decide(member: string, g: Gate, organization_id: string, user_id: string): Promise<void> {
  if (g.deciding) {
    g.again = true;
    return;
  }
  g.deciding = true;
  try {
    do {
      g.again = false;
      const batch = g.waiting.splice(0);
      let spendable: number;
      try {
        spendable = standing(await ledgerHead(organization_id, user_id), new Date()).spendable;
      } catch (err) {
        for (const w of batch) w.refuse(err);
        continue;
      }
      const blocked: Waiter[] = [];
      for (const w of batch) {
        if (spendable < w.points) w.refuse(new InsufficientPoints(spendable, w.points));
        else if (spendable - g.pledged >= w.points) {
          g.pledged += w.points;
          w.admit();
        } else blocked.push(w); // decided again when a pledge settles
      }
      g.waiting.unshift(...blocked);
    } while (g.again);
  } finally {
    g.deciding = false;
    forget(member, g);
  }
}
