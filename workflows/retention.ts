import { proxyActivities } from '@temporalio/workflow';
import type * as activities from '../activities/workflow-activities';

const { purgeNormalizedResponses } = proxyActivities<typeof activities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '5 s', backoffCoefficient: 2, maximumAttempts: 5 },
});

/** Run by the Schedule `retention:normalized-responses:<task queue>`: deletes responses past retention. */
export async function retentionWorkflow(input: { retention_days: number }): Promise<{ deleted: number; cutoff: string | null }> {
  return purgeNormalizedResponses(input);
}
