import { proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import type * as activities from '../activities/workflow-activities';

const MAX_ATTEMPTS = 8; // ~2 s, 4 s, 8 s … capped at a minute: about four minutes in all
// A local activity: the run's one step executes in the worker holding the workflow task instead
// of travelling through the task queue again, which is what bounds how many due events a second
// the platform starts on time (README, Benchmarks). Retries and their backoff are the same.
const { runScheduledEvent } = proxyLocalActivities<typeof activities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '2 s', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: MAX_ATTEMPTS },
});

/** Started by the Schedule `event:<event id>` (on time, or at once by "execute now"). */
export async function scheduledEventWorkflow(input: { event_id: string; organization_id: string }) {
  const info = workflowInfo();
  const scheduled = info.searchAttributes?.TemporalScheduledStartTime?.[0] as Date | string | undefined;
  return runScheduledEvent({
    ...input,
    run_id: info.workflowId,
    max_attempts: MAX_ATTEMPTS,
    scheduled_time: scheduled ? new Date(scheduled).toISOString() : null,
  });
}
