/**
 * Platform-level Temporal Schedules, created or updated by every worker at start (idempotent).
 * Retention runs from a Schedule, not a TTL index: FerretDB 1.x has no TTL indexes.
 */
import { Client, ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Connection } from '@temporalio/client';
import type { Config } from '../activities/config';
import { platformSearchAttributes } from '../workflows/search-attributes';

/**
 * One per task queue: deployments (and test runs) sharing a Temporal namespace each keep their
 * own, and a worker on another queue never takes over this one's.
 */
export const retentionScheduleId = (taskQueue: string) => `retention:normalized-responses:${taskQueue}`;

export async function ensureSchedules(connection: Connection, cfg: Config): Promise<void> {
  const client = new Client({ connection, namespace: cfg.TEMPORAL_NAMESPACE });
  const spec = { intervals: [{ every: '1 hour' }] };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: 'retentionWorkflow',
    taskQueue: cfg.TEMPORAL_TASK_QUEUE,
    args: [{ retention_days: cfg.RESPONSE_RETENTION_DAYS }],
    // The platform's own runs are filed under organization "_platform" (no organization id starts with "_").
    typedSearchAttributes: platformSearchAttributes('_platform', '_system', 'retention'),
  };
  // A run missed while no worker was up runs once when one is back, never once per missed hour.
  const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' };
  const scheduleId = retentionScheduleId(cfg.TEMPORAL_TASK_QUEUE);
  try {
    await client.schedule.create({ scheduleId, spec, action, policies });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(scheduleId).update((prev) => ({ ...prev, spec, action, policies }));
  }
}
