import { proxyActivities } from '@temporalio/workflow';
import type * as activities from '../activities/workflow-activities';
import { BACKGROUND } from './retry';

const { purgeNormalizedResponses, purgeIdempotencyKeys } = proxyActivities<typeof activities>({ startToCloseTimeout: '10 minutes', retry: BACKGROUND });

/**
 * Run by the Schedule `retention:normalized-responses:<task queue>`: deletes responses past
 * retention, and Idempotency-Key records past their 24 hours.
 */
export async function retentionWorkflow(input: { retention_days: number }): Promise<{ deleted: number; cutoff: string | null; idempotency_keys_deleted: number }> {
  const responses = await purgeNormalizedResponses(input);
  const keys = await purgeIdempotencyKeys();
  return { ...responses, idempotency_keys_deleted: keys.deleted };
}
