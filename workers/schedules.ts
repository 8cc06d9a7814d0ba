/**
 * Platform-level Temporal Schedules, created or updated by every worker at start (idempotent).
 * Retention runs from a Schedule, not a TTL index: FerretDB 1.x has no TTL indexes.
 */
import { Client, ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Connection } from '@temporalio/client';
import type { Config } from '../activities/config';

export const RETENTION_SCHEDULE_ID = 'retention:normalized-responses';

export async function ensureSchedules(connection: Connection, cfg: Config): Promise<void> {
  const client = new Client({ connection, namespace: cfg.TEMPORAL_NAMESPACE });
  const spec = { intervals: [{ every: '1 hour' }] };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: 'retentionWorkflow',
    taskQueue: cfg.TEMPORAL_TASK_QUEUE,
    args: [{ retention_days: cfg.RESPONSE_RETENTION_DAYS }],
  };
  // A run missed while no worker was up runs once when one is back, never once per missed hour.
  const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' };
  try {
    await client.schedule.create({ scheduleId: RETENTION_SCHEDULE_ID, spec, action, policies });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(RETENTION_SCHEDULE_ID).update((prev) => ({ ...prev, spec, action, policies }));
  }
}
