/**
 * The image's health check (`node dist/workers/healthcheck.js`), one for both processes:
 *  - a worker container: healthy while the worker's heartbeat file (WORKER_HEARTBEAT_FILE) was
 *    touched in the last 30 s (workers/worker.ts touches it every 10 s while it runs);
 *  - an edge container (no heartbeat file): healthy when GET /health on its port answers 200 with
 *    the platform's checks, i.e. the edge answers and reaches Temporal, MongoDB and object storage.
 *    A worker that has not written its file yet (starting) is probed the same way and fails.
 * Exit 0 healthy, 1 not (Docker's convention). Reads the environment only: no config, no servers.
 */
import fs from 'node:fs';

const STALE_MS = 30_000;

async function main(): Promise<string> {
  const heartbeat = process.env.WORKER_HEARTBEAT_FILE;
  if (heartbeat && fs.existsSync(heartbeat)) {
    const age = Date.now() - fs.statSync(heartbeat).mtimeMs;
    if (age > STALE_MS) throw new Error(`worker: heartbeat ${Math.round(age / 1000)} s old`);
    return `worker: heartbeat ${Math.round(age / 1000)} s old`;
  }
  const port = process.env.PORT || '8000';
  const res = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(4000) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`edge: /health answered ${res.status} ${text}`);
  // the platform's own answer, not whatever else might listen on that port
  const body = JSON.parse(text) as { status?: string; checks?: Record<string, string> };
  if (body.status !== 'ok' || !body.checks?.temporal)
    throw new Error(`edge: /health answered 200 without the platform's checks: ${text.slice(0, 200)}`);
  return 'edge: /health answered 200';
}

main().then(
  (line) => {
    process.stdout.write(`${line}\n`);
    process.exit(0);
  },
  (err) => {
    process.stdout.write(`unhealthy: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
