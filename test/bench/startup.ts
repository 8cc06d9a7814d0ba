/**
 * Start-up part of `npm run bench` (section `startup`): how long a worker takes from its start to
 * polling its task queue, and the edge to answering, when run compiled (dist/, `npm run build`:
 * plain node, the prebuilt workflow bundle) and from the sources (tsx's loader, the SDK bundling
 * the workflows at start). Runs alternate between the two on the platform's own servers, each worker
 * on a fresh task queue. Also each one's resident memory once started.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

import { freePort } from '../../tools/infra.ts';
import { processArgs } from '../../tools/processes.ts';

const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 5);
const root = fileURLToPath(new URL('../..', import.meta.url));

type Mode = 'compiled' | 'sources';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rssMb = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

/** Starts the process and resolves when `ready()` says so, with the elapsed ms and its memory then. */
function timeStart(
  mode: Mode,
  name: 'edge' | 'worker',
  env: Record<string, string>,
  ready: (out: string) => Promise<boolean> | boolean,
): Promise<{ ms: number; mb: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, processArgs(name, mode), {
      cwd: root,
      env: { ...process.env, ...env, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let done = false;
    const finish = (r: { ms: number; mb: number } | Error) => {
      if (done) return;
      done = true;
      clearInterval(poll);
      child.kill('SIGKILL');
      if (r instanceof Error) reject(r);
      else resolve(r);
    };
    const check = async () => {
      if (await ready(out)) finish({ ms: performance.now() - t0, mb: rssMb(child.pid!) });
    };
    child.stdout!.on('data', (d: Buffer) => ((out += d), void check()));
    child.stderr!.on('data', (d: Buffer) => ((out += d), void check()));
    const poll = setInterval(() => void check().catch(() => undefined), 20);
    child.once('exit', (code) => finish(new Error(`${mode} ${name} exited (${code}): ${out.slice(-500)}`)));
  });
}

export async function benchStartup(platformEnv: Record<string, string>): Promise<string[]> {
  if (!fs.existsSync(new URL('../../dist/workers/worker.js', import.meta.url)))
    return ['startup: no build in dist/ (run npm run build first): section skipped'];
  const results: Record<Mode, { worker: number[]; workerMb: number[]; edge: number[]; edgeMb: number[] }> = {
    compiled: { worker: [], workerMb: [], edge: [], edgeMb: [] },
    sources: { worker: [], workerMb: [], edge: [], edgeMb: [] },
  };
  for (let i = 0; i < RUNS; i += 1) {
    for (const mode of (i % 2 ? ['sources', 'compiled'] : ['compiled', 'sources']) as Mode[]) {
      const queue = `bench-startup-${mode}-${i}-${Date.now()}`;
      const w = await timeStart(mode, 'worker', { ...platformEnv, TEMPORAL_TASK_QUEUE: queue }, (out) =>
        out.includes('polling task queue'),
      );
      results[mode].worker.push(w.ms);
      results[mode].workerMb.push(w.mb);
      const port = await freePort();
      const e = await timeStart(mode, 'edge', { ...platformEnv, PORT: String(port) }, async () => {
        try {
          return (await fetch(`http://127.0.0.1:${port}/health`)).status > 0;
        } catch {
          return false;
        }
      });
      results[mode].edge.push(e.ms);
      results[mode].edgeMb.push(e.mb);
    }
  }
  const c = results.compiled;
  const s = results.sources;
  const row = (what: string, a: number[], b: number[], unit: string) =>
    `  ${what.padEnd(34)} ${median(a).toFixed(0).padStart(6)} ${unit}  ${median(b).toFixed(0).padStart(6)} ${unit}   ${(median(a) / median(b)).toFixed(2)}×`;
  return [
    `startup: medians of ${RUNS} starts each, alternating (compiled: node dist/, prebuilt workflow bundle; sources: tsx)`,
    `  ${''.padEnd(34)} ${'compiled'.padStart(9)}  ${'sources'.padStart(9)}   compiled/sources`,
    row('worker, start to polling', c.worker, s.worker, 'ms'),
    row('worker memory at polling', c.workerMb, s.workerMb, 'MB'),
    row('edge, start to answering', c.edge, s.edge, 'ms'),
    row('edge memory then', c.edgeMb, s.edgeMb, 'MB'),
  ];
}
