/**
 * The steps of an endpoint's actor (`webhook-endpoint:<endpoint_id>`, workflows/webhook-endpoint.ts):
 * one round takes the endpoint's due deliveries (a claim on each: `due_at` moved ahead, so another
 * round, or a retry of this one, does not take them too), sends them at most PER_ENDPOINT at once,
 * each attempt made and recorded as deliveries.ts makes it, its next one scheduled in the queue by
 * its own backoff; then the actor sleeps until the next one is due or a fan-out wakes it.
 *
 * Shares: a round holds one of the worker's local-activity slots (shared with every workflow) for
 * as long as its sends take, so a worker runs at most MAX_ROUNDS rounds at once and at most
 * MAX_ROUNDS_PER_ORGANIZATION of one organization; a round beyond that answers `busy` at once and
 * its actor asks again a little later. A receiver that never answers thus holds its endpoint's
 * PER_ENDPOINT sends, and its organization at most its share, never another organization's.
 */
import { newId } from '../core/ids.ts';
import { retryDelay } from './backoff.ts';
import { attempt } from './deliveries.ts';
import type { DeliveryDoc, EndpointDoc } from './models.ts';
import { eventsSettings, retryWindowMs } from './settings.ts';
import { organizationShares } from './shares.ts';
import {
  claimDeliveries,
  dueDeliveries,
  endDelivery,
  endpointById,
  endQueued,
  markAsleep,
  markAwake,
  nextDue,
  releaseClaim,
} from './store.ts';

/** Sends at once to one endpoint. */
const PER_ENDPOINT = 8;
/** Deliveries taken per claim. */
const BATCH = 50;
/** A round stops taking new deliveries after this (the actor's next round takes them). */
const ROUND_MS = 15_000;
/** How long a claim holds: past it, a round that died is taken over (its deliveries sent again). */
const CLAIM_MS = 60_000;
const MAX_ROUNDS = 40;
const MAX_ROUNDS_PER_ORGANIZATION = 4;
const takeRound = organizationShares(MAX_ROUNDS, MAX_ROUNDS_PER_ORGANIZATION);

export interface EndpointActorInput {
  organization_id: string;
  endpoint_id: string;
}

/**
 * `more`: due deliveries are left (the round ran out of time); `busy`: the worker's share was
 * taken, nothing was sent; `idle`: none is due now; `gone`: the endpoint was deleted; `paused`: an
 * admin paused it (its deliveries wait; resuming wakes the actor).
 */
type RoundResult =
  | { state: 'more' }
  | { state: 'busy' }
  | { state: 'idle'; next_due_ms: number | null }
  | { state: 'gone' }
  | { state: 'paused' };

/** Attempts one claimed delivery; false when it was not attempted (the name lookups were all taken). */
async function deliver(d: DeliveryDoc, endpoint: EndpointDoc | null, claim: string): Promise<boolean> {
  const run = {
    delivery_id: d._id,
    organization_id: d.organization_id,
    endpoint_id: d.endpoint_id,
    event_id: d.event_id,
    event_type: d.event_type,
  };
  const cfg = eventsSettings();
  const now = Date.now();
  const n = (d.attempts?.length ?? 0) + 1;
  const window = d.window_ends_at?.getTime() ?? d.created_at.getTime() + retryWindowMs();
  if (now > window) {
    await endDelivery(
      { _id: d._id, ...run },
      n === 1
        ? 'no attempt could be made within its window; retry it by hand'
        : `no success after ${n - 1} attempts; retry it by hand`,
      claim,
    );
    return true;
  }
  const delay = retryDelay(n, cfg.WEBHOOK_RETRY_BASE_SECONDS * 1000, Math.random());
  const out = await attempt(
    { ...run, attempt: n, claim, ...(now + delay <= window && { next_delay_ms: delay }) },
    { endpoint },
  );
  return out.outcome !== 'busy';
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
  const claim = newId('clm');
  for (;;) {
    // Read for each batch: a change of the endpoint (disabled, deleted, a new URL or secret) applies within one.
    const found = await endpointById(input.endpoint_id);
    const endpoint = found && found.organization_id === input.organization_id ? found : null;
    if (!endpoint) {
      // Deleted: whatever it still had queued ends, without a send.
      await endQueued(input.endpoint_id, 'the endpoint was deleted');
      return { state: 'gone' };
    }
    if (endpoint.paused_at) return { state: 'paused' };
    const due = await dueDeliveries(input.endpoint_id, new Date(), BATCH);
    if (!due.length) break;
    const taken = await claimDeliveries(
      due.map((d) => d._id),
      claim,
      new Date(Date.now() + CLAIM_MS),
    );
    if (!taken.length) break; // another round took them
    let next = 0;
    let busy = false;
    await Promise.all(
      Array.from({ length: Math.min(PER_ENDPOINT, taken.length) }, async () => {
        while (next < taken.length) {
          const d = taken[next++];
          // Past its time, or after a refusal for want of lookups: back in the queue, untried.
          if (busy || Date.now() - started >= ROUND_MS) {
            await releaseClaim(d._id, claim).catch(() => undefined);
            continue;
          }
          // A delivery whose attempt could not be recorded keeps its claim: it is taken again
          // once the claim has passed, not resent in a loop.
          if (!(await deliver(d, endpoint, claim).catch(() => true))) busy = true;
        }
      }),
    );
    if (busy) return { state: 'busy' };
    if (Date.now() - started >= ROUND_MS) return { state: 'more' };
  }
  return { state: 'idle', next_due_ms: (await nextDue(input.endpoint_id))?.getTime() ?? null };
}

/**
 * The actor is about to sleep: it says so, then looks at its queue once more. A fan-out that
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
