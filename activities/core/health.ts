import mongoose from 'mongoose';

import { runtime } from './runtime.ts';

async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export type CheckResult = 'ok' | string;

/** Runs a named check with a deadline; a failure reads `error: <why>`. */
export async function check(fn: () => Promise<unknown>, ms = 2000): Promise<CheckResult> {
  try {
    const ok = await within(ms, fn());
    return ok === false ? 'error: unreachable' : 'ok';
  } catch (err) {
    return `error: ${(err as Error).message}`;
  }
}

export const mongoHealthy = async () => {
  const db = mongoose.connection.db;
  if (!db) throw new Error('not connected');
  await db.admin().ping();
  return true;
};

export const storageHealthy = () => {
  const { minio, minioSettings } = runtime();
  return minio.bucketExists(minioSettings.bucket);
};

/**
 * An idle worker's long poll lasts a minute before it polls again, and Temporal records a
 * poller's time when the poll begins: a worker seen in the last 70 s is there.
 */
export const POLLER_FRESH_MS = 70_000;

interface TaskQueueDescriber {
  describeTaskQueue(req: {
    namespace: string;
    taskQueue: { name: string; kind: number };
    taskQueueType: number;
  }): Promise<{
    pollers?: { lastAccessTime?: { seconds?: unknown; nanos?: number | null } | null }[] | null;
  }>;
}

const TASK_QUEUE_KIND_NORMAL = 1;
export const TASK_QUEUE_TYPE = { workflow: 1, activity: 2 } as const;

/** Workers that polled the task queue (workflow or activity side) in the last POLLER_FRESH_MS. */
export async function freshPollers(
  service: TaskQueueDescriber,
  namespace: string,
  taskQueue: string,
  type: keyof typeof TASK_QUEUE_TYPE,
  now = Date.now(),
): Promise<number> {
  const res = await service.describeTaskQueue({
    namespace,
    taskQueue: { name: taskQueue, kind: TASK_QUEUE_KIND_NORMAL },
    taskQueueType: TASK_QUEUE_TYPE[type],
  });
  return (res.pollers ?? []).filter((p) => {
    const t = p.lastAccessTime;
    if (!t) return false;
    const ms = Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6);
    return now - ms <= POLLER_FRESH_MS;
  }).length;
}
