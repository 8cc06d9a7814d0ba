/**
 * Launches the whole platform: infrastructure (found or started), the Temporal worker process(es)
 * and the edge process. Used by `npm start` and by the test suite, so tests run what users run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Config } from '../activities/config';
import { freePort, startInfra } from './infra';

const GUARD = fileURLToPath(new URL('./guard.sh', import.meta.url));
const TSX = fileURLToPath(new URL('../node_modules/.bin/tsx', import.meta.url));

export interface LaunchOptions {
  cfg: Config;
  /** free ports for every server and the edge (tests) */
  freePorts?: boolean;
  ui?: boolean;
  /** extra environment for the worker and edge processes */
  env?: Record<string, string>;
  /** called when a platform process exits on its own */
  onExit?: (name: string, code: number | null, signal: NodeJS.Signals | null) => void;
  stdio?: 'inherit' | 'ignore';
}

export interface Platform {
  edgeUrl: string;
  temporalUi?: string;
  env: Record<string, string>;
  stop(): Promise<void>;
}

export async function launchPlatform(opts: LaunchOptions): Promise<Platform> {
  const { cfg } = opts;
  const infra = await startInfra({ cfg, freePorts: opts.freePorts, ui: opts.ui });
  const port = opts.freePorts ? await freePort() : cfg.PORT;
  const env: Record<string, string> = { ...infra.env, ...opts.env, DATA_DIR: cfg.dataDir, PORT: String(port), HOST: cfg.HOST };
  const children: { name: string; child: ChildProcess }[] = [];
  let stopping = false;

  const startProcess = (name: string, script: string) => {
    const child = spawn('bash', [GUARD, String(process.pid), TSX, fileURLToPath(new URL(script, import.meta.url))], {
      env: { ...process.env, ...env },
      stdio: ['ignore', opts.stdio ?? 'inherit', opts.stdio ?? 'inherit'],
    });
    child.on('exit', (code, signal) => {
      if (!stopping) opts.onExit?.(name, code, signal);
    });
    children.push({ name, child });
  };

  const stop = async () => {
    if (stopping) return;
    stopping = true;
    for (const { child } of [...children].reverse()) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
    await infra.stop();
  };

  try {
    for (let i = 0; i < cfg.WORKER_COUNT; i += 1) startProcess(`worker ${i + 1}`, './worker.ts');
    startProcess('edge', './edge.ts');
    const edgeUrl = `http://${cfg.HOST}:${port}`;
    await waitForEdge(edgeUrl, children);
    return { edgeUrl, temporalUi: infra.temporalUi, env, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function waitForEdge(url: string, children: { name: string; child: ChildProcess }[]): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const dead = children.find((c) => c.child.exitCode !== null);
    if (dead) throw new Error(`${dead.name} exited with code ${dead.child.exitCode} during start-up`);
    try {
      const res = await fetch(`${url}/health`);
      if (res.status === 200) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the edge at ${url} did not become healthy within 60 s`);
}
