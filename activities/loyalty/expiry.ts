/**
 * Points that lapse. Balances never count lapsed points, from the instant they lapse (lots.ts);
 * the daily run (workflows/loyalty-maintenance.ts) writes them down as `expiry` entries, so the
 * ledger's balance follows: one entry per credit, for what was left of it.
 */
import { append, type AppendResult } from './ledger.ts';
import { isLapsed } from './lots.ts';
import { creditsLapsingAt, expiryCursors, lapsedCredits, moveExpiryCursor } from './store.ts';

/**
 * Writes the expiry of what is left of one credit, if it has lapsed by `now`. The operation
 * `expiry:<entry_id>` makes it once: a second call (or a concurrent run) answers the first entry,
 * and a credit spent or reversed in full writes nothing.
 */
export async function expireCredit(
  c: { organization_id: string; user_id: string; entry_id: string },
  now = new Date(),
): Promise<AppendResult | null> {
  return append(
    {
      organization_id: c.organization_id,
      user_id: c.user_id,
      reason: 'expiry',
      operation_id: `expiry:${c.entry_id}`,
      description: `points of ${c.entry_id} expired`,
    },
    (head) => {
      const lot = head.lots.find((l) => l.entry_id === c.entry_id);
      if (!lot || !isLapsed(lot, now)) return null;
      return { amount: -lot.points, lots: head.lots.filter((l) => l !== lot) };
    },
  );
}

const PAGE = 500;

export interface ExpiryRun {
  organizations: number;
  credits_checked: number;
  entries_written: number;
  points_expired: number;
  now: string;
}

/**
 * Writes the expiry of every credit that lapsed by `now` (default: the present), in every
 * organization that ever set an expiry, or in one. Reads by {organization_id, expires_at} (an
 * index), from where the previous run stopped.
 */
export async function expireLapsedPoints(input: { now?: string; organization_id?: string } = {}): Promise<ExpiryRun> {
  const now = input.now ? new Date(input.now) : new Date();
  const cursors = await expiryCursors(input.organization_id);
  const run: ExpiryRun = {
    organizations: cursors.length,
    credits_checked: 0,
    entries_written: 0,
    points_expired: 0,
    now: now.toISOString(),
  };
  for (const cursor of cursors) {
    const organization_id = cursor._id;
    let through = cursor.through;
    for (;;) {
      const page = await lapsedCredits(organization_id, through, now, PAGE);
      if (!page.length) break;
      const last = page[page.length - 1].expires_at!;
      // A full page may cut through credits lapsing at its last instant: take all of those, so
      // the cursor can move past that instant.
      const batch =
        page.length < PAGE
          ? page
          : [...page.filter((e) => e.expires_at! < last), ...(await creditsLapsingAt(organization_id, last))];
      for (const e of batch) {
        run.credits_checked += 1;
        const out = await expireCredit({ organization_id, user_id: e.user_id, entry_id: e.entry_id }, now);
        if (out && !out.duplicate) {
          run.entries_written += 1;
          run.points_expired -= out.entry.amount;
        }
      }
      through = last;
      // Only this run moves the cursor (the Schedule never overlaps runs); a lost move only
      // means the next run looks at those credits again, which writes nothing twice.
      await moveExpiryCursor(organization_id, through);
      if (page.length < PAGE) break;
    }
  }
  return run;
}
