/**
 * Connections of a test file to the suite's stack, opened before its tests and closed after.
 */
import { afterAll, beforeAll, inject } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import mongoose from 'mongoose';
import { parseEnv, setConfig } from '../../activities/config';
import { stopRevocationWatcher } from '../../activities/identity/api-keys';
import { closeRuntime, initRuntime } from '../../activities/runtime';

/** Activity tests call the components' functions in the test process: their configuration and database. */
export function useSuiteRuntime(): void {
  beforeAll(async () => {
    setConfig(parseEnv({ ...process.env, ...inject('platformEnv') }));
    await initRuntime();
  });
  afterAll(async () => {
    stopRevocationWatcher();
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
    clients.temporal = new Client({ connection: await Connection.connect({ address: e.TEMPORAL_ADDRESS }), namespace: e.TEMPORAL_NAMESPACE });
    clients.db = await mongoose.createConnection(e.MONGODB_URI).asPromise();
  });
  afterAll(async () => {
    await clients.db?.close();
    await clients.temporal?.connection.close();
  });
  return clients;
}
