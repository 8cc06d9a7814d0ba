/**
 * /health and /health/ready probe for real. An edge whose Temporal and MinIO addresses lead nowhere
 * answers 503 naming those checks, while MongoDB (the suite's real server) stays "ok". An edge on
 * a task queue no worker polls is alive (/health 200) but not ready (503 naming the pollers) until
 * a worker polls its queue.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../workers/infra';
import { adminKey, unique } from './helpers/api';

const root = fileURLToPath(new URL('..', import.meta.url));
const children: ChildProcess[] = [];

/** A process of the platform (edge or worker) with the suite's servers and some changes. */
function run(script: string, env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: root,
    env: { ...process.env, ...inject('platformEnv'), PLATFORM_ADMIN_KEY: adminKey(), ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  return child;
}

async function startEdge(env: Record<string, string>): Promise<string> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = run('workers/edge.ts', { ...env, PORT: String(port) });
  for (let i = 0; i < 300; i += 1) {
    if (child.exitCode !== null) break;
    try {
      await fetch(`${url}/health`);
      return url;
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new Error('the second edge did not start');
}

const get = async (url: string) => {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as { status: string; checks: Record<string, string>; missing?: string[]; pollers?: Record<string, number> } };
};

afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
});

describe('GET /health and /health/ready with servers down', () => {
  let url: string;
  beforeAll(async () => {
    const [deadTemporal, deadMinio] = [await freePort(), await freePort()];
    url = await startEdge({ TEMPORAL_ADDRESS: `127.0.0.1:${deadTemporal}`, MINIO_ENDPOINT: `127.0.0.1:${deadMinio}` });
  });

  it('/health answers 503 and names what fails', async () => {
    const { status, body } = await get(`${url}/health`);
    expect(status).toBe(503);
    expect(body.status).toBe('degraded');
    expect(body.checks.mongodb).toBe('ok');
    expect(body.checks.temporal).toMatch(/^error: /);
    expect(body.checks.storage).toMatch(/^error: /);
  });

  it('/health/ready answers 503 naming the servers and the pollers it cannot see', async () => {
    const { status, body } = await get(`${url}/health/ready`);
    expect(status).toBe(503);
    expect(body.status).toBe('not_ready');
    expect(body.checks.mongodb).toBe('ok');
    expect(body.missing).toEqual(['temporal', 'storage', 'workflow_pollers', 'activity_pollers']);
    for (const k of body.missing!) expect(body.checks[k]).toMatch(/^error: /);
  });
});

describe('GET /health/ready on a task queue no worker polls', () => {
  const queue = unique('ready');
  let url: string;
  beforeAll(async () => {
    url = await startEdge({ TEMPORAL_TASK_QUEUE: queue });
  });

  it('is alive but not ready, naming the pollers, until a worker polls the queue', async () => {
    expect((await get(`${url}/health`)).status).toBe(200);
    const before = await get(`${url}/health/ready`);
    expect(before.status).toBe(503);
    expect(before.body).toMatchObject({ status: 'not_ready', missing: ['workflow_pollers', 'activity_pollers'], pollers: { workflow: 0, activity: 0 } });
    expect(before.body.checks.workflow_pollers).toBe(`error: no worker polled the workflow task queue ${queue} in the last 70 s`);
    expect(before.body.checks.activity_pollers).toBe(`error: no worker polled the activity task queue ${queue} in the last 70 s`);

    run('workers/worker.ts', { TEMPORAL_TASK_QUEUE: queue });
    let after = before;
    for (let i = 0; i < 300 && after.status !== 200; i += 1) {
      await new Promise((r) => setTimeout(r, 300));
      after = await get(`${url}/health/ready`);
    }
    expect(after.status).toBe(200);
    expect(after.body).toMatchObject({ status: 'ready', missing: [], pollers: { workflow: 1, activity: 1 } });
  }, 120_000);
});
