/**
 * Campaign reports: each process adds up the campaigns' shares of the awards it writes (and of
 * their reversals) per day of the program's calendar, and writes them once a second (one bulk
 * write; the members reached as one insert of the ones this process has not recorded lately). The
 * ledger's entries stay the record of every share; a crash loses at most a second of the report's
 * sums, never a point or a budget (budgets are taken per award: campaign-store.ts).
 */
import { Background } from '../core/background.ts';
import { Cache } from '../core/db/index.ts';
import { localDate } from './calendar.ts';
import { addCampaignDays, addCampaignMembers } from './campaign-store.ts';
import type { CampaignShare } from './models.ts';

interface Day {
  _id: string;
  organization_id: string;
  campaign_id: string;
  day: string;
  points: number;
  awards: number;
  returned: number;
}

const days = new Map<string, Day>();
const members = new Map<string, { organization_id: string; campaign_id: string; user_id: string; at: Date }>();
/** Members recorded lately by this process: not sent again (the store refuses a repeat anyway). */
const recorded = new Cache<string, true>({ max: 100_000, ttlMs: 600_000 });
let flushing: NodeJS.Timeout | undefined;
const writes = new Background('loyalty: campaign report sums not written (the ledger keeps every share)');

/** Counts an entry's campaign shares: an award's (positive) or a reversal's (negative, given back). */
export function countShares(
  organization_id: string,
  user_id: string,
  shares: CampaignShare[],
  at: Date,
  time_zone: string,
): void {
  const day = localDate(at, time_zone);
  for (const s of shares) {
    if (!s.points) continue;
    const key = `${s.campaign_id}|${day}`;
    let d = days.get(key);
    if (!d)
      days.set(
        key,
        (d = { _id: key, organization_id, campaign_id: s.campaign_id, day, points: 0, awards: 0, returned: 0 }),
      );
    if (s.points > 0) {
      d.points += s.points;
      d.awards += 1;
      const m = `${s.campaign_id}|${user_id}`;
      if (!recorded.get(m)) members.set(m, { organization_id, campaign_id: s.campaign_id, user_id, at });
    } else d.returned -= s.points;
  }
  flushing ??= setTimeout(flush, 1000).unref();
}

function flush(): void {
  flushing = undefined;
  const d = [...days.values()];
  const m = [...members.entries()];
  days.clear();
  members.clear();
  writes.run(addCampaignDays(d));
  writes.run(
    (async () => {
      await addCampaignMembers(m.map(([_id, x]) => ({ _id, ...x })));
      for (const [key] of m) recorded.set(key, true);
    })(),
  );
}

/** Writes what is added up now (tests, and a process shutting down). */
export async function campaignStatsSettled(): Promise<void> {
  if (flushing) {
    clearTimeout(flushing);
    flush();
  }
  await writes.settled();
}
