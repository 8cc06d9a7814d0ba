import { proxyLocalActivities, workflowInfo } from '@temporalio/workflow';

import type * as activities from '../activities/workflow-activities.ts';
import { BACKGROUND } from './retry.ts';

// Fewer attempts than BACKGROUND's (1 s, 2 s, 4 s … about two minutes in all): while a run is
// retrying, the event's Schedule skips its next times by default, so a failing task is recorded
// as failed and leaves room for the next run instead of silencing a frequent event for long.
const MAX_ATTEMPTS = 8;
// A local activity: the run's one step executes in the worker holding the workflow task instead
// of travelling through the task queue again, which is what bounds how many due events a second
// the platform starts on time (docs/benchmarks.md). Retries and their backoff are the same.
const { runScheduledEvent } = proxyLocalActivities<typeof activities>({
  startToCloseTimeout: '2 minutes',
  retry: { ...BACKGROUND, maximumAttempts: MAX_ATTEMPTS },
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
