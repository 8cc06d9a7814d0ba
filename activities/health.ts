import mongoose from 'mongoose';
import { bucketReachable } from './engines/storage';

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

export const storageHealthy = () => bucketReachable();
