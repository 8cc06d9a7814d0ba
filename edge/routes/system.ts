import type { H3Event } from 'h3';
import { z } from 'zod';

import { config } from '../../activities/core/config.ts';
import { check, freshPollers, mongoHealthy, POLLER_FRESH_MS, storageHealthy } from '../../activities/core/health.ts';
import { createLogger, type Logger } from '../../activities/core/logger.ts';
import { taskQueue, temporal, temporalHealthy } from '../../workers/runs/client.ts';
import { LEVEL, optionalPrincipal } from '../auth.ts';
import { defineRoute, Reply } from '../http.ts';

const healthResponse = z.object({
  status: z.enum(['ok', 'degraded']),
  checks: z.object({ temporal: z.string(), mongodb: z.string(), storage: z.string() }),
});

let logger: Logger | undefined;
const lastLogged = new Map<string, string>(); // per route: what its failing checks were

/**
 * Why a check fails names internal hosts and ports: anonymous callers (load balancers, anyone) and
 * organizations' keys, admins included (tenants, not operators of the platform), read a fixed
 * `error: unavailable`; a system_admin key presented with the probe reads the reason, and the log
 * has it (once per change, not per probe).
 */
async function shown<T extends Record<string, string>>(event: H3Event, route: string, checks: T): Promise<T> {
  const failing = Object.entries(checks).filter(([, v]) => v !== 'ok');
  const text = JSON.stringify(failing);
  if (text !== (lastLogged.get(route) ?? '[]')) {
    lastLogged.set(route, text);
    logger ??= createLogger('edge', config().LOG_LEVEL);
    if (failing.length)
      logger.warn(
        { route, checks: Object.fromEntries(failing) },
        `${route}: ${failing.map(([k, v]) => `${k} ${v}`).join('; ')}`,
      );
    else logger.info({ route }, `${route}: every check is ok again`);
  }
  if (!failing.length) return checks;
  // The key is read from the store, which may be what is down: after 2 s the caller is anonymous.
  const principal = await Promise.race([
    optionalPrincipal(event),
    new Promise<undefined>((r) => setTimeout(() => r(undefined), 2000).unref()),
  ]);
  if (principal && principal.level >= LEVEL.sysadmin) return checks;
  return Object.fromEntries(Object.entries(checks).map(([k, v]) => [k, v === 'ok' ? v : 'error: unavailable'])) as T;
}

const serverChecks = async () => {
  const [temporal, mongodb, storage] = await Promise.all([
    check(temporalHealthy),
    check(mongoHealthy),
    check(storageHealthy),
  ]);
  return { temporal, mongodb, storage };
};

defineRoute({
  method: 'GET',
  paths: ['/health'],
  statuses: { 503: { description: 'Degraded: a check failed (same body)', answer: true } },
  tag: 'system',
  summary:
    'Liveness: checks Temporal, MongoDB and object storage for real; 503 names what fails (workers: GET /health/ready), why only to a system_admin key',
  auth: 'none',
  response: healthResponse,
  handler: async ({ event }) => {
    const checks = await shown(event, '/health', await serverChecks());
    const ok = Object.values(checks).every((v) => v === 'ok');
    return new Reply(ok ? 200 : 503, { status: ok ? 'ok' : 'degraded', checks });
  },
});

const readyResponse = z.object({
  status: z.enum(['ready', 'not_ready']),
  task_queue: z.string(),
  checks: z.object({
    temporal: z.string(),
    mongodb: z.string(),
    storage: z.string(),
    workflow_pollers: z.string(),
    activity_pollers: z.string(),
  }),
  pollers: z
    .object({ workflow: z.number().int(), activity: z.number().int() })
    .describe(`workers seen polling in the last ${POLLER_FRESH_MS / 1000} s`),
  missing: z.array(z.string()).describe('the checks that fail'),
});

/** The servers, and whether a worker polls each task queue lately: what a load balancer asks before it sends work. */
async function readiness(event: H3Event) {
  const queue = taskQueue();
  const pollers = { workflow: 0, activity: 0 };
  const pollerCheck = (type: keyof typeof pollers) =>
    check(async () => {
      const c = await temporal();
      pollers[type] = await freshPollers(c.connection.workflowService, config().TEMPORAL_NAMESPACE, queue, type);
      if (!pollers[type])
        throw new Error(`no worker polled the ${type} task queue ${queue} in the last ${POLLER_FRESH_MS / 1000} s`);
    });
  const [servers, workflow_pollers, activity_pollers] = await Promise.all([
    serverChecks(),
    pollerCheck('workflow'),
    pollerCheck('activity'),
  ]);
  const checks = await shown(event, '/health/ready', { ...servers, workflow_pollers, activity_pollers });
  const missing = Object.entries(checks)
    .filter(([, v]) => v !== 'ok')
    .map(([k]) => k);
  const ready = missing.length === 0;
  return {
    ready,
    status: ready ? ('ready' as const) : ('not_ready' as const),
    task_queue: queue,
    checks,
    pollers,
    missing,
  };
}

defineRoute({
  method: 'GET',
  paths: ['/health/ready'],
  statuses: { 503: { description: 'Not ready (same body)', answer: true } },
  tag: 'system',
  summary:
    'Readiness: every server answers and a worker polls the task queue (workflow and activity side); 503 names what is missing, why only to a system_admin key',
  auth: 'none',
  response: readyResponse,
  handler: async ({ event }) => {
    const { ready, ...answer } = await readiness(event);
    return new Reply(ready ? 200 : 503, answer);
  },
});
