/**
 * The image (Dockerfile) without Docker: its stages say what the issue asks (compiled JavaScript,
 * production dependencies only, the node user, a health check), and the health check it runs
 * answers for an edge and for a worker, on the suite's real processes.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { freePort } from '../../tools/infra.ts';
import { processArgs } from '../../tools/processes.ts';
import { edgeUrl, unique } from '../helpers/api.ts';
import { startPlatformProcess, stopEdges } from '../helpers/edge-process.ts';

afterAll(stopEdges);

const fileRoot = () => path.dirname(new URL('../../package.json', import.meta.url).pathname);

const dockerfile = fs.readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8');
/** The Dockerfile's stages, without comments, by name (the last one is `runtime`). */
const stages = (() => {
  const lines = dockerfile
    .split('\n')
    .filter((l) => !l.trimStart().startsWith('#'))
    .join('\n');
  const parts = lines.split(/^FROM /m).slice(1);
  return new Map(
    parts.map((p, i) => [/^\S+ AS (\S+)/i.exec(p)?.[1] ?? (i === parts.length - 1 ? 'runtime' : `stage${i}`), p]),
  );
})();

/** Runs the image's health check with this environment: its exit code and line. */
function healthcheck(env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, processArgs('healthcheck'), {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d));
    child.stderr!.on('data', (d: Buffer) => (out += d));
    child.once('exit', (code) => resolve({ code, out: out.trim() }));
  });
}

describe('the Dockerfile', () => {
  it('builds in its own stage and runs compiled JavaScript with production dependencies only, as node, with a health check', () => {
    expect([...stages.keys()]).toEqual(['build', 'deps', 'speech', 'runtime']);
    expect(stages.get('build')).toMatch(/RUN npm ci\b/);
    expect(stages.get('build')).toMatch(/RUN npm run build\b/);
    expect(stages.get('deps')).toMatch(/npm ci --omit=dev/);
    const runtime = stages.get('runtime')!;
    expect(runtime).not.toMatch(/npm (ci|install)/);
    expect(runtime).not.toMatch(/tsx|COPY (activities|edge|workflows|workers) /);
    expect(runtime).toMatch(/COPY --from=deps \/app\/node_modules \.\/node_modules/);
    expect(runtime).toMatch(/COPY --from=build \/app\/dist \.\/dist/);
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime.indexOf('USER node')).toBeLessThan(runtime.indexOf('CMD'));
    expect(runtime).toMatch(/^HEALTHCHECK .*CMD \["node", "dist\/workers\/healthcheck\.js"\]$/m);
    expect(runtime).toMatch(/^CMD \["node", "dist\/workers\/edge\.js"\]$/m);
    expect(runtime).toMatch(/^ENV WORKER_HEARTBEAT_FILE=/m);
    // reachable from outside the container, its generated keys in the volume the node user owns
    expect(runtime).toMatch(/^ENV HOST=0\.0\.0\.0 PORT=8000 DATA_DIR=\/data$/m);
    expect(runtime).toMatch(/chown node:node \/data/);
  });

  it('is what compose runs: the compiled edge and worker, whose sources the build compiles', () => {
    const root = fileRoot();
    const tracked = spawnSync('git', ['ls-files', 'workers'], { cwd: root, encoding: 'utf8' }).stdout;
    for (const script of ['edge', 'worker', 'healthcheck']) expect(tracked).toContain(`workers/${script}.ts`);
    const compose = fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
    expect(compose).toContain('command: ["node", "dist/workers/worker.js"]');
    expect(compose).toContain('command: ["node", "dist/workers/edge.js"]');
  });
});

describe("the image's health check", () => {
  it('calls an edge healthy when GET /health answers 200, and not when nothing answers on its port', async () => {
    const port = new URL(edgeUrl()).port;
    const up = await healthcheck({ PORT: port });
    expect(up, up.out).toEqual({ code: 0, out: 'edge: /health answered 200' });
    const down = await healthcheck({ PORT: String(await freePort()) });
    expect(down.code, down.out).toBe(1);
    expect(down.out).toMatch(/^unhealthy: /);
  });

  it('calls a worker healthy while its heartbeat file is fresh, and the worker removes it when stopped', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'heartbeat-'));
    const file = path.join(dir, 'worker.alive');
    const worker = startPlatformProcess('worker', {
      TEMPORAL_TASK_QUEUE: unique('heartbeat'),
      WORKER_HEARTBEAT_FILE: file,
    });
    for (let i = 0; i < 600 && !fs.existsSync(file); i += 1) await new Promise((r) => setTimeout(r, 100));
    expect(fs.existsSync(file), 'the worker wrote its heartbeat once polling').toBe(true);
    const fresh = await healthcheck({ WORKER_HEARTBEAT_FILE: file });
    expect(fresh.code, fresh.out).toBe(0);
    expect(fresh.out).toMatch(/^worker: heartbeat \d+ s old$/);
    // a worker whose file went stale (event loop held, or no longer running) is unhealthy
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(file, old, old);
    const stale = await healthcheck({ WORKER_HEARTBEAT_FILE: file });
    expect(stale.code, stale.out).toBe(1);
    expect(stale.out).toMatch(/^unhealthy: worker: heartbeat 6\d s old$/);
    // the next beat freshens it again (every 10 s)
    for (let i = 0; i < 150 && Date.now() - fs.statSync(file).mtimeMs > 30_000; i += 1)
      await new Promise((r) => setTimeout(r, 100));
    expect((await healthcheck({ WORKER_HEARTBEAT_FILE: file })).code).toBe(0);
    worker.kill('SIGTERM');
    await new Promise((r) => worker.once('exit', r));
    expect(fs.existsSync(file), 'a stopped worker leaves no heartbeat behind').toBe(false);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
