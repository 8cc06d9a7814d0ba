/**
 * The steps of an endpoint's actor (`webhook-endpoint:<endpoint_id>`, workflows/webhook-endpoint.ts):
 * one round holds the endpoint's queue (one round at a time: a retried round waits while the one
 * before still runs), reads its due deliveries and their events a batch at a time, sends them at
 * most PER_ENDPOINT at once (each attempt made as deliveries.ts makes it), and records the batch's
 * attempts in one bulk write, each delivery's next one scheduled in the queue by its own backoff;
 * then the actor sleeps until the next one is due or a fan-out wakes it.
 *
 * Shares: a round holds one of the worker's local-activity slots (shared with every workflow) for
 * as long as its sends take, so a worker runs at most MAX_ROUNDS rounds at once and at most
 * MAX_ROUNDS_PER_ORGANIZATION of one organization; a round beyond that answers `busy` at once and
 * its actor asks again a little later. A receiver that never answers thus holds its endpoint's
 * PER_ENDPOINT sends, and its organization at most its share, never another organization's.
 */
import { newId } from '../core/ids.ts';
import { retryDelay } from './backoff.ts';
import { tryDelivery } from './deliveries.ts';
import type { DeliveryDoc, EndpointDoc, EventDoc } from './models.ts';
import { eventsSettings, retryWindowMs } from './settings.ts';
import { organizationShares } from './shares.ts';
import {
  dueDeliveries,
  endpointById,
  endQueued,
  eventsByIds,
  heldUntil,
  holdQueue,
  markAsleep,
  markAwake,
  nextDue,
  releaseQueue,
  settle,
} from './store.ts';

/** Sends at once to one endpoint. */
const PER_ENDPOINT = 8;
/** Deliveries read per batch. */
const BATCH = 200;
/** A round stops taking new deliveries after this (the actor's next round takes them). */
const ROUND_MS = 15_000;
/**
 * How long a round holds its endpoint's queue from its start: longer than a round lasts (it starts
 * no batch after ROUND_MS; a batch's last send ends within 10 s, its name lookup within 5 s);
 * past it, a round that died is taken over.
 */
const HOLD_MS = 40_000;
/** After a batch of fewer than BATCH / 2, a round waits this long before it reads the queue again. */
const GATHER_MS = 100;
const MAX_ROUNDS = 40;
const MAX_ROUNDS_PER_ORGANIZATION = 4;
const takeRound = organizationShares(MAX_ROUNDS, MAX_ROUNDS_PER_ORGANIZATION);

export interface EndpointActorInput {
  organization_id: string;
  endpoint_id: string;
}

/**
 * `more`: due deliveries are left (the round ran out of time); `busy`: the worker's share was
 * taken, nothing was sent; `idle`: none is due now (`asleep`: the round marked the actor asleep
 * and looked at its queue after, as beforeSleep does for rounds of older builds); `gone`: the endpoint was deleted; `paused`: an
 * admin paused it (its deliveries wait; resuming wakes the actor); `held`: another round holds the
 * queue until `until_ms` (a round that died: its hold passes).
 */
type RoundResult =
  | { state: 'more' }
  | { state: 'busy' }
  | { state: 'idle'; next_due_ms: number | null; asleep?: true }
  | { state: 'gone' }
  | { state: 'paused' }
  | { state: 'held'; until_ms: number };

type Settled = Parameters<typeof settle>[0][number];

/** Attempts one due delivery; null when it was not attempted (paused, or the name lookups were all taken). */
async function deliver(d: DeliveryDoc, endpoint: EndpointDoc, event: EventDoc | null): Promise<Settled | null> {
  const input = {
    delivery_id: d._id,
    organization_id: d.organization_id,
    endpoint_id: d.endpoint_id,
    event_id: d.event_id,
    event_type: d.event_type,
  };
  const row = { _id: d._id, due_at: d.due_at! };
  const now = Date.now();
  const n = (d.attempts?.length ?? 0) + 1;
  // A resume gives what was queued a full window from then (its own, if later).
  const window = Math.max(
    d.window_ends_at?.getTime() ?? d.created_at.getTime() + retryWindowMs(),
    endpoint.resumed_at ? endpoint.resumed_at.getTime() + retryWindowMs() : 0,
  );
  if (now > window)
    return {
      ...row,
      status: 'failed',
      final_reason:
        n === 1
          ? 'no attempt could be made within its window; retry it by hand'
          : `no success after ${n - 1} attempts; retry it by hand`,
    };
  const delay = retryDelay(n, eventsSettings().WEBHOOK_RETRY_BASE_SECONDS * 1000, Math.random());
  const { settle: s } = await tryDelivery(
    { ...input, attempt: n, ...(now + delay <= window && { next_delay_ms: delay }) },
    endpoint,
    event,
  );
  return s ? { ...row, ...s } : null;
}

/** One round: the endpoint's due deliveries, PER_ENDPOINT at a time, until none is due or ROUND_MS has passed. */
export async function deliverDue(input: EndpointActorInput): Promise<RoundResult> {
  const release = takeRound(input.organization_id);
  if (!release) return { state: 'busy' };
  try {
    return await round(input);
  } finally {
    release();
  }
}

async function round(input: EndpointActorInput): Promise<RoundResult> {
  const started = Date.now();
  const id = newId('rnd');
  // One round at a time per endpoint (a round retried while the one before still runs waits).
  if (!(await holdQueue(input.endpoint_id, input.organization_id, id, new Date(Date.now() + HOLD_MS)))) {
    // Held by another round: a round retried while the one before still runs, or one that died
    // (its hold passes within HOLD_MS). The actor comes back then, or when woken.
    return { state: 'held', until_ms: (await heldUntil(input.endpoint_id))?.getTime() ?? Date.now() + 1000 };
  }
  // A batch's records are written while the next batch is sent (one write in flight at a time);
  // the deliveries being recorded are left out of the next batch's read.
  let recording: Promise<void> = Promise.resolve();
  let recordingIds = new Set<string>();
  let endpoint: EndpointDoc | null = null;
  let asleep = false;
  try {
    for (;;) {
      // Read for each batch: a change of the endpoint (disabled, deleted, paused, a new URL or secret) applies within one.
      if (!endpoint) {
        const found = await endpointById(input.endpoint_id);
        if (!found || found.organization_id !== input.organization_id) {
          await recording;
          // Deleted: whatever it still had queued ends, without a send.
          await endQueued(input.endpoint_id, 'the endpoint was deleted');
          return { state: 'gone' };
        }
        if (found.paused_at) return { state: 'paused' };
        endpoint = found;
      }
      const due = (await dueDeliveries(input.endpoint_id, new Date(), BATCH + recordingIds.size))
        .filter((d) => !recordingIds.has(d._id))
        .slice(0, BATCH);
      if (!due.length) {
        if (recordingIds.size) {
          await recording; // then read again: what was being recorded may be due again
          recordingIds = new Set();
          continue;
        }
        if (asleep) break;
        // About to end: the actor says it sleeps, then looks once more. A fan-out that queued a
        // delivery before the mark is seen by that look; one after it finds the actor asleep and
        // wakes it.
        await markAsleep(input.endpoint_id);
        asleep = true;
        continue;
      }
      if (asleep) {
        await markAwake(input.endpoint_id);
        asleep = false;
      }
      // Each batch's events are read at once (an erasure's rewrite applies from the next batch).
      const events = await eventsByIds(due.map((d) => d.event_id));
      const done: Settled[] = [];
      let next = 0;
      let untried = false;
      const sending = endpoint;
      await Promise.all(
        Array.from({ length: Math.min(PER_ENDPOINT, due.length) }, async () => {
          while (next < due.length && !untried && Date.now() - started < ROUND_MS) {
            const d = due[next++];
            const row = await deliver(d, sending, events.get(d.event_id) ?? null).catch(() => null);
            if (row) done.push(row);
            // Not attempted (for want of name lookups): it stays due; the actor asks again later.
            else untried = true;
          }
        }),
      );
      // Recorded together: what was sent and not recorded (a crash) is sent again once the hold passes.
      await recording;
      recording = settle(done);
      recording.catch(() => undefined); // awaited before the next write or at the end, not unhandled meanwhile
      recordingIds = new Set(done.map((r) => r._id));
      endpoint = null;
      if (untried) return { state: 'busy' };
      // A small batch: the queue is keeping up; the next read waits a little so that it finds the
      // deliveries of that moment together (a batch's reads and write cost more than its sends).
      if (due.length < BATCH / 2) await new Promise((r) => setTimeout(r, GATHER_MS));
      if (Date.now() - started >= ROUND_MS) return { state: 'more' };
    }
    return { state: 'idle', next_due_ms: (await nextDue(input.endpoint_id))?.getTime() ?? null, asleep: true };
  } finally {
    // A record that failed fails the round (retried: its deliveries are sent again, same
    // webhook-id), once the queue is released for that retry.
    const failed = await recording.then(
      () => undefined,
      (err: unknown) => ({ err }),
    );
    await releaseQueue(input.endpoint_id, id).catch(() => undefined);
    if (failed) throw failed.err;
  }
}

/**
 * For rounds of older builds (their `idle` is not `asleep`), replayed by running actors:
 * the actor is about to sleep: it says so, then looks at its queue once more. A fan-out that
 * queued a delivery before the first write is seen here (`due`: it goes on); one after it found
 * the actor asleep and wakes it. Answers when the next queued delivery is due.
 */
export async function beforeSleep(input: EndpointActorInput): Promise<{ due: boolean; next_due_ms: number | null }> {
  await markAsleep(input.endpoint_id);
  const next = await nextDue(input.endpoint_id);
  if (next && next.getTime() <= Date.now()) {
    await markAwake(input.endpoint_id);
    return { due: true, next_due_ms: next.getTime() };
  }
  return { due: false, next_due_ms: next?.getTime() ?? null };
}
