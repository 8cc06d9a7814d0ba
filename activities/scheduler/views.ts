/**
 * Stored events as the API shows them: variant A `/scheduler/events` (event_type, schedule_time)
 * and variant B `/api/scheduler-service/events` (type_of_event, start_event), both with the
 * Schedule's controls and the next times by the rule. The schemas documenting them are the
 * edge's (edge/routes/scheduler.ts, which checks these views against them at compile time).
 */
import { nextRuns } from './calendar.ts';
import { DEFAULT_CATCHUP_MINUTES } from './constants.ts';
import { type EventDoc, eventMetadata } from './store.ts';

const NEXT_RUNS = 5;

/** The Schedule's controls and the next 5 times by the rule (computed while paused too; none once completed). */
const controlView = (e: EventDoc) => ({
  cron: e.cron ?? null,
  paused: e.paused === true,
  pause_note: e.paused ? (e.pause_note ?? null) : null,
  paused_at: e.paused && e.paused_at ? e.paused_at.toISOString() : null,
  overlap: e.overlap ?? 'skip',
  catchup_window_minutes: e.catchup_window_minutes ?? DEFAULT_CATCHUP_MINUTES,
  next_runs: nextRuns(
    { start: e.start_event, end: e.end_date, recurrency: e.recurrency, cron: e.cron, timezone: e.timezone },
    new Date(),
    NEXT_RUNS,
  )
    .filter(() => e.status !== 'completed')
    .map((d) => d.toISOString()),
});

export const eventViewA = (e: EventDoc) => ({
  event_id: e._id,
  event_type: e.type_of_event,
  schedule_time: e.start_event.toISOString(),
  user_id: e.user_id,
  idp_id: e.idp_id,
  organization_id: e.organization_id,
  recurrency: e.recurrency,
  end_date: e.end_date?.toISOString() ?? null,
  status: e.status,
  metadata: eventMetadata(e),
  ...controlView(e),
});

export const eventViewB = (e: EventDoc) => ({
  id: e._id,
  idp_id: e.idp_id,
  user_id: e.user_id,
  organization_id: e.organization_id,
  type_of_event: e.type_of_event,
  recurrency: e.recurrency,
  start_event: e.start_event.toISOString(),
  end_date: e.end_date?.toISOString() ?? null,
  status: e.status,
  metadata: eventMetadata(e),
  ...controlView(e),
  created_at: e.created_at.toISOString(),
  updated_at: e.updated_at.toISOString(),
});

/** Variant A's answer to a create or an update. */
export const savedViewA = (e: EventDoc) => ({
  success: true as const,
  event_id: e._id,
  schedule_time: e.start_event.toISOString(),
});

/** The answer to a pause or a resume. */
export function pauseView(e: EventDoc) {
  const v = controlView(e);
  return {
    success: true as const,
    event_id: e._id,
    paused: v.paused,
    pause_note: v.pause_note,
    paused_at: v.paused_at,
    next_runs: v.next_runs,
  };
}
