/**
 * Activity tests call the components' functions in the test process: this connects them to the
 * suite's stack (its configuration and database) for the file and closes the connections after.
 */
import { afterAll, beforeAll, inject } from 'vitest';
import { parseEnv, setConfig } from '../../activities/config';
import { stopRevocationWatcher } from '../../activities/identity/api-keys';
import { closeRuntime, initRuntime } from '../../activities/runtime';

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
