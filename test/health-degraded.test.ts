/**
 * /health probes each server for real: an edge whose Temporal and MinIO addresses lead nowhere
 * answers 503 naming those checks, while MongoDB (the suite's real server) stays "ok".
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../workers/infra';
import { adminKey } from './helpers/api';

let edge: ChildProcess;
let url: string;

beforeAll(async () => {
  const env = inject('platformEnv');
  const [port, deadTemporal, deadMinio] = [await freePort(), await freePort(), await freePort()];
  url = `http://127.0.0.1:${port}`;
  edge = spawn(fileURLToPath(new URL('../node_modules/.bin/tsx', import.meta.url)), [fileURLToPath(new URL('../workers/edge.ts', import.meta.url))], {
    env: { ...process.env, ...env, PORT: String(port), TEMPORAL_ADDRESS: `127.0.0.1:${deadTemporal}`, MINIO_ENDPOINT: `127.0.0.1:${deadMinio}`, PLATFORM_ADMIN_KEY: adminKey() },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let i = 0; i < 150; i += 1) {
    try {
      await fetch(`${url}/health`);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new Error('the second edge did not start');
});

afterAll(() => {
  edge?.kill('SIGTERM');
});

describe('GET /health with servers down', () => {
  it('answers 503 and names what fails', async () => {
    const res = await fetch(`${url}/health`);
    expect(res.status).toBe(503);
    const body = (await res.json()) as { status: string; checks: Record<string, string> };
    expect(body.status).toBe('degraded');
    expect(body.checks.mongodb).toBe('ok');
    expect(body.checks.temporal).toMatch(/^error: /);
    expect(body.checks.storage).toMatch(/^error: /);
  });
});
