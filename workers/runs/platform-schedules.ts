/**
 * Platform-level Temporal Schedules, created or updated by every worker at start (idempotent).
 * Retention runs from a Schedule, not a TTL index: FerretDB 1.x has no TTL indexes.
 */
import {
  Client,
  Connection,
  ScheduleAlreadyRunning,
  type ScheduleOptions,
  ScheduleOverlapPolicy,
} from '@temporalio/client';

import type { Config } from '../../activities/core/config.ts';
import { eventsMaintenanceWorkflow } from '../../workflows/events-maintenance.ts';
import { giftCatalogueWorkflow } from '../../workflows/gift-catalogue.ts';
import { loyaltyMaintenanceWorkflow } from '../../workflows/loyalty-maintenance.ts';
import { retentionWorkflow } from '../../workflows/retention.ts';
import { platformSearchAttributes } from '../../workflows/search-attributes.ts';

/**
 * One per task queue: deployments (and test runs) sharing a Temporal namespace each keep their
 * own, and a worker on another queue never takes over this one's.
 */
export const retentionScheduleId = (taskQueue: string) => `retention:normalized-responses:${taskQueue}`;
export const loyaltyScheduleId = (taskQueue: string) => `loyalty:maintenance:${taskQueue}`;
const eventsScheduleId = (taskQueue: string) => `events:maintenance:${taskQueue}`;
const giftCatalogueScheduleId = (taskQueue: string) => `gifts:catalogue:${taskQueue}`;

export async function ensureSchedules(cfg: Config): Promise<void> {
  const connection = await Connection.connect({ address: cfg.TEMPORAL_ADDRESS! });
  try {
    await ensureSchedulesOn(new Client({ connection, namespace: cfg.TEMPORAL_NAMESPACE }), cfg);
  } finally {
    await connection.close();
  }
}

async function ensureSchedulesOn(client: Client, cfg: Config): Promise<void> {
  const spec = { intervals: [{ every: '1 hour' }] };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: retentionWorkflow,
    taskQueue: cfg.TEMPORAL_TASK_QUEUE,
    args: [{ retention_days: cfg.RESPONSE_RETENTION_DAYS }],
    // The platform's own runs are filed under organization "_platform" (no organization id starts with "_").
    typedSearchAttributes: platformSearchAttributes('_platform', '_system', 'retention'),
  };
  // A run missed while no worker was up runs once when one is back, never once per missed hour.
  const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' };
  await upsert(client, retentionScheduleId(cfg.TEMPORAL_TASK_QUEUE), { spec, action, policies });
  // Points expiry: daily (balances already leave lapsed points out; the run writes them down).
  await upsert(client, loyaltyScheduleId(cfg.TEMPORAL_TASK_QUEUE), {
    spec: { intervals: [{ every: '1 day' }] },
    action: {
      type: 'startWorkflow' as const,
      workflowType: loyaltyMaintenanceWorkflow,
      taskQueue: cfg.TEMPORAL_TASK_QUEUE,
      args: [],
      typedSearchAttributes: platformSearchAttributes('_platform', '_system', 'loyalty'),
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 day' },
  });
  // Outgoing events: what a crash left unrecorded or undelivered, every minute; the log's retention.
  await upsert(client, eventsScheduleId(cfg.TEMPORAL_TASK_QUEUE), {
    spec: { intervals: [{ every: '1 minute' }] },
    action: {
      type: 'startWorkflow' as const,
      workflowType: eventsMaintenanceWorkflow,
      taskQueue: cfg.TEMPORAL_TASK_QUEUE,
      args: [],
      typedSearchAttributes: platformSearchAttributes('_platform', '_system', 'events'),
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
  });
  // Gift catalogues: daily, for the organizations that ask for it (their gift settings).
  await upsert(client, giftCatalogueScheduleId(cfg.TEMPORAL_TASK_QUEUE), {
    spec: { intervals: [{ every: '1 day' }] },
    action: {
      type: 'startWorkflow' as const,
      workflowType: giftCatalogueWorkflow,
      taskQueue: cfg.TEMPORAL_TASK_QUEUE,
      args: [],
      typedSearchAttributes: platformSearchAttributes('_platform', '_system', 'gifts'),
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 day' },
  });
}

async function upsert(
  client: Client,
  scheduleId: string,
  s: Pick<ScheduleOptions, 'spec' | 'action' | 'policies'>,
): Promise<void> {
  try {
    await client.schedule.create({ scheduleId, ...s });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(scheduleId).update((prev) => ({ ...prev, ...s }) as typeof prev);
  }
}
