/**
 * A second edge process on the suite's servers (same database, queue and admin key) with some
 * settings changed, for tests of what an edge does under another configuration. Stopped with
 * stopEdges() in the file's afterAll.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { freePort } from '../../workers/infra';
import { adminKey } from './api';

const root = fileURLToPath(new URL('../..', import.meta.url));
const children: ChildProcess[] = [];

export async function startExtraEdge(env: Record<string, string>): Promise<string> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, ['--import', 'tsx', 'workers/edge.ts'], {
    cwd: root,
    env: { ...process.env, ...inject('platformEnv'), PLATFORM_ADMIN_KEY: adminKey(), LOG_LEVEL: 'warn', ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
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

export function stopEdges(): void {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
}
