/**
 * Worker processes for drills: each exactly as `npm start` runs one, on the drill's own task queue
 * (so only the drill's workers run its runs), answered once it polls. killDrillWorkers() in the
 * file's afterAll ends those still running.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { inject } from 'vitest';

import { processArgs } from '../../tools/processes.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const workers: ChildProcess[] = [];

export async function startDrillWorker(queue: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, processArgs('worker'), {
    cwd: root,
    env: { ...process.env, ...inject('platformEnv'), TEMPORAL_TASK_QUEUE: queue },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  workers.push(child);
  await new Promise<void>((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes('worker: polling')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`drill worker exited (${code}): ${err}`)));
  });
  return child;
}

/** Whether one of the drill's workers is still running. */
export const drillWorkerRunning = () => workers.some((w) => w.exitCode === null);

export function killDrillWorkers(): void {
  for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
}
