/**
 * Process-wide connections used by activity functions: MongoDB through mongoose's default
 * connection and one MinIO client. Both the worker and the edge call initRuntime once at start.
 */
import mongoose from 'mongoose';
import { Client as MinioClient } from 'minio';
import { config, minioSettings, type Config, type MinioSettings } from './config';

interface Runtime {
  cfg: Config;
  minio: MinioClient;
  minioSettings: MinioSettings;
}

let current: Runtime | undefined;

export async function initRuntime(cfg: Config = config()): Promise<void> {
  if (current) return;
  if (!cfg.MONGODB_URI) throw new Error('MONGODB_URI is not set');
  mongoose.set('strictQuery', true);
  await mongoose.connect(cfg.MONGODB_URI, { serverSelectionTimeoutMS: 10_000, maxPoolSize: 50 });
  const settings = minioSettings(cfg);
  current = { cfg, minio: new MinioClient(settings), minioSettings: settings };
  // Unique indexes back every idempotency promise, so they must exist before the first request.
  await Promise.all(Object.values(mongoose.models).map((m) => m.createIndexes()));
}

export function runtime(): Runtime {
  if (!current) throw new Error('runtime not initialised: call initRuntime() first');
  return current;
}

export async function closeRuntime(): Promise<void> {
  if (!current) return;
  current = undefined;
  await mongoose.disconnect();
}
