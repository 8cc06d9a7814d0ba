/**
 * Process-wide connections used by activity functions: the database (activities/core/db) and one
 * MinIO client. Both the worker and the edge call initRuntime once at start.
 */
import { Client as MinioClient } from 'minio';

import { type Config, config, type MinioSettings, minioSettings } from './config.ts';
import { connectDb, disconnectDb } from './db/index.ts';

interface Runtime {
  cfg: Config;
  minio: MinioClient;
  minioSettings: MinioSettings;
}

let current: Runtime | undefined;

export async function initRuntime(cfg: Config = config()): Promise<void> {
  if (current) return;
  await connectDb(cfg.MONGODB_URI ?? '');
  const settings = minioSettings(cfg);
  current = { cfg, minio: new MinioClient(settings), minioSettings: settings };
}

export function runtime(): Runtime {
  if (!current) throw new Error('runtime not initialised: call initRuntime() first');
  return current;
}

export async function closeRuntime(): Promise<void> {
  if (!current) return;
  current = undefined;
  await disconnectDb();
}
