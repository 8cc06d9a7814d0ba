/**
 * One Temporal Schedule per event, `event:<event id>`: the scheduler component's SchedulePort
 * (`eventSchedules`, handed in by the composition root), which keeps it in step with the event store.
 */
import { createHash } from 'node:crypto';

import {
  ScheduleNotFoundError,
  type ScheduleOptionsStartWorkflowAction,
  ScheduleOverlapPolicy,
  WorkflowExecutionAlreadyStartedError,
} from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';

import { notFound } from '../../activities/core/errors.ts';
import { DEFAULT_CATCHUP_MINUTES, type Overlap } from '../../activities/scheduler/constants.ts';
import type { EventDoc, SchedulePort } from '../../activities/scheduler/index.ts';
import { scheduleSpec } from '../../activities/scheduler/index.ts';
import { scheduledEventWorkflow } from '../../workflows/scheduler.ts';
import { platformSearchAttributes } from '../../workflows/search-attributes.ts';
import { taskQueue, temporal } from './client.ts';

export const scheduleId = (event_id: string) => `event:${event_id}`;

const OVERLAP: Record<Overlap, ScheduleOverlapPolicy> = {
  skip: ScheduleOverlapPolicy.SKIP,
  buffer_one: ScheduleOverlapPolicy.BUFFER_ONE,
  allow_all: ScheduleOverlapPolicy.ALLOW_ALL,
};

function options(e: EventDoc) {
  const action: ScheduleOptionsStartWorkflowAction<typeof scheduledEventWorkflow> = {
    type: 'startWorkflow',
    workflowType: scheduledEventWorkflow,
    workflowId: `event-run:${e._id}`,
    taskQueue: taskQueue(),
    args: [{ event_id: e._id, organization_id: e.organization_id }],
    typedSearchAttributes: platformSearchAttributes(e.organization_id, e.user_id, `scheduler:${e.type_of_event}`),
  };
  return {
    spec: scheduleSpec({
      start: e.start_event,
      end: e.end_date,
      recurrency: e.recurrency,
      cron: e.cron,
      timezone: e.timezone,
    }),
    action,
    // SKIP by default: while a run is pending (e.g. no worker up), later times are not queued behind
    // it, so a worker that comes back runs the missed event once, not once per missed time.
    policies: {
      overlap: OVERLAP[e.overlap ?? 'skip'],
      catchupWindow: (e.catchup_window_minutes ?? DEFAULT_CATCHUP_MINUTES) * 60_000,
    },
    memo: { event_id: e._id, type_of_event: e.type_of_event, user_id: e.user_id },
  };
}

async function createSchedule(e: EventDoc): Promise<void> {
  const client = await temporal();
  const { memo, ...rest } = options(e);
  await client.schedule.create({ scheduleId: scheduleId(e._id), ...rest, memo });
}

/** The Schedule is updated in place (its id, history and run list stay), never recreated. */
async function updateSchedule(e: EventDoc): Promise<void> {
  const client = await temporal();
  const { spec, action, policies } = options(e);
  await client.schedule
    .getHandle(scheduleId(e._id))
    .update((prev) => ({ ...prev, spec, action, policies: { ...prev.policies, ...policies } }));
}

async function deleteSchedule(event_id: string): Promise<void> {
  const client = await temporal();
  try {
    await client.schedule.getHandle(scheduleId(event_id)).delete();
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
  }
}

/** Pause or resume through the Schedule itself: a paused Schedule starts nothing on its own. */
async function pauseSchedule(event_id: string, paused: boolean, note: string | null): Promise<void> {
  const handle = (await temporal()).schedule.getHandle(scheduleId(event_id));
  const why = note ?? (paused ? 'Paused through the scheduler API' : 'Resumed through the scheduler API');
  try {
    if (paused) await handle.pause(why);
    else await handle.unpause(why);
  } catch (err) {
    // Deleted in between: the same answer as for any deleted event.
    if (err instanceof ScheduleNotFoundError) throw notFound('Event not found');
    throw err;
  }
}

/**
 * An admin's execute now with an Idempotency-Key (a basic key's goes through `triggerSchedule`,
 * its key kept by the scheduler store): the run's workflow id comes from the key, so the same key
 * on the same event starts one run however often it is sent (for as long as Temporal keeps the
 * run's history). Started directly rather than through the Schedule's trigger, which cannot be
 * given a workflow id; the run has no scheduled time, so it is recorded as manual like a trigger's.
 */
async function runOnce(e: EventDoc, key: string): Promise<{ at: Date; replayed: boolean }> {
  const client = await temporal();
  const { action } = options(e);
  const workflowId = `event-run:${e._id}-key-${createHash('sha256').update(key).digest('hex').slice(0, 32)}`;
  try {
    await client.workflow.start(scheduledEventWorkflow, {
      workflowId,
      taskQueue: action.taskQueue,
      args: action.args,
      typedSearchAttributes: action.typedSearchAttributes,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    });
    return { at: new Date(), replayed: false };
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    const { startTime } = await client.workflow.getHandle(workflowId).describe();
    return { at: startTime, replayed: true };
  }
}

/**
 * Execute now: the Schedule's own trigger, so the run appears with the event's other runs. An
 * admin's run starts whatever runs (ALLOW_ALL); below admin it follows the event's own overlap
 * policy, never `allow_all` (skip for an admin's `allow_all` event), so runs by hand never pile up.
 */
export async function triggerSchedule(
  event_id: string,
  overlap: Overlap | 'admin' = 'admin',
  at = new Date(),
): Promise<Date> {
  const client = await temporal();
  const policy =
    overlap === 'admin' ? ScheduleOverlapPolicy.ALLOW_ALL : OVERLAP[overlap === 'allow_all' ? 'skip' : overlap];
  await client.schedule.getHandle(scheduleId(event_id)).trigger(policy);
  return at;
}

/** When the Schedule last started a run (on time or triggered by hand), from its recent actions; null: none yet. */
async function lastActionAt(event_id: string): Promise<Date | null> {
  const handle = (await temporal()).schedule.getHandle(scheduleId(event_id));
  try {
    const times = (await handle.describe()).info.recentActions.map((a) => a.takenAt.getTime());
    return times.length ? new Date(Math.max(...times)) : null;
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) throw notFound('Event not found');
    throw err;
  }
}

/** What the scheduler component is handed (workers/root.ts, `configureScheduler`). */
export const eventSchedules: SchedulePort = {
  createSchedule,
  updateSchedule,
  deleteSchedule,
  pauseSchedule,
  triggerSchedule,
  runOnce,
  lastActionAt,
};
