/**
 * The platform's custom search attributes (workflows/search-attributes.ts) on the Temporal
 * namespace: registered by every worker at start and by the local tooling (workers/servers.ts).
 */
import { Connection } from '@temporalio/client';

import type { Config } from '../../activities/core/config.ts';
import { SEARCH_ATTRIBUTES } from '../../workflows/search-attributes.ts';

async function registerOn(connection: Connection, namespace: string): Promise<void> {
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

/** Registers the missing ones (idempotent; another process registering them at once is fine). */
export async function registerSearchAttributes(cfg: Config): Promise<void> {
  const connection = await Connection.connect({ address: cfg.TEMPORAL_ADDRESS! });
  try {
    await registerOn(connection, cfg.TEMPORAL_NAMESPACE);
  } finally {
    await connection.close();
  }
}
