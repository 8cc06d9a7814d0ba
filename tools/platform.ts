/**
 * Launches the whole platform: infrastructure (found or started), the Temporal worker process(es)
 * and the edge process, and keeps them running: a worker or the edge that exits is started
 * again with a backoff, a server too (tools/supervise.ts). Used by `npm start` and by the test
 * suite, so tests run what users run. It returns once the edge reports ready (GET /health/ready:
 * every server answers and a worker polls the task queue).
 */
import { spawn } from 'node:child_process';

import { Connection } from '@temporalio/client';

import type { Config } from '../activities/core/config.ts';
import { freshPollers } from '../activities/core/health.ts';
import { buildConsole, SOURCES_CONSOLE_DIR } from './console-build.ts';
import { freePort, startInfra } from './infra.ts';
import { type PlatformProcess, processArgs, runMode } from './processes.ts';
import { GUARD, supervise, type Supervised } from './supervise.ts';

export interface LaunchOptions {
  cfg: Config;
  /** free ports for every server and the edge (tests) */
  freePorts?: boolean;
  ui?: boolean;
  /** extra environment for the worker and edge processes */
  env?: Record<string, string>;
  /** told of each process that exits without being asked to (it is restarted all the same) */
  onExit?: (name: string, code: number | null, signal: NodeJS.Signals | null) => void;
  /** called when a server died and could not be restarted: the caller should stop the platform */
  onFatal?: (reason: string) => void;
  /** where restarts are logged (default: stderr, prefixed "start: ") */
  log?: (line: string) => void;
  stdio?: 'inherit' | 'ignore';
  /** how long to wait for readiness (default 180 s) */
  readyTimeoutMs?: number;
}

export interface Platform {
  edgeUrl: string;
  temporalUi?: string;
  /** see Infra.storeMetricsUrl */
  storeMetricsUrl?: string;
  env: Record<string, string>;
  /** the supervised worker and edge processes (their current pids change on restarts) */
  processes: Supervised[];
  stop(): Promise<void>;
}

export async function launchPlatform(opts: LaunchOptions): Promise<Platform> {
  const { cfg } = opts;
  const log = opts.log ?? ((line: string) => process.stderr.write(`start: ${line}\n`));
  let fatal: string | undefined;
  const infra = await startInfra({
    cfg,
    freePorts: opts.freePorts,
    ui: opts.ui,
    onFatal: (reason) => {
      fatal = reason;
      opts.onFatal?.(reason);
    },
  });
  const port = opts.freePorts ? await freePort() : cfg.PORT;
  const env: Record<string, string> = {
    ...infra.env,
    ...opts.env,
    DATA_DIR: cfg.dataDir,
    PORT: String(port),
    HOST: cfg.HOST,
  };
  const processes: Supervised[] = [];
  let starting = true;
  let startupExit: string | undefined;
  let stopping = false;

  const startProcess = (name: string, which: PlatformProcess) => {
    const args = processArgs(which);
    processes.push(
      supervise({
        name,
        log,
        // Own process group: a Ctrl-C in the terminal reaches only the supervisor, which then
        // stops the edge, the workers and the servers in that order.
        spawn: () =>
          spawn('bash', [GUARD, String(process.pid), process.execPath, ...args], {
            env: { ...process.env, ...env },
            stdio: ['ignore', opts.stdio ?? 'inherit', opts.stdio ?? 'inherit'],
            detached: true,
          }),
        onExit: (code, signal) => {
          if (starting) startupExit ??= `${name} exited (${signal ?? `code ${code}`}) during start-up`;
          opts.onExit?.(name, code, signal);
        },
      }),
    );
  };

  const stop = async () => {
    if (stopping) return;
    stopping = true;
    for (const p of [...processes].reverse()) await p.stop();
    await infra.stop();
  };

  try {
    for (let i = 0; i < cfg.WORKER_COUNT; i += 1) startProcess(`worker ${i + 1}`, 'worker');
    // The edge run from the sources serves the console from client/console/dist: built first (a
    // fraction of a second), so it is the sources' own. The compiled edge serves dist/console.
    if (runMode() === 'sources') await buildConsole(SOURCES_CONSOLE_DIR);
    startProcess('edge', 'edge');
    const edgeUrl = `http://${cfg.HOST}:${port}`;
    await waitForReady(edgeUrl, opts.readyTimeoutMs ?? 180_000, () => startupExit ?? fatal, {
      address: env.TEMPORAL_ADDRESS,
      namespace: cfg.TEMPORAL_NAMESPACE,
      taskQueue: env.TEMPORAL_TASK_QUEUE ?? cfg.TEMPORAL_TASK_QUEUE,
    });
    starting = false;
    return { edgeUrl, temporalUi: infra.temporalUi, storeMetricsUrl: infra.storeMetricsUrl, env, processes, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * Waits for GET /health/ready to answer 200; the error names what was still missing. Until a
 * worker polls (the longest part of a start) it asks Temporal itself, so the edge's access log
 * does not fill with the 503s of a start-up.
 */
async function waitForReady(
  url: string,
  timeoutMs: number,
  failed: () => string | undefined,
  queue: { address: string; namespace: string; taskQueue: string },
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'the edge did not answer';
  const connection = await Connection.connect({ address: queue.address, connectTimeout: 5000 });
  const polled = async () => {
    for (const type of ['workflow', 'activity'] as const) {
      if (!(await freshPollers(connection.workflowService, queue.namespace, queue.taskQueue, type))) return false;
    }
    return true;
  };
  try {
    while (Date.now() < deadline) {
      const why = failed();
      if (why) throw new Error(why);
      if (!(await polled().catch(() => false))) {
        last = `no worker polled task queue ${queue.taskQueue} yet`;
        await new Promise((r) => setTimeout(r, 250));
        continue;
      }
      if (await ready(url, (why) => (last = why))) return;
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await connection.close();
  }
  throw new Error(`the platform at ${url} was not ready within ${timeoutMs / 1000} s (${last})`);
}

async function ready(url: string, missing: (why: string) => void): Promise<boolean> {
  try {
    const res = await fetch(`${url}/health/ready`);
    if (res.status === 200) return true;
    const body = (await res.json().catch(() => ({}))) as { missing?: string[]; checks?: Record<string, string> };
    missing(
      body.missing
        ? `missing ${body.missing.map((k) => `${k}: ${body.checks?.[k]}`).join('; ')}`
        : `HTTP ${res.status}`,
    );
  } catch {
    missing('the edge did not answer');
  }
  return false;
}
