/**
 * The edge's Prometheus metrics (`GET /metrics`, text exposition format): requests by route
 * pattern, method and status, their latency, the workflows the edge starts and awaits, the
 * time of each database command the edge sends, by collection and command, the cluster's
 * webhook delivery attempts by outcome, and each webhook endpoint's queue (backlog, oldest
 * undelivered, paused, attempts). Served only to `Authorization: Bearer <METRICS_TOKEN>`
 * (unset: 404), since they name every route's traffic and every organization's webhook outcomes.
 * The Temporal worker's own metrics are served by each worker (WORKER_METRICS_PORT).
 */
import { createHash, timingSafeEqual } from 'node:crypto';

import { getRequestHeader } from 'h3';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { z } from 'zod';

import { config } from '../activities/core/config.ts';
import { onCommandTimed } from '../activities/core/db/index.ts';
import { PlatformError } from '../activities/core/errors.ts';
import { deliveryOutcomes, type EndpointMetric, endpointMetrics } from '../activities/events/index.ts';
import { isRefusedRun } from '../workers/runs/failures.ts';
import { defineRoute } from './http.ts';

const registry = new Registry();
collectDefaultMetrics({ register: registry });

const labels = ['method', 'route', 'status'] as const;
const requests = new Counter({
  name: 'http_requests_total',
  help: 'Requests answered by the edge (route: the path pattern; unmatched: no route)',
  labelNames: labels,
  registers: [registry],
});
const latency = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'Time from the request to the last byte of the answer',
  labelNames: labels,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [registry],
});
const starts = new Counter({
  name: 'workflow_starts_total',
  help: 'Workflow starts the edge asked for (outcome: started; already_started: the id had a run, which is reused; error: refused)',
  labelNames: ['workflow_type', 'outcome'],
  registers: [registry],
});
const failures = new Counter({
  name: 'workflow_failures_total',
  help: 'Runs the edge awaited that ended in failure (reason: rejected, the input was refused with a 4xx; failed: anything else, a server-side failure, timeout or termination)',
  labelNames: ['workflow_type', 'reason'],
  registers: [registry],
});

const dbCommands = new Histogram({
  name: 'db_command_duration_seconds',
  help: "Database commands this edge sent, from the driver's send to the answer (collection: '-' for commands on none; ok: false when the server refused it)",
  labelNames: ['collection', 'command', 'ok'],
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
  registers: [registry],
});
// Every worker's attempts are counted in the store (written once a second): each scrape reads the
// totals and adds what is new, so any edge reports the cluster's and the counter never goes back.
const seenOutcomes = new Map<string, number>();
new Counter({
  name: 'webhook_delivery_attempts_total',
  help: 'Webhook delivery attempts by every worker, by outcome (succeeded; failed_attempt: another is scheduled; gone: the receiver answered 410; gave_up: retries ran out or the endpoint was disabled)',
  labelNames: ['outcome'],
  registers: [registry],
  async collect() {
    const counts = await deliveryOutcomes().catch(() => undefined);
    if (!counts) return; // the store did not answer: the totals stay as last read
    for (const outcome of ['succeeded', 'failed_attempt', 'gone', 'gave_up']) {
      const total = counts[outcome] ?? 0;
      const added = total - (seenOutcomes.get(outcome) ?? 0);
      if (added > 0) this.inc({ outcome }, added);
      else this.inc({ outcome }, 0);
      seenOutcomes.set(outcome, Math.max(total, seenOutcomes.get(outcome) ?? 0));
    }
  },
});

// Each endpoint's queue: read once per scrape (a scrape collects the series below together).
let endpointsRead: Promise<EndpointMetric[] | undefined> | undefined;
const endpointRows = () =>
  (endpointsRead ??= endpointMetrics()
    .catch(() => undefined)
    .finally(() => (endpointsRead = undefined)));
const endpointLabels = ['organization_id', 'endpoint_id'] as const;
const endpointGauge = (name: string, help: string, value: (m: EndpointMetric) => number) =>
  new Gauge({
    name,
    help,
    labelNames: endpointLabels,
    registers: [registry],
    async collect() {
      const rows = await endpointRows();
      if (!rows) return; // the store did not answer: the values stay as last read
      this.reset();
      for (const m of rows) this.set({ organization_id: m.organization_id, endpoint_id: m.endpoint_id }, value(m));
    },
  });
endpointGauge(
  'webhook_endpoint_backlog',
  'Deliveries queued for the endpoint (due now or scheduled for a retry)',
  (m) => m.backlog,
);
endpointGauge(
  'webhook_endpoint_oldest_undelivered_seconds',
  'Age of the oldest delivery still queued for the endpoint (0: none)',
  (m) => m.oldest_undelivered_seconds,
);
endpointGauge('webhook_endpoint_paused', '1 while an admin has paused the endpoint', (m) => (m.paused ? 1 : 0));
// Totals kept in the store (like the outcomes above): a gauge of a count that only grows.
new Gauge({
  name: 'webhook_endpoint_attempts',
  help: "The endpoint's delivery attempts since it was created, by every worker (outcome: succeeded, failed)",
  labelNames: [...endpointLabels, 'outcome'],
  registers: [registry],
  async collect() {
    const rows = await endpointRows();
    if (!rows) return;
    this.reset();
    for (const m of rows) {
      const l = { organization_id: m.organization_id, endpoint_id: m.endpoint_id };
      this.set({ ...l, outcome: 'succeeded' }, m.succeeded);
      this.set({ ...l, outcome: 'failed' }, m.failed);
    }
  },
});

onCommandTimed((collection, command, ms, ok) => dbCommands.observe({ collection, command, ok: String(ok) }, ms / 1000));

export function observeRequest(method: string, route: string, status: number, seconds: number): void {
  const l = { method, route, status: String(status) };
  requests.inc(l);
  latency.observe(l, seconds);
}

export function countStart(workflow_type: string, outcome: 'started' | 'already_started' | 'error'): void {
  starts.inc({ workflow_type, outcome });
}

/** A run the edge awaited failed (a WorkflowFailedError): refused by a step, or failed. */
export function countFailure(workflow_type: string, err: unknown): void {
  failures.inc({ workflow_type, reason: isRefusedRun(err) ? 'rejected' : 'failed' });
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** `Authorization: Bearer <token>` names the metrics token: compared in constant time (of equal-length digests). */
function metricsTokenMatches(authorization: string | undefined, token: string): boolean {
  const given = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  return given !== undefined && timingSafeEqual(digest(given), digest(token));
}

defineRoute({
  method: 'GET',
  paths: ['/metrics'],
  tag: 'system',
  summary:
    "Prometheus metrics of this edge process (text exposition format): requests, latency, workflow starts and failures, database command times, and the cluster's webhook delivery attempts by outcome. Not an API key: Authorization: Bearer <METRICS_TOKEN>; served only when METRICS_TOKEN is set (else 404)",
  auth: 'none',
  statuses: {
    401: 'Without Authorization: Bearer <METRICS_TOKEN>, or with another token',
    404: 'Metrics are not served: METRICS_TOKEN is not set, or METRICS_ENABLED=false',
  },
  produces: 'text/plain; version=0.0.4; charset=utf-8',
  response: z.string(),
  handler: async ({ event }) => {
    const { METRICS_ENABLED, METRICS_TOKEN } = config();
    // Per-route traffic and every organization's webhook outcomes: never to anyone who asks.
    if (!METRICS_ENABLED || !METRICS_TOKEN) throw new PlatformError('not_found', 'Not found');
    if (!metricsTokenMatches(getRequestHeader(event, 'authorization'), METRICS_TOKEN)) {
      throw new PlatformError('unauthenticated', 'Metrics need Authorization: Bearer <METRICS_TOKEN>', undefined, {
        'WWW-Authenticate': 'Bearer realm="metrics"',
      });
    }
    return registry.metrics();
  },
});
