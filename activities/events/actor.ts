/**
 * The steps of an endpoint's actor (`webhook-endpoint:<endpoint_id>`, workflows/webhook-endpoint.ts):
 * one round sends the endpoint's due deliveries, at most PER_ENDPOINT at once, each attempt made
 * and recorded as deliveries.ts makes it, its next one scheduled in the queue (`due_at`) by its
 * own backoff; then the actor sleeps until the next one is due or a fan-out wakes it. A receiver
 * that is slow or never answers holds its own endpoint's PER_ENDPOINT sends, nothing else.
 */
import { retryDelay } from './backoff.ts';
import { attempt } from './deliveries.ts';
import type { DeliveryDoc, EndpointDoc, EventDoc } from './models.ts';
import { eventsSettings } from './settings.ts';
import { dueDeliveries, endDelivery, endpointById, eventsByIds, markAsleep, markAwake, nextDue } from './store.ts';

/** Sends at once to one endpoint. */
const PER_ENDPOINT = 8;
/** Deliveries read per query of the queue. */
const BATCH = 100;
/** A round stops taking new deliveries after this (the actor's next round takes them). */
const ROUND_MS = 15_000;

export interface EndpointActorInput {
  organization_id: string;
  endpoint_id: string;
}

/** `more`: due deliveries are left (the round ran out of time); `idle`: none is due now; `gone`: the endpoint was deleted. */
type RoundResult = { state: 'more' } | { state: 'idle'; next_due_ms: number | null } | { state: 'gone' };

async function deliver(d: DeliveryDoc, endpoint: EndpointDoc | null, event: EventDoc | null): Promise<void> {
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
  const window = (d.window_ends_at ?? new Date(d.created_at.getTime() + cfg.WEBHOOK_RETRY_HOURS * 3_600_000)).getTime();
  if (now > window) {
    await endDelivery(
      { _id: d._id, ...run, event_type: d.event_type },
      n === 1
        ? 'no attempt could be made within its window; retry it by hand'
        : `no success after ${n - 1} attempts; retry it by hand`,
    );
    return;
  }
  const delay = retryDelay(n, cfg.WEBHOOK_RETRY_BASE_SECONDS * 1000, Math.random());
  await attempt(
    { ...run, attempt: n, queued: true, ...(now + delay <= window && { next_delay_ms: delay }) },
    { endpoint, event },
  );
}

/** One round: the endpoint's due deliveries, PER_ENDPOINT at a time, until none is due or ROUND_MS has passed. */
export async function deliverDue(input: EndpointActorInput): Promise<RoundResult> {
  // Read once for the round: a change of the endpoint (disabled, deleted) applies from the next one.
  const found = await endpointById(input.endpoint_id);
  const endpoint = found && found.organization_id === input.organization_id ? found : null;
  const started = Date.now();
  for (;;) {
    const due = await dueDeliveries(input.endpoint_id, new Date(), BATCH);
    if (!due.length) break;
    const events = await eventsByIds(due.map((d) => d.event_id));
    if (!endpoint) {
      // Deleted: what it had queued ends without a send (attempt() says why, once per delivery).
      await Promise.all(due.map((d) => deliver(d, null, null)));
      continue;
    }
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(PER_ENDPOINT, due.length) }, async () => {
        while (next < due.length && Date.now() - started < ROUND_MS) {
          const d = due[next++];
          await deliver(d, endpoint, events.get(d.event_id) ?? null).catch(() => undefined);
        }
      }),
    );
    if (Date.now() - started >= ROUND_MS) return { state: 'more' };
  }
  if (!endpoint) return { state: 'gone' };
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
