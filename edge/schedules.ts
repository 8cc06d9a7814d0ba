/** One Temporal Schedule per event, `event:<event id>`, kept in step with the event store. */
import { ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
import { scheduleSpec } from '../activities/scheduler/calendar';
import type { EventDoc } from '../activities/scheduler/models';
import { platformSearchAttributes } from '../workflows/search-attributes';
import { taskQueue, temporal } from './temporal';

export const scheduleId = (event_id: string) => `event:${event_id}`;

function options(e: EventDoc) {
  return {
    spec: scheduleSpec({ start: e.start_event, end: e.end_date, recurrency: e.recurrency, timezone: e.timezone }),
    action: {
      type: 'startWorkflow' as const,
      workflowType: 'scheduledEventWorkflow',
      workflowId: `event-run:${e._id}`,
      taskQueue: taskQueue(),
      args: [{ event_id: e._id, organization_id: e.organization_id }],
      typedSearchAttributes: platformSearchAttributes(e.organization_id, e.user_id, `scheduler:${e.type_of_event}`),
    },
    // SKIP: while a run is pending (e.g. no worker up), later times are not queued behind it, so a
    // worker that comes back runs the missed event once, not once per missed time.
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
    memo: { event_id: e._id, type_of_event: e.type_of_event, user_id: e.user_id },
  };
}

export async function createSchedule(e: EventDoc): Promise<void> {
  const client = await temporal();
  const { memo, ...rest } = options(e);
  await client.schedule.create({ scheduleId: scheduleId(e._id), ...rest, memo });
}

/** The Schedule is updated in place (its id, history and run list stay), never recreated. */
export async function updateSchedule(e: EventDoc): Promise<void> {
  const client = await temporal();
  const { spec, action, policies } = options(e);
  await client.schedule.getHandle(scheduleId(e._id)).update((prev) => ({ ...prev, spec, action, policies: { ...prev.policies, ...policies, catchupWindow: 3_600_000 } }));
}

export async function deleteSchedule(event_id: string): Promise<void> {
  const client = await temporal();
  try {
    await client.schedule.getHandle(scheduleId(event_id)).delete();
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
  }
}

/** Execute now: the Schedule's own trigger, so the run appears with the event's other runs. */
export async function triggerSchedule(event_id: string): Promise<Date> {
  const client = await temporal();
  const at = new Date();
  await client.schedule.getHandle(scheduleId(event_id)).trigger(ScheduleOverlapPolicy.ALLOW_ALL);
  return at;
}
