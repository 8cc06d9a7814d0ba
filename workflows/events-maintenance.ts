import { proxyActivities } from '@temporalio/workflow';

import type { SweepResult } from '../activities/events/index.ts';
import type * as activities from '../activities/workflow-activities.ts';
import { BACKGROUND } from './retry.ts';

const { sweepEvents } = proxyActivities<typeof activities>({ startToCloseTimeout: '10 minutes', retry: BACKGROUND });

/**
 * Run every minute by the Schedule `events:maintenance:<task queue>`: records events a crash left
 * unrecorded, starts deliveries a crash left unstarted, removes events past their retention.
 */
export async function eventsMaintenanceWorkflow(): Promise<SweepResult> {
  return sweepEvents();
}
