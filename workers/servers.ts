/**
 * What the platform needs on its servers, whoever started them (`npm start`'s local servers, or
 * given ones: docker compose): the bucket and the custom search attributes. The worker makes sure
 * of them at its start (workers/worker.ts), as the local tooling does when it starts the servers.
 */
import { Client as MinioClient } from 'minio';

import type { Config } from '../activities/core/config.ts';
import { minioSettings } from '../activities/core/config.ts';
import { registerSearchAttributes } from './runs/search-attributes.ts';

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
  await registerSearchAttributes(cfg);
}
