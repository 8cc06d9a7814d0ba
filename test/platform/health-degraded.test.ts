/**
 * /health and /health/ready probe for real. An edge whose Temporal and MinIO addresses lead nowhere
 * answers 503 naming those checks, while MongoDB (the suite's real server) stays "ok". An edge on
 * a task queue no worker polls is alive (/health 200) but not ready (503 naming the pollers) until
 * a worker polls its queue.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { freePort } from '../../tools/infra.ts';
import { adminKey, newTenant, unique } from '../helpers/api.ts';
import { startExtraEdge, startPlatformProcess, stopEdges } from '../helpers/edge-process.ts';

const get = async (url: string, key?: string) => {
  const res = await fetch(url, key ? { headers: { authorization: `Bearer ${key}` } } : {});
  return {
    status: res.status,
    body: (await res.json()) as {
      status: string;
      checks: Record<string, string>;
      missing?: string[];
      pollers?: Record<string, number>;
    },
  };
};

afterAll(stopEdges);

describe('GET /health and /health/ready with servers down', () => {
  let url: string;
  beforeAll(async () => {
    const [deadTemporal, deadMinio] = [await freePort(), await freePort()];
    url = await startExtraEdge({
      TEMPORAL_ADDRESS: `127.0.0.1:${deadTemporal}`,
      MINIO_ENDPOINT: `127.0.0.1:${deadMinio}`,
    });
  });

  it('/health answers 503 and names what fails; why (hosts and ports) only to a system_admin key', async () => {
    const { status, body } = await get(`${url}/health`);
    expect(status).toBe(503);
    expect(body.status).toBe('degraded');
    expect(body.checks).toEqual({ temporal: 'error: unavailable', mongodb: 'ok', storage: 'error: unavailable' });
    expect(JSON.stringify(body)).not.toMatch(/127\.0\.0\.1|:\d{2,5}\b/);
    // a wrong key is answered like no key (not 401: the probe needs none)
    expect((await get(`${url}/health`, `pk_${'x'.repeat(43)}`)).body.checks.temporal).toBe('error: unavailable');
    const admin = await get(`${url}/health`, adminKey());
    expect(admin.status).toBe(503);
    expect(admin.body.checks.mongodb).toBe('ok');
    expect(admin.body.checks.temporal).toMatch(/^error: .+/);
    expect(admin.body.checks.temporal).not.toBe('error: unavailable');
    expect(admin.body.checks.storage).not.toBe('error: unavailable');
    // an organization's admin is a tenant, not an operator of the platform: no hosts or ports
    const tenant = await get(`${url}/health`, (await newTenant()).adminKey);
    expect(tenant.status).toBe(503);
    expect(tenant.body.checks).toEqual({
      temporal: 'error: unavailable',
      mongodb: 'ok',
      storage: 'error: unavailable',
    });
  });

  it('/health/ready answers 503 naming the servers and the pollers it cannot see', async () => {
    const { status, body } = await get(`${url}/health/ready`);
    expect(status).toBe(503);
    expect(body.status).toBe('not_ready');
    expect(body.checks.mongodb).toBe('ok');
    expect(body.missing).toEqual(['temporal', 'storage', 'workflow_pollers', 'activity_pollers']);
    for (const k of body.missing!) expect(body.checks[k]).toBe('error: unavailable');
    const admin = await get(`${url}/health/ready`, adminKey());
    for (const k of body.missing!) expect(admin.body.checks[k]).toMatch(/^error: .+/);
    expect(admin.body.checks.temporal).not.toBe('error: unavailable');
  });
});

describe('GET /health/ready on a task queue no worker polls', () => {
  const queue = unique('ready');
  let url: string;
  beforeAll(async () => {
    url = await startExtraEdge({ TEMPORAL_TASK_QUEUE: queue });
  });

  it('is alive but not ready, naming the pollers, until a worker polls the queue', async () => {
    expect((await get(`${url}/health`)).status).toBe(200);
    const before = await get(`${url}/health/ready`);
    expect(before.status).toBe(503);
    expect(before.body).toMatchObject({
      status: 'not_ready',
      missing: ['workflow_pollers', 'activity_pollers'],
      pollers: { workflow: 0, activity: 0 },
    });
    expect(before.body.checks.workflow_pollers).toBe('error: unavailable');
    const detail = await get(`${url}/health/ready`, adminKey());
    expect(detail.body.checks.workflow_pollers).toBe(
      `error: no worker polled the workflow task queue ${queue} in the last 70 s`,
    );
    expect(detail.body.checks.activity_pollers).toBe(
      `error: no worker polled the activity task queue ${queue} in the last 70 s`,
    );

    startPlatformProcess('worker', { TEMPORAL_TASK_QUEUE: queue });
    let after = before;
    for (let i = 0; i < 300 && after.status !== 200; i += 1) {
      await new Promise((r) => setTimeout(r, 300));
      after = await get(`${url}/health/ready`);
    }
    expect(after.status).toBe(200);
    expect(after.body).toMatchObject({ status: 'ready', missing: [], pollers: { workflow: 1, activity: 1 } });
  }, 120_000);
});
