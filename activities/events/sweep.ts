/**
 * The events' maintenance, run every minute by the Schedule `events:maintenance:<task queue>`:
 * records the events of changes whose component had not recorded them (a process died between
 * the change and its event: each source finds its own), queues the deliveries of events recorded
 * but not fanned out, wakes the actors of endpoints whose queue is overdue, and removes events and
 * finished deliveries past EVENT_RETENTION_DAYS.
 */
import { EVENT_RETENTION_DAYS } from './constants.ts';
import { fanOut } from './emit.ts';
import { wakeEndpoint } from './queue.ts';
import { pruneDeliveries, pruneEndpointHours, pruneEvents, staleWakes, unfannedEvents } from './store.ts';

/** A component's unrecorded events: it records those of changes older than `before` and answers how many. */
export type EventSource = (before: Date) => Promise<number>;

const sources = new Map<string, EventSource>();

/** Each component that keeps its events with its changes offers its source (workers/root.ts). */
export const registerEventSource = (name: string, source: EventSource) => void sources.set(name, source);

/** Changes and events younger than this are still being handled by the process that made them. */
const SETTLE_MS = 10_000;
const BATCH = 500;
const OVERDUE_MS = 60_000;

export interface SweepResult {
  recorded: Record<string, number>;
  fanned_out: number;
  /** endpoints whose actor was signalled because it was marked awake a minute ago or more */
  endpoints_woken: number;
  events_removed: number;
  deliveries_removed: number;
}

export async function sweepEvents(now = new Date()): Promise<SweepResult> {
  const before = new Date(now.getTime() - SETTLE_MS);
  const recorded: Record<string, number> = {};
  for (const [name, source] of sources) recorded[name] = await source(before);
  let fanned_out = 0;
  const failed = new Set<string>();
  for (;;) {
    const batch = (await unfannedEvents(before, BATCH + failed.size)).filter((doc) => !failed.has(doc._id));
    // One event that cannot be fanned out (its endpoint's start refused) waits for the next sweep
    // without holding up the others or the retention below.
    for (const doc of batch.slice(0, BATCH))
      await fanOut(doc).then(
        () => (fanned_out += 1),
        () => failed.add(doc._id),
      );
    if (batch.length < BATCH) break;
  }
  // An endpoint marked awake a minute ago or more: its wake may have been lost (a process died
  // between the mark and the signal); a busy actor is signalled for nothing, at no cost.
  let woken = 0;
  for (const e of await staleWakes(new Date(now.getTime() - OVERDUE_MS), 1000)) {
    await wakeEndpoint(e.organization_id, e._id, true).then(
      () => (woken += 1),
      () => undefined,
    );
  }
  const cutoff = new Date(now.getTime() - EVENT_RETENTION_DAYS * 86_400_000);
  await pruneEndpointHours(cutoff); // endpoints' hourly attempt counts, kept as long as deliveries
  return {
    recorded,
    fanned_out,
    endpoints_woken: woken,
    events_removed: await pruneEvents(cutoff),
    deliveries_removed: await pruneDeliveries(cutoff),
  };
}
