/**
 * What an organization's admins do with an endpoint's queue: see it (backlog, oldest undelivered,
 * success rate, last error), pause and resume it (deliveries queue while paused), and replay its
 * deliveries since a time. docs/components/events.md, "Operating an endpoint".
 */
import { noteChange } from '../core/audit-note.ts';
import { invalid } from '../core/errors.ts';
import { type EndpointView, existing, viewEndpoint } from './endpoints.ts';
import { wakeEndpoint } from './queue.ts';
import { retryWindowMs } from './settings.ts';
import {
  backlogOf,
  backlogs,
  endedDeliveries,
  hoursOf,
  pausedEndpoints,
  queueOf,
  queues,
  requeue,
  updateEndpoint,
} from './store.ts';

/** Deliveries one replay queues at most; `next_since` says where the next call starts. */
export const REPLAY_LIMIT = 10_000;
const HOUR_MS = 3_600_000;

/**
 * Pauses the endpoint: its deliveries keep being queued, nothing more is sent (a retry by hand and
 * a test ping wait too) until it is resumed; a batch under way finishes. The endpoint's actor
 * reads it at each batch and each wake (a fan-out still wakes it, at most every 30 s, to find it
 * paused). Pausing a paused endpoint changes nothing.
 */
export async function pauseEndpoint(organization_id: string, endpoint_id: string): Promise<EndpointView> {
  const before = await existing(organization_id, endpoint_id);
  const doc = before.paused_at ? before : await updateEndpoint(organization_id, endpoint_id, { paused_at: new Date() });
  if (!doc) return viewEndpoint(await existing(organization_id, endpoint_id));
  noteChange('paused', Boolean(before.paused_at), true);
  return viewEndpoint(doc);
}

/**
 * Resumes the endpoint: every delivery still queued gets a full retry window from now (the pause
 * did not use it up: `resumed_at`), and its actor is woken to send what is due. Resuming one not paused only
 * wakes its actor.
 */
export async function resumeEndpoint(organization_id: string, endpoint_id: string): Promise<EndpointView> {
  const before = await existing(organization_id, endpoint_id);
  // `resumed_at` extends every queued delivery's window (actor.ts), with no write per delivery.
  const doc = before.paused_at
    ? await updateEndpoint(organization_id, endpoint_id, { resumed_at: new Date() }, ['paused_at'])
    : before;
  if (!doc) return viewEndpoint(await existing(organization_id, endpoint_id));
  await wakeEndpoint(organization_id, endpoint_id, true);
  noteChange('paused', Boolean(before.paused_at), false);
  return viewEndpoint(doc);
}

/**
 * Queues again the endpoint's ended deliveries (succeeded and failed, or failed only) first queued
 * in [since, until), oldest first, at most REPLAY_LIMIT: each is sent again with the same
 * webhook-id and a new retry window. Deliveries still queued are left as they are. `next_since`:
 * more remain, ask again from there.
 */
export async function replayEndpoint(
  organization_id: string,
  endpoint_id: string,
  range: { since: Date; until?: Date; failed_only: boolean },
): Promise<{ queued: number; next_since: string | null }> {
  const until = range.until ?? new Date();
  if (range.since >= until) throw invalid('since', 'since must be before until (default: now)');
  await existing(organization_id, endpoint_id);
  const found = await endedDeliveries(endpoint_id, range.since, until, range.failed_only, REPLAY_LIMIT + 1);
  const batch = found.slice(0, REPLAY_LIMIT);
  const queued = await requeue(
    batch.map((d) => d._id),
    retryWindowMs(),
  );
  if (queued) await wakeEndpoint(organization_id, endpoint_id, true);
  const next = found.length > REPLAY_LIMIT ? found[REPLAY_LIMIT].created_at : null;
  return { queued, next_since: next ? new Date(next).toISOString() : null };
}

export interface EndpointStats {
  endpoint_id: string;
  state: 'active' | 'paused' | 'disabled';
  backlog: number;
  oldest_undelivered_at: string | null;
  oldest_undelivered_age_seconds: number | null;
  last_24h: { attempts: number; succeeded: number; failed: number; success_rate: number | null };
  attempts_total: { succeeded: number; failed: number };
  last_success_at: string | null;
  last_error: { at: string; status: number | null; error: string | null; delivery_id: string } | null;
}

/** The endpoint's queue as an operator sees it (attempt counts lag by up to a second). */
export async function endpointStats(organization_id: string, endpoint_id: string): Promise<EndpointStats> {
  const e = await existing(organization_id, endpoint_id);
  const now = Date.now();
  const [backlog, queue, hours] = await Promise.all([
    backlogOf(endpoint_id),
    queueOf(endpoint_id),
    hoursOf(endpoint_id, new Date(Math.floor(now / HOUR_MS) * HOUR_MS - 23 * HOUR_MS)),
  ]);
  const succeeded = hours.reduce((n, h) => n + h.succeeded, 0);
  const failed = hours.reduce((n, h) => n + h.failed, 0);
  const last = queue?.last_error;
  return {
    endpoint_id,
    state: !e.enabled ? 'disabled' : e.paused_at ? 'paused' : 'active',
    backlog: backlog.size,
    oldest_undelivered_at: backlog.oldest ? new Date(backlog.oldest).toISOString() : null,
    oldest_undelivered_age_seconds: backlog.oldest
      ? Math.max(0, Math.round((now - new Date(backlog.oldest).getTime()) / 1000))
      : null,
    last_24h: {
      attempts: succeeded + failed,
      succeeded,
      failed,
      success_rate: succeeded + failed ? Math.round((succeeded / (succeeded + failed)) * 10_000) / 10_000 : null,
    },
    attempts_total: { succeeded: queue?.succeeded ?? 0, failed: queue?.failed ?? 0 },
    last_success_at: queue?.last_success_at ? new Date(queue.last_success_at).toISOString() : null,
    last_error: last
      ? {
          at: new Date(last.at).toISOString(),
          status: last.status ?? null,
          error: last.error ?? null,
          delivery_id: last.delivery_id,
        }
      : null,
  };
}

export interface EndpointMetric {
  organization_id: string;
  endpoint_id: string;
  backlog: number;
  oldest_undelivered_seconds: number;
  paused: boolean;
  succeeded: number;
  failed: number;
}

/** Every endpoint's queue for `/metrics`: three reads, whatever the number of endpoints. */
export async function endpointMetrics(): Promise<EndpointMetric[]> {
  const now = Date.now();
  const [waiting, all, paused] = await Promise.all([backlogs(), queues(), pausedEndpoints()]);
  const byEndpoint = new Map(waiting.map((w) => [w.endpoint_id, w]));
  return all.map((q) => {
    const w = byEndpoint.get(q._id);
    return {
      organization_id: q.organization_id,
      endpoint_id: q._id,
      backlog: w?.size ?? 0,
      oldest_undelivered_seconds: w?.oldest ? Math.max(0, (now - new Date(w.oldest).getTime()) / 1000) : 0,
      paused: paused.has(q._id),
      succeeded: q.succeeded ?? 0,
      failed: q.failed ?? 0,
    };
  });
}
