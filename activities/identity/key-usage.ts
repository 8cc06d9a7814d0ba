/**
 * Each key's requests per UTC day and outcome: every edge process adds them up in memory and
 * writes them every USAGE_DAYS_FLUSH_MS with `$inc` upserts (one bulk write), as loyalty does for
 * campaign reports, so counting costs no write per request. A process that crashes loses at most
 * the last few seconds of counts (they only inform); a batch the database refuses is put back for
 * the next one, up to a bound.
 */
import { Background } from '../core/background.ts';
import type { KeyOutcome } from './constants.ts';
import { addUsageDays } from './store.ts';

const USAGE_DAYS_FLUSH_MS = 5000;
const PENDING_MAX = 100_000;

interface Row {
  key_id: string;
  organization_id: string;
  day: string;
  counts: Partial<Record<KeyOutcome, number>>;
}

let pending = new Map<string, Row>();
let timer: NodeJS.Timeout | undefined;
const writes = new Background('identity: key usage counts not written (they are put back for the next batch)');

const dayOf = (at: number) => new Date(at).toISOString().slice(0, 10);

function add(into: Map<string, Row>, r: Row): void {
  const key = `${r.key_id}|${r.day}`;
  let row = into.get(key);
  if (!row) {
    if (into.size >= PENDING_MAX) return;
    into.set(key, (row = { key_id: r.key_id, organization_id: r.organization_id, day: r.day, counts: {} }));
  }
  for (const [k, n] of Object.entries(r.counts) as [KeyOutcome, number][]) row.counts[k] = (row.counts[k] ?? 0) + n;
}

/** Counts one request of a key by its outcome, on the day it was answered. */
export function countKeyRequest(key_id: string, organization_id: string, outcome: KeyOutcome, at = Date.now()): void {
  add(pending, { key_id, organization_id, day: dayOf(at), counts: { [outcome]: 1 } });
  timer ??= setTimeout(flush, USAGE_DAYS_FLUSH_MS).unref();
}

function flush(): void {
  timer = undefined;
  const batch = pending;
  pending = new Map();
  writes.run(
    addUsageDays([...batch.values()]).catch((err: unknown) => {
      for (const r of batch.values()) add(pending, r);
      timer ??= setTimeout(flush, USAGE_DAYS_FLUSH_MS).unref();
      throw err;
    }),
  );
}

/** Writes what is counted now (a process shutting down, and tests). */
export async function flushKeyRequests(): Promise<void> {
  clearTimeout(timer);
  flush();
  await writes.settled();
}

/** This process's counts not written yet, for a key's days from `fromDay`: a reader adds them. */
export function pendingUsage(key_id: string, fromDay: string): Row[] {
  return [...pending.values()].filter((r) => r.key_id === key_id && r.day >= fromDay);
}
