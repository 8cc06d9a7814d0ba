import { patched, proxyActivities } from '@temporalio/workflow';

import type * as activities from '../activities/workflow-activities.ts';
import { BACKGROUND } from './retry.ts';

const { purgeNormalizedResponses, purgeIdempotencyKeys, purgeAuditRecords, purgeOutbox } = proxyActivities<
  typeof activities
>({ startToCloseTimeout: '10 minutes', retry: BACKGROUND });

/**
 * Run by the Schedule `retention:normalized-responses:<task queue>`: deletes responses past
 * retention, Idempotency-Key records past their 24 hours, audit records past
 * AUDIT_RETENTION_DAYS (after appending the intents a crash left, as outcome unknown), and mail
 * files in the outbox past OUTBOX_RETENTION_DAYS. The outbox step comes last, behind
 * patched('outbox-retention'), so a run recorded before it was added replays unchanged.
 */
export async function retentionWorkflow(input: { retention_days: number }): Promise<{
  deleted: number;
  cutoff: string | null;
  idempotency_keys_deleted: number;
  audit: { removed: number; unknown_recorded: number };
  outbox_files_removed?: number;
}> {
  const responses = await purgeNormalizedResponses(input);
  const keys = await purgeIdempotencyKeys();
  const audit = await purgeAuditRecords({});
  const outbox = patched('outbox-retention') ? await purgeOutbox({}) : undefined;
  return {
    ...responses,
    idempotency_keys_deleted: keys.deleted,
    audit: { removed: audit.removed, unknown_recorded: audit.unknown_recorded },
    ...(outbox && { outbox_files_removed: outbox.removed }),
  };
}
