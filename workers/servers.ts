/**
 * What the platform needs on its servers, whoever started them (`npm start`'s local servers, or
 * given ones: docker compose): the bucket and the custom search attributes. The worker makes sure
 * of them at its start (workers/worker.ts), as the local tooling does when it starts the servers.
 */
import { Connection } from '@temporalio/client';
import { Client as MinioClient } from 'minio';

import type { Config } from '../activities/core/config.ts';
import { minioSettings } from '../activities/core/config.ts';
import { SEARCH_ATTRIBUTES } from '../workflows/search-attributes.ts';

async function registerSearchAttributes(connection: Connection, namespace: string): Promise<void> {
  const { temporal } = await import('@temporalio/proto');
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const missing: Record<string, number> = {};
  for (const key of SEARCH_ATTRIBUTES) {
    if (!existing.customAttributes?.[key.name])
      missing[key.name] = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
  }
  if (!Object.keys(missing).length) return;
  try {
    await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing });
  } catch (err) {
    // Another worker registered them first.
    if (!/already exists/i.test((err as Error).message)) throw err;
  }
}

/**
 * Creates what the platform needs on its servers, started here or given: the bucket and the
 * custom search attributes. Idempotent; the worker runs it at start too (docker compose).
 */
export async function prepareServers(cfg: Config): Promise<void> {
  const minio = minioSettings(cfg);
  const mc = new MinioClient(minio);
  if (!(await mc.bucketExists(minio.bucket))) {
    try {
      await mc.makeBucket(minio.bucket);
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code !== 'BucketAlreadyOwnedByYou' && code !== 'BucketAlreadyExists') throw err;
    }
  }
  const conn = await Connection.connect({ address: cfg.TEMPORAL_ADDRESS! });
  try {
    await registerSearchAttributes(conn, cfg.TEMPORAL_NAMESPACE);
  } finally {
    await conn.close();
  }
}
