/**
 * Processes of the platform (an edge, a worker) on the suite's servers (same database, queue and
 * admin key) with some settings changed, for tests of what they do under another configuration.
 * Stopped with stopEdges() in the file's afterAll.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { inject } from 'vitest';

import { freePort } from '../../tools/infra.ts';
import { type PlatformProcess, processArgs } from '../../tools/processes.ts';
import { adminKey } from './api.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const children: ChildProcess[] = [];

/** The edge or a worker started like the suite's own, with `env` changed. */
export function startPlatformProcess(which: PlatformProcess, env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, processArgs(which), {
    cwd: root,
    env: { ...process.env, ...inject('platformEnv'), PLATFORM_ADMIN_KEY: adminKey(), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  return child;
}

/** A second edge, answered once its /health answers at all (whatever its status). */
export async function startExtraEdge(env: Record<string, string>): Promise<string> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = startPlatformProcess('edge', { ...env, PORT: String(port) });
  for (let i = 0; i < 300; i += 1) {
    if (child.exitCode !== null) break;
    try {
      await fetch(`${url}/health`);
      return url;
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new Error('the extra edge did not start');
}

/** Stops every process started here (edges and workers). */
export function stopEdges(): void {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
}
