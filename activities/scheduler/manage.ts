/**
 * What the API does to an event: each operation keeps the event store and the event's Temporal
 * Schedule (port.ts) in step, undoing its own first step when the second fails, so nothing
 * half-done stays behind. A caller below the admin level sees and changes only its own events.
 */
import { noteChange } from '../core/audit-note.ts';
import { invalid } from '../core/errors.ts';
import { ADMIN_LEVEL } from '../identity/constants.ts';
import { claimManualRun, listRuns, type RunFilter } from './event-runs.ts';
import { type SchedulePort, schedules } from './port.ts';
import { type Actor, checkEventRights } from './rights.ts';
import {
  abandonUpdate,
  commitUpdate,
  createEvent,
  deleteEvent,
  type EventInput,
  eventNotFound,
  getEvent,
  listEvents,
  prepareUpdate,
  setPaused,
  storedEvent,
} from './scheduled-events.ts';
import { type EventDoc, eventMetadata } from './store.ts';
import { pauseView } from './views.ts';

/** Who asks: a caller below the admin level may only see its own events. */
export type Viewer = Pick<Actor, 'user_id' | 'level'>;

/** The event, if the caller may see it (the organization was authorized by the caller; a basic key: its own events). */
export async function visibleEvent(viewer: Viewer, organization_id: string, event_id: string): Promise<EventDoc> {
  const e = await getEvent(organization_id, event_id);
  if (viewer.level < ADMIN_LEVEL && e.user_id !== viewer.user_id) throw eventNotFound();
  return e;
}

/** The events the caller may see: `user_id`'s (already authorized by the caller), else a basic key's own, else all of the organization. */
export async function listVisibleEvents(
  viewer: Viewer,
  organization_id: string,
  user_id?: string,
): Promise<EventDoc[]> {
  return listEvents(organization_id, user_id ?? (viewer.level < ADMIN_LEVEL ? viewer.user_id : undefined));
}

/** Creates the event, then its Schedule; if the Schedule is refused the event goes again. */
export async function createScheduledEvent(
  owner: { organization_id: string; user_id: string; idp_id: string },
  input: EventInput,
  actor: Actor,
): Promise<EventDoc> {
  const s = await schedules();
  const event = await createEvent(owner, input, actor);
  try {
    await s.createSchedule(event);
  } catch (err) {
    await deleteEvent(owner.organization_id, event._id).catch(() => undefined); // nothing half-created stays behind
    throw err;
  }
  return event;
}

/** The Schedule changes first; the store follows only once the Schedule accepted the change. */
export async function updateScheduledEvent(
  actor: Actor,
  organization_id: string,
  event_id: string,
  input: EventInput,
): Promise<EventDoc> {
  const s = await schedules();
  await visibleEvent(actor, organization_id, event_id);
  const { prev, next } = await prepareUpdate(organization_id, event_id, input, actor);
  // An ended event made to run again took places under the caps: they go if the Schedule refuses.
  await s.updateSchedule(next).catch(async (err) => {
    await abandonUpdate(prev, next).catch(() => undefined);
    throw err;
  });
  try {
    const saved = await commitUpdate(prev, next);
    noteEventChanges(prev, saved);
    return saved;
  } catch (err) {
    // Another update or a delete came between: the Schedule follows what the store holds now.
    const now = await storedEvent(organization_id, event_id).catch(() => undefined);
    if (now) await s.updateSchedule(now).catch(() => undefined);
    else if (now === null) await s.deleteSchedule(event_id).catch(() => undefined);
    throw err;
  }
}

/** The Schedule goes first, then the event (with its runs by hand and its places). */
export async function deleteScheduledEvent(viewer: Viewer, organization_id: string, event_id: string) {
  const s = await schedules();
  await visibleEvent(viewer, organization_id, event_id);
  await s.deleteSchedule(event_id);
  await deleteEvent(organization_id, event_id);
  return { success: true as const, message: `Event ${event_id} deleted` };
}

/** Same ownership as an update; the Schedule pauses (or resumes) first, the store follows once it accepted. */
export async function pauseScheduledEvent(
  viewer: Viewer,
  organization_id: string,
  event_id: string,
  paused: boolean,
  note: string | undefined,
) {
  const s = await schedules();
  const e = await visibleEvent(viewer, organization_id, event_id);
  await s.pauseSchedule(event_id, paused, note ?? null);
  const saved = await setPaused(organization_id, event_id, paused, paused ? (note ?? null) : null);
  noteChange('paused', e.paused ?? false, saved.paused ?? false);
  return pauseView(saved);
}

const EVENT_FIELDS = [
  'type_of_event',
  'recurrency',
  'cron',
  'start_event',
  'end_date',
  'timezone',
  'overlap',
  'catchup_window_minutes',
  'status',
] as const;
const json = (v: unknown) => JSON.stringify(v ?? null);
const smallMetadata = (text: string) =>
  text.length > 2000 ? `<${text.length} characters of JSON>` : eventMetadata({ metadata_json: text });

/** For the audit record: the fields an update changed, with their previous values (the metadata whole when small). */
function noteEventChanges(prev: EventDoc, saved: EventDoc): void {
  for (const f of EVENT_FIELDS) if (json(prev[f]) !== json(saved[f])) noteChange(f, prev[f] ?? null, saved[f] ?? null);
  if (prev.metadata_json !== saved.metadata_json)
    noteChange('metadata', smallMetadata(prev.metadata_json), smallMetadata(saved.metadata_json));
}

/**
 * A run by hand below the admin level (docs/components/scheduler.md, Limits): at most one per
 * SCHEDULER_MIN_INTERVAL_SECONDS_BASIC after the event's last run (429 otherwise), none of an
 * ended event (409: each stored event would add runs), through the
 * Schedule's trigger with the event's overlap policy; an Idempotency-Key answers its first run.
 */
async function runByHand(
  s: SchedulePort,
  e: EventDoc,
  key: string | undefined,
): Promise<{ at: Date; replayed: boolean }> {
  const run = await claimManualRun(e, key, () => s.lastActionAt(e._id));
  if (run.replayed) return { at: run.at, replayed: true };
  try {
    return { at: await s.triggerSchedule(e._id, e.overlap ?? 'skip', run.at), replayed: false };
  } catch (err) {
    await run.release();
    throw err;
  }
}

/**
 * Execute now (also while paused): an admin's run through the Schedule's trigger, or with an
 * Idempotency-Key one run per key; below admin a run by hand under the limits (`runByHand`).
 */
export async function runEventNow(actor: Actor, organization_id: string, event_id: string, key: string | undefined) {
  const s = await schedules();
  const e = await visibleEvent(actor, organization_id, event_id);
  // Running now is doing it by hand: the caller needs the rights too (a basic owner of an event an
  // admin saved cannot repeat an admin-only award or report at will).
  await checkEventRights(
    { organization_id, user_id: e.user_id, type_of_event: e.type_of_event, metadata: eventMetadata(e) },
    actor.level,
  );
  const { at, replayed } =
    actor.level >= ADMIN_LEVEL
      ? key === undefined
        ? { at: await s.triggerSchedule(event_id), replayed: false }
        : await s.runOnce(e, key)
      : await runByHand(s, e, key);
  return {
    success: true as const,
    event_id,
    execution_time: at.toISOString(),
    ...(key === undefined ? {} : { replayed }),
    ...(e.paused
      ? {
          paused: true as const,
          detail: 'The event is paused: this run was started by hand; its schedule stays paused',
        }
      : {}),
  };
}

/** An event the caller may see, its runs newest first (`from`/`to` inclusive; errors as the caller's level may read them). */
export async function eventRuns(viewer: Viewer, organization_id: string, event_id: string, filter: RunFilter) {
  if (filter.from && filter.to && filter.to < filter.from) throw invalid('to', 'must not be before from');
  await visibleEvent(viewer, organization_id, event_id);
  const runs = await listRuns(organization_id, event_id, filter, viewer.level);
  return { success: true as const, event_id, runs };
}
