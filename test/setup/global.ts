/**
 * Starts the real platform for the suite: Temporal dev server, FerretDB/mongod and MinIO on free
 * ports in a temp dir (or the servers named by TEMPORAL_ADDRESS / MONGODB_URI / MINIO_ENDPOINT),
 * plus the worker and edge processes exactly as `npm start` runs them. Torn down at the end.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import { parseEnv } from '../../activities/config';
import { generateSecret } from '../../activities/identity/api-keys';
import { launchPlatform } from '../../workers/platform';

declare module 'vitest' {
  export interface ProvidedContext {
    edgeUrl: string;
    adminKey: string;
    platformEnv: Record<string, string>;
  }
}

export default async function setup(project: TestProject) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-test-'));
  const run = randomBytes(4).toString('hex');
  const adminKey = generateSecret();
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    PLATFORM_ADMIN_KEY: adminKey,
    MAX_UPLOAD_MB: '5',
    MAX_IMAGE_MEGAPIXELS: '50',
    // Given servers are shared: this run keeps to its own task queue, bucket and database.
    TEMPORAL_TASK_QUEUE: `test-${run}`,
    MINIO_BUCKET: `test-${run}`,
  };
  if (process.env.MONGODB_URI) {
    const uri = new URL(process.env.MONGODB_URI);
    uri.pathname = `/platform_test_${run}`;
    env.MONGODB_URI = uri.toString();
  }
  const cfg = parseEnv({ ...process.env, ...env });
  const started = Date.now();
  const platform = await launchPlatform({
    cfg,
    freePorts: true,
    env,
    onExit: (name, code, signal) => process.stderr.write(`test platform: ${name} exited unexpectedly (${signal ?? code})\n`),
  });
  process.stderr.write(`test platform ready in ${((Date.now() - started) / 1000).toFixed(1)} s at ${platform.edgeUrl}\n`);
  project.provide('edgeUrl', platform.edgeUrl);
  project.provide('adminKey', adminKey);
  project.provide('platformEnv', { ...platform.env, TEMPORAL_TASK_QUEUE: cfg.TEMPORAL_TASK_QUEUE, TEMPORAL_NAMESPACE: cfg.TEMPORAL_NAMESPACE });
  return async () => {
    await platform.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
}
