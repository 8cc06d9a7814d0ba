import { z } from 'zod';
import { check, freshPollers, mongoHealthy, storageHealthy, POLLER_FRESH_MS } from '../../activities/health';
import { config } from '../../activities/config';
import { defineRoute, Reply } from '../http';
import { taskQueue, temporal, temporalHealthy } from '../temporal';

const healthResponse = z.object({
  status: z.enum(['ok', 'degraded']),
  checks: z.object({ temporal: z.string(), mongodb: z.string(), storage: z.string() }),
});

const serverChecks = async () => {
  const [temporal, mongodb, storage] = await Promise.all([check(temporalHealthy), check(mongoHealthy), check(storageHealthy)]);
  return { temporal, mongodb, storage };
};

defineRoute({
  method: 'GET',
  paths: ['/health'],
  tag: 'system',
  summary: 'Liveness: checks Temporal, MongoDB and object storage for real; 503 names what fails (workers: GET /health/ready)',
  auth: 'none',
  response: healthResponse,
  handler: async () => {
    const checks = await serverChecks();
    const ok = Object.values(checks).every((v) => v === 'ok');
    return new Reply(ok ? 200 : 503, { status: ok ? 'ok' : 'degraded', checks });
  },
});

const readyResponse = z.object({
  status: z.enum(['ready', 'not_ready']),
  task_queue: z.string(),
  checks: z.object({ temporal: z.string(), mongodb: z.string(), storage: z.string(), workflow_pollers: z.string(), activity_pollers: z.string() }),
  pollers: z.object({ workflow: z.number().int(), activity: z.number().int() }).describe(`workers seen polling in the last ${POLLER_FRESH_MS / 1000} s`),
  missing: z.array(z.string()).describe('the checks that fail'),
});

defineRoute({
  method: 'GET',
  paths: ['/health/ready'],
  tag: 'system',
  summary: 'Readiness: every server answers and a worker polls the task queue (workflow and activity side); 503 names what is missing',
  auth: 'none',
  response: readyResponse,
  handler: async () => {
    const queue = taskQueue();
    const pollers = { workflow: 0, activity: 0 };
    const pollerCheck = (type: keyof typeof pollers) =>
      check(async () => {
        const c = await temporal();
        pollers[type] = await freshPollers(c.connection.workflowService, config().TEMPORAL_NAMESPACE, queue, type);
        if (!pollers[type]) throw new Error(`no worker polled the ${type} task queue ${queue} in the last ${POLLER_FRESH_MS / 1000} s`);
      });
    const [servers, workflow_pollers, activity_pollers] = await Promise.all([serverChecks(), pollerCheck('workflow'), pollerCheck('activity')]);
    const checks = { ...servers, workflow_pollers, activity_pollers };
    const missing = Object.entries(checks).filter(([, v]) => v !== 'ok').map(([k]) => k);
    const ready = missing.length === 0;
    return new Reply(ready ? 200 : 503, { status: ready ? 'ready' : 'not_ready', task_queue: queue, checks, pollers, missing });
  },
});
