/**
 * Connections of a test file to the suite's stack, opened before its tests and closed after.
 */
import { Client, Connection } from '@temporalio/client';
import mongoose from 'mongoose';
import { afterAll, beforeAll, inject } from 'vitest';

import { parseEnv, setConfig } from '../../activities/core/config.ts';
import { closeRuntime, initRuntime } from '../../activities/core/runtime.ts';
import { stopRevocationWatcher } from '../../activities/identity/api-keys.ts';

/** Activity tests call the components' functions in the test process: their configuration and database. */
export function useSuiteRuntime(): void {
  beforeAll(async () => {
    setConfig(parseEnv({ ...process.env, ...inject('platformEnv') }));
    await initRuntime();
  });
  afterAll(async () => {
    await stopRevocationWatcher();
    await closeRuntime();
  });
}

export interface SuiteClients {
  temporal: Client;
  db: mongoose.Connection;
}

/** A Temporal client and a database connection of the suite's stack, open for the file's tests. */
export function useSuiteClients(): SuiteClients {
  const clients = {} as SuiteClients;
  beforeAll(async () => {
    const e = inject('platformEnv');
    clients.temporal = new Client({
      connection: await Connection.connect({ address: e.TEMPORAL_ADDRESS }),
      namespace: e.TEMPORAL_NAMESPACE,
    });
    clients.db = await mongoose.createConnection(e.MONGODB_URI).asPromise();
  });
  afterAll(async () => {
    await clients.db?.close();
    await clients.temporal?.connection.close();
  });
  return clients;
}

/**
 * The environment of a platform a test file launches for itself on the suite's servers: its own
 * task queue, database, bucket, data folder and admin key, plus `extra` (worker count, providers).
 */
export function isolatedPlatformEnv(
  o: { queue: string; dataDir: string; adminKey: string },
  extra: Record<string, string> = {},
): Record<string, string> {
  const suite = inject('platformEnv');
  const db = new URL(suite.MONGODB_URI);
  db.pathname = `/platform_${o.queue.replace(/-/g, '_')}`;
  return {
    ...suite,
    DATA_DIR: o.dataDir,
    TEMPORAL_TASK_QUEUE: o.queue,
    MINIO_BUCKET: o.queue,
    MONGODB_URI: db.toString(),
    PLATFORM_ADMIN_KEY: o.adminKey,
    ...extra,
  };
}
