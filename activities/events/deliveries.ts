/**
 * One attempt of one event's delivery to one endpoint, and its record: the endpoint's actor
 * (actor.ts) decides when (the per-delivery runs of older builds, `webhook-delivery:<id>`, through
 * attemptDelivery, until they end). 2xx is success; 410 Gone disables the endpoint; anything else
 * (another status, a timeout, a refused connection) is a failed attempt, retried on the
 * delivery's schedule until it runs out, and an endpoint without a success for
 * WEBHOOK_DISABLE_AFTER_DAYS is disabled.
 */
import { postJson, resolveWebhookTarget } from '../adapters/webhooks.ts';
import { conflict, notFound, PlatformError } from '../core/errors.ts';
import type { DeliveryStatus } from './constants.ts';
import type { DeliveryRun } from './emit.ts';
import { signingSecrets } from './endpoints.ts';
import type { AttemptDoc, DeliveryDoc, EndpointDoc, EventDoc } from './models.ts';
import { wakeEndpoint } from './queue.ts';
import { eventsSettings, retryWindowMs } from './settings.ts';
import { organizationShares } from './shares.ts';
import { signedHeaders } from './signing.ts';
import {
  addEndpointOutcomes,
  addOutcomes,
  deliveriesPage,
  deliveryById,
  type DeliveryFilter,
  type DeliveryKey,
  deliveryOf,
  disableEndpoint,
  endDelivery,
  endpointById,
  type EndpointOutcomes,
  eventById,
  markFailing,
  markPending,
  markSucceeding,
  outcomeCounts,
  recordAttempt,
} from './store.ts';

export interface AttemptInput extends DeliveryRun {
  /** 1 for the first attempt of this run */
  attempt: number;
  /** when the next attempt is due if this one fails; absent: this is the last one */
  next_delay_ms?: number;
}

export interface AttemptResult {
  /**
   * retry: failed, another attempt is due; ended: nothing was sent (the endpoint or event is gone
   * or disabled); busy: nothing was tried, the organization's share of this worker's attempts is
   * taken (ask again later, it is not an attempt)
   */
  outcome: 'succeeded' | 'retry' | 'failed' | 'ended' | 'busy';
  status?: number;
}

/**
 * Attempts of the older builds' per-delivery runs at once in one worker process, in all and per
 * organization (each holds a local-activity slot for up to 10 s); the endpoints' actors have
 * their own shares (actor.ts).
 */
const attemptShare = organizationShares(32, 8);

const DAY_MS = 86_400_000;

// Outcome counts, in all and per endpoint, are added up here and written once a second (a bulk
// write per collection, not one per attempt); a crash loses at most that second's counts.
const pendingCounts = new Map<string, number>();
const pendingByEndpoint = new Map<string, EndpointOutcomes>();
let flushing: NodeJS.Timeout | undefined;
const HOUR_MS = 3_600_000;

function countOutcome(d: DeliveryKey, outcome: string, a: AttemptDoc): void {
  pendingCounts.set(outcome, (pendingCounts.get(outcome) ?? 0) + 1);
  let e = pendingByEndpoint.get(d.endpoint_id);
  if (!e) pendingByEndpoint.set(d.endpoint_id, (e = { organization_id: d.organization_id, succeeded: 0, failed: 0 }));
  if (outcome === 'succeeded') {
    e.succeeded += 1;
    e.last_success_at = a.at;
  } else {
    e.failed += 1;
    e.last_error = {
      at: a.at,
      ...(a.status !== undefined && { status: a.status }),
      ...(a.error && { error: a.error }),
      delivery_id: d._id,
    };
  }
  flushing ??= setTimeout(() => {
    flushing = undefined;
    const counts = new Map(pendingCounts);
    const byEndpoint = new Map(pendingByEndpoint);
    pendingCounts.clear();
    pendingByEndpoint.clear();
    const hour = new Date(Math.floor(Date.now() / HOUR_MS) * HOUR_MS);
    addOutcomes(counts).catch(() => {
      for (const [k, n] of counts) pendingCounts.set(k, (pendingCounts.get(k) ?? 0) + n);
    });
    // Per endpoint: lost when the store refuses (stats, not records; the deliveries keep every attempt).
    addEndpointOutcomes(hour, byEndpoint).catch(() => undefined);
  }, 1000).unref();
}

export async function attemptDelivery(input: AttemptInput): Promise<AttemptResult> {
  const release = attemptShare(input.organization_id);
  if (!release) return { outcome: 'busy' };
  try {
    return await attempt(input);
  } finally {
    release();
  }
}

const deliveryKey = (input: AttemptInput): DeliveryKey => ({
  _id: input.delivery_id,
  organization_id: input.organization_id,
  endpoint_id: input.endpoint_id,
  event_id: input.event_id,
  event_type: input.event_type,
});

/**
 * What an attempt leaves a delivery in: its state, the attempt (none when the delivery ended
 * without a send), its next attempt or why it ended. The caller writes it (store.ts `settle`).
 */
export interface Settlement {
  status: DeliveryStatus;
  attempt?: AttemptDoc;
  next_attempt_at?: Date;
  final_reason?: string;
}

/**
 * One attempt, with its endpoint and event as read (null: gone). Answers its outcome and what to
 * record (nothing when `busy`: not attempted). What the attempt learns of the endpoint (failing,
 * disabled) is written at once and kept on `endpoint` for the attempts that share it.
 */
export async function tryDelivery(
  input: AttemptInput,
  endpoint: EndpointDoc | null,
  event: EventDoc | null,
): Promise<{ result: AttemptResult; settle?: Settlement }> {
  const d = deliveryKey(input);
  const ended = (final_reason: string) => ({
    result: { outcome: 'ended' as const },
    settle: { status: 'failed' as const, final_reason },
  });
  if (!endpoint || endpoint.organization_id !== d.organization_id) return ended('the endpoint was deleted');
  // A ping tests the endpoint, enabled or not (before enabling it again, say).
  if (!endpoint.enabled && input.event_type !== 'ping')
    return ended(`the endpoint is disabled${endpoint.disabled_reason ? `: ${endpoint.disabled_reason}` : ''}`);
  // Paused by an admin: nothing is sent, the delivery waits in its queue (not an attempt).
  if (endpoint.paused_at) return { result: { outcome: 'busy' } };
  if (!event) return ended('the event is past its retention');
  const at = new Date();
  let status: number | undefined;
  let duration_ms = 0;
  let error: string | undefined;
  try {
    // Checked again at each attempt: a name may resolve elsewhere since the endpoint was saved.
    const target = await resolveWebhookTarget(endpoint.url, undefined, undefined, 'url');
    ({ status, duration_ms } = await postJson(
      target,
      event.body,
      signedHeaders(signingSecrets(endpoint, at), event._id, event.body, at),
    ));
  } catch (err) {
    // The process's name lookups are all taken (another endpoint's slow name server): not an
    // attempt, and not this endpoint's failure; it is due again.
    if (err instanceof PlatformError && err.kind === 'busy') return { result: { outcome: 'busy' } };
    duration_ms = Date.now() - at.getTime();
    const e = err as Error & { cause?: Error };
    // AbortSignal.timeout() aborts the request: an AbortError whose cause is the TimeoutError.
    error =
      e.name === 'TimeoutError' || e.cause?.name === 'TimeoutError'
        ? 'no answer within 10 s'
        : String(e.message ?? err).slice(0, 300);
  }
  const attempt = { at, duration_ms, ...(status !== undefined && { status }), ...(error && { error }) };
  const failed = (final_reason: string, outcome: string) => {
    countOutcome(d, outcome, attempt);
    return {
      result: { outcome: 'failed' as const, status },
      settle: { status: 'failed' as const, attempt, final_reason },
    };
  };
  if (status !== undefined && status >= 200 && status < 300) {
    if (endpoint.failing_since) {
      await markSucceeding(endpoint._id);
      delete endpoint.failing_since;
    }
    countOutcome(d, 'succeeded', attempt);
    return { result: { outcome: 'succeeded', status }, settle: { status: 'succeeded', attempt } };
  }
  if (status === 410) {
    await disableEndpoint(
      endpoint.organization_id,
      endpoint._id,
      `the receiver answered 410 Gone on ${at.toISOString()}`,
    );
    endpoint.enabled = false; // the batch's next attempts end without a send
    return failed('the receiver answered 410 Gone: the endpoint is disabled', 'gone');
  }
  if (!endpoint.failing_since) {
    await markFailing(endpoint._id, at);
    endpoint.failing_since = at;
  }
  const since = endpoint.failing_since ?? at;
  const limitDays = eventsSettings().WEBHOOK_DISABLE_AFTER_DAYS;
  // Decided on the stored date (an admin who enabled the endpoint meanwhile cleared it).
  if (
    at.getTime() - since.getTime() >= limitDays * DAY_MS &&
    (await disableEndpoint(
      endpoint.organization_id,
      endpoint._id,
      `no successful delivery since ${since.toISOString()} (${limitDays} days)`,
      new Date(at.getTime() - limitDays * DAY_MS),
    ))
  ) {
    endpoint.enabled = false;
    return failed(`the endpoint failed for ${limitDays} days without a success and is disabled`, 'gave_up');
  }
  if (input.next_delay_ms === undefined)
    return failed(`no success after ${input.attempt} attempts; retry it by hand`, 'gave_up');
  countOutcome(d, 'failed_attempt', attempt);
  return {
    result: { outcome: 'retry', status },
    settle: { status: 'retrying', attempt, next_attempt_at: new Date(at.getTime() + input.next_delay_ms) },
  };
}

/**
 * One attempt of an older build's per-delivery run, `webhook-delivery:<id>`: its endpoint and
 * event read now, its record written at once (the run is the delivery until its first attempt).
 */
async function attempt(input: AttemptInput): Promise<AttemptResult> {
  const [endpoint, event] = await Promise.all([endpointById(input.endpoint_id), eventById(input.event_id)]);
  const { result, settle } = await tryDelivery(input, endpoint, event);
  if (!settle) return result;
  const d = deliveryKey(input);
  if (settle.attempt)
    await recordAttempt(d, settle.attempt, settle.status, settle.next_attempt_at, settle.final_reason);
  else await endDelivery(d, settle.final_reason!);
  return result;
}

export interface DeliveryView {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: { at: string; status: number | null; duration_ms: number; error: string | null }[];
  next_attempt_at: string | null;
  final_reason: string | null;
  created_at: string;
}

const viewDelivery = (d: DeliveryDoc): DeliveryView => ({
  id: d._id,
  endpoint_id: d.endpoint_id,
  event_id: d.event_id,
  event_type: d.event_type,
  status: d.status,
  attempts: (d.attempts ?? []).map((a) => ({
    at: new Date(a.at).toISOString(),
    status: a.status ?? null,
    duration_ms: a.duration_ms,
    error: a.error ?? null,
  })),
  next_attempt_at: d.next_attempt_at ? new Date(d.next_attempt_at).toISOString() : null,
  final_reason: d.final_reason ?? null,
  created_at: new Date(d.created_at).toISOString(),
});

export async function listDeliveries(f: DeliveryFilter, page: number, limit: number) {
  const rows = await deliveriesPage(f, (page - 1) * limit, limit);
  return { deliveries: rows.slice(0, limit).map(viewDelivery), page, limit, has_more: rows.length > limit };
}

/**
 * An attempt now, whatever the delivery's state (a delivered one is sent again: receivers
 * deduplicate by webhook-id). One at a time: while a retry asked for is not attempted yet
 * (`pending`), another is 409.
 */
export async function retryDelivery(organization_id: string, delivery_id: string): Promise<DeliveryView> {
  const d = await deliveryOf(organization_id, delivery_id);
  if (!d) throw notFound('Delivery not found');
  if (!(await markPending(d._id, retryWindowMs())))
    throw conflict('An attempt of this delivery is already due; its result shows in the delivery');
  // Queued in its endpoint's actor from now on (a delivery of an older build's run too: that run,
  // should it still wait, may attempt it once more; receivers deduplicate by webhook-id).
  await wakeEndpoint(organization_id, d.endpoint_id, true);
  return viewDelivery((await deliveryById(d._id)) ?? d);
}

/** Attempts by outcome since the store began, across every worker (`/metrics`). */
export async function deliveryOutcomes(): Promise<Record<string, number>> {
  return Object.fromEntries((await outcomeCounts()).map((c) => [c._id, c.count]));
}
