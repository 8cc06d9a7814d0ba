/** Scheduled events (both interface variants share this store): creating, changing, pausing, listing, deleting. Their runs: event-runs.ts. */
import { conflict, forbidden, invalid, notFound, PlatformError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { ADMIN_LEVEL } from '../identity/constants.ts';
import { isTimeZone, minGapSeconds, nextRuns, type Recurrence } from './calendar.ts';
import { DEFAULT_CATCHUP_MINUTES, type EventType, type Overlap } from './constants.ts';
import { parseCron } from './cron.ts';
import { taskFor } from './registry.ts';
import { type Actor, checkEventRights } from './rights.ts';
import { schedulerSettings } from './settings.ts';
import {
  completedEvents,
  encodeMetadata,
  endsAt,
  eventById,
  type EventDoc,
  eventsOf,
  giveBackTaken,
  insertEvent,
  keepTaken,
  placeFields,
  type PlaceKind,
  type Places,
  placesOf,
  placesReady,
  removeEvent,
  type Taken,
  takePlace,
  tokenFields,
  writeOverRevision,
  writePause,
} from './store.ts';

export interface EventInput {
  type_of_event: EventType;
  recurrency: Recurrence | null;
  start_event: Date;
  end_date: Date | null;
  metadata: Record<string, unknown>;
  /** the expression of a `cron` recurrence */
  cron?: string | null;
  /** omitted on an update: kept as they are; on a create: the defaults */
  overlap?: Overlap;
  catchup_window_minutes?: number;
}

export const eventNotFound = () => notFound('Event not found');

/** Temporal calendars have one-second resolution: times are kept at whole seconds. */
const wholeSeconds = (d: Date) => new Date(Math.floor(d.getTime() / 1000) * 1000);
const normalized = (input: EventInput): EventInput => ({
  ...input,
  start_event: wholeSeconds(input.start_event),
  end_date: input.end_date ? wholeSeconds(input.end_date) : null,
});

/**
 * Temporal's calendar specs stop at the year 2100. Times are kept a day short of its end so that
 * no time zone's wall clock reaches 2101.
 */
const LAST_TIME = Date.UTC(2100, 11, 31);

/** Rules every create and update passes (422 naming the field). */
function checkTiming(input: EventInput, now = new Date()): string | null {
  const tz = typeof input.metadata.timezone === 'string' ? input.metadata.timezone : null;
  if (tz && !isTimeZone(tz)) throw invalid('metadata.timezone', `unknown IANA time zone "${tz}"`);
  if (input.start_event.getTime() >= LAST_TIME)
    throw invalid('start_event', 'must be before 2100-12-31T00:00:00Z (the end of the scheduling calendar)');
  if (input.end_date && input.end_date.getTime() >= LAST_TIME)
    throw invalid('end_date', 'must be before 2100-12-31T00:00:00Z (the end of the scheduling calendar)');
  if (input.end_date && input.end_date.getTime() <= input.start_event.getTime())
    throw invalid('end_date', 'must be after start_event');
  if (!input.recurrency && input.start_event.getTime() <= now.getTime())
    throw invalid('start_event', 'a one-off event must be in the future');
  if (input.recurrency === 'cron') {
    if (!input.cron) throw invalid('cron', 'required with recurrency "cron" (e.g. "0 9 * * 1-5")');
    const parsed = parseCron(input.cron);
    if (typeof parsed === 'string') throw invalid('cron', parsed);
    if (nextRuns({ start: input.start_event, recurrency: 'cron', cron: input.cron, timezone: tz }, now, 1).length === 0)
      throw invalid('cron', 'matches no date');
  } else if (input.cron) throw invalid('cron', 'only with recurrency "cron"');
  if (
    input.recurrency &&
    input.end_date &&
    nextRuns(
      { start: input.start_event, end: input.end_date, recurrency: input.recurrency, cron: input.cron, timezone: tz },
      now,
      1,
    ).length === 0
  ) {
    throw invalid('end_date', 'the event would never run again');
  }
  return tz;
}

export const duration = (s: number) =>
  s % 3600 === 0
    ? `${s / 3600} hour${s === 3600 ? '' : 's'}`
    : s % 60 === 0
      ? `${s / 60} minute${s === 60 ? '' : 's'}`
      : `${s} seconds`;

/**
 * What an event below the admin level may put on the scheduler (docs/components/scheduler.md, Limits): runs
 * at least SCHEDULER_MIN_INTERVAL_SECONDS_BASIC apart (422), no `allow_all` overlap and a catch-up
 * window of at most SCHEDULER_MAX_CATCHUP_MINUTES_BASIC (403: an admin may). Checked on the values
 * a save stores, at the saver's level, and again at every run at the level it runs with (an
 * admin's event whose admin key went runs as basic and fails).
 */
export function checkLoad(
  e: Pick<
    EventDoc,
    'start_event' | 'end_date' | 'recurrency' | 'cron' | 'timezone' | 'overlap' | 'catchup_window_minutes'
  >,
  level: number,
): void {
  if (level >= ADMIN_LEVEL) return;
  const cfg = schedulerSettings();
  if (e.overlap === 'allow_all')
    throw forbidden(
      'overlap "allow_all" requires the admin permission (runs of a basic key\'s event never pile up: use "skip" or "buffer_one")',
    );
  const catchup = e.catchup_window_minutes ?? DEFAULT_CATCHUP_MINUTES;
  const maxCatchup = cfg.SCHEDULER_MAX_CATCHUP_MINUTES_BASIC;
  if (catchup > maxCatchup)
    throw forbidden(
      `catchup_window_minutes above ${maxCatchup} requires the admin permission (SCHEDULER_MAX_CATCHUP_MINUTES_BASIC)`,
    );
  const min = cfg.SCHEDULER_MIN_INTERVAL_SECONDS_BASIC;
  if (!min || !e.recurrency) return;
  const gap = minGapSeconds({
    start: e.start_event,
    end: e.end_date,
    recurrency: e.recurrency,
    cron: e.cron,
    timezone: e.timezone,
  });
  if (gap < min) {
    throw invalid(
      e.recurrency === 'cron' ? 'cron' : 'recurrency',
      `runs ${duration(gap)} apart at the closest; a basic key's event runs at least ${duration(min)} apart (SCHEDULER_MIN_INTERVAL_SECONDS_BASIC)`,
    );
  }
}

const overUserCap = (cap: number) =>
  conflict(
    `A user may have at most ${cap} active scheduled events (SCHEDULER_MAX_EVENTS_PER_USER); delete one or wait for one to end`,
  );
const overOrganizationCap = (cap: number) =>
  conflict(
    `An organization may have at most ${cap} active scheduled events (SCHEDULER_MAX_EVENTS_PER_ORGANIZATION); delete one or wait for one to end`,
  );
const overStoredCap = (cap: number) =>
  conflict(
    `A user may store at most ${cap} scheduled events, ended ones included (SCHEDULER_MAX_STORED_EVENTS_PER_USER); delete one`,
  );

/**
 * The event's places under the caps beyond those it `holds` (store.ts `takePlace`, exact when
 * creations race), or 409 naming the cap (what was taken is given back). An event holds its
 * places while active and while paused (a resume never meets the cap); once ended, its active
 * places are given back lazily, when a counter is full (store.ts `freeFull`). A create (`holds` undefined) also takes a place among the user's stored events,
 * first: held until the event is deleted, never taken again by an update.
 */
async function takePlaces(
  organization_id: string,
  user_id: string,
  event_id: string,
  holds?: Places,
): Promise<Taken[]> {
  const cfg = schedulerSettings();
  const counters: Array<{ kind: PlaceKind; cap: number; over: (cap: number) => PlatformError }> = [
    { kind: 'stored', cap: cfg.SCHEDULER_MAX_STORED_EVENTS_PER_USER, over: overStoredCap },
    { kind: 'user', cap: cfg.SCHEDULER_MAX_EVENTS_PER_USER, over: overUserCap },
    { kind: 'organization', cap: cfg.SCHEDULER_MAX_EVENTS_PER_ORGANIZATION, over: overOrganizationCap },
  ];
  const taken: Taken[] = [];
  try {
    for (const c of counters) {
      if (holds && (c.kind === 'stored' || holds[c.kind])) continue;
      const place = await takePlace(c.kind, { organization_id, user_id }, c.cap, event_id);
      if (!place) throw c.over(c.cap);
      taken.push(place);
    }
  } catch (err) {
    await giveBackTaken(taken).catch(() => undefined);
    throw err;
  }
  return taken;
}

/** The places a prepared update took (`prepareUpdate` → `commitUpdate` / `abandonUpdate`, the same `next` object). */
const takenFor = new WeakMap<EventDoc, Taken[]>();

/** Metadata a type needs to run at all, checked when the event is saved in the organization. */
async function checkMetadata(input: EventInput, organization_id: string): Promise<void> {
  await taskFor(input.type_of_event).checkMetadata?.(input.metadata, { organization_id });
}

/** What a save (create or update) writes: the event's definition and who saved it, whose rights its runs use. */
const savedFields = (input: EventInput, timezone: string | null, a: Actor) => ({
  type_of_event: input.type_of_event,
  recurrency: input.recurrency,
  cron: input.recurrency === 'cron' ? (input.cron ?? null) : null,
  start_event: input.start_event,
  end_date: input.end_date,
  timezone,
  metadata_json: encodeMetadata(input.metadata),
  status: 'scheduled' as const,
  actor_key_id: a.key_id,
  actor_user_id: a.user_id,
  actor_level: a.level,
  ...(input.overlap ? { overlap: input.overlap } : {}),
  ...(input.catchup_window_minutes !== undefined ? { catchup_window_minutes: input.catchup_window_minutes } : {}),
});

export async function createEvent(
  owner: { organization_id: string; user_id: string; idp_id: string },
  raw: EventInput,
  actor: Actor,
): Promise<EventDoc> {
  const input = normalized(raw);
  const timezone = checkTiming(input);
  const fields = savedFields(input, timezone, actor);
  checkLoad(fields, actor.level);
  await checkEventRights({ ...owner, type_of_event: input.type_of_event, metadata: input.metadata }, actor.level);
  await checkMetadata(input, owner.organization_id);
  await placesReady();
  const _id = newId('evt');
  const taken = await takePlaces(owner.organization_id, owner.user_id, _id);
  let doc: EventDoc;
  try {
    doc = await insertEvent({
      _id,
      ...owner,
      ...fields,
      rev: 0,
      ...placeFields({ stored: true, user: true, organization: true }),
      ...tokenFields(undefined, taken),
      ends_at: endsAt(fields),
    });
  } catch (err) {
    await giveBackTaken(taken).catch(() => undefined);
    throw err;
  }
  keepTaken(taken);
  return doc;
}

const findEvent = eventById;

/** A one-off event whose run at its start time happened reads as completed. */
async function withStatus(docs: EventDoc[]): Promise<EventDoc[]> {
  const oneOff = docs.filter((d) => !d.recurrency && d.status !== 'completed');
  if (!oneOff.length) return docs;
  const done = await completedEvents(oneOff);
  return docs.map((d) => (!d.recurrency && done.has(d._id) ? { ...d, status: 'completed' as const } : d));
}

export async function getEvent(organization_id: string, event_id: string): Promise<EventDoc> {
  const doc = await findEvent(organization_id, event_id);
  if (!doc) throw eventNotFound();
  return (await withStatus([doc]))[0];
}

/**
 * An update in two steps, so the store never disagrees with the Schedule: `prepareUpdate` checks
 * the change and returns the event as it would be (nothing written but the places an ended
 * event takes back, which `abandonUpdate` frees); the caller updates the Schedule with it, then
 * `commitUpdate` writes it only over the version that was read.
 */
export async function prepareUpdate(
  organization_id: string,
  event_id: string,
  raw: EventInput,
  actor: Actor,
): Promise<{ prev: EventDoc; next: EventDoc }> {
  const input = normalized(raw);
  await placesReady();
  const prev = await findEvent(organization_id, event_id);
  if (!prev) throw eventNotFound();
  const timezone = checkTiming(input);
  // Omitted controls are kept: checked as kept, at the level of this saver (who may be basic where the last one was an admin).
  const fields = savedFields(
    {
      ...input,
      overlap: input.overlap ?? prev.overlap,
      catchup_window_minutes: input.catchup_window_minutes ?? prev.catchup_window_minutes,
    },
    timezone,
    actor,
  );
  checkLoad(fields, actor.level);
  await checkEventRights(
    { organization_id, user_id: prev.user_id, type_of_event: input.type_of_event, metadata: input.metadata },
    actor.level,
  );
  await checkMetadata(input, organization_id);
  // An ended event gave up its places (or will): running again, it takes back those it lost, last
  // of all the checks (409 naming the cap when full). Events saved before the caps take none.
  const held = placesOf(prev);
  const taken = held ? await takePlaces(organization_id, prev.user_id, event_id, held) : [];
  const next: EventDoc = {
    ...prev,
    ...fields,
    rev: (prev.rev ?? 0) + 1,
    ...(held
      ? { ...placeFields({ ...held, user: true, organization: true }), ...tokenFields(prev.place_tokens, taken) }
      : {}),
    ends_at: endsAt(fields),
  };
  takenFor.set(next, taken);
  return { prev, next };
}

/** Gives back the places a prepared update took (its Schedule refused it, or it was not committed); a second call gives nothing. */
export async function abandonUpdate(_prev: EventDoc, next: EventDoc): Promise<void> {
  await giveBackTaken(takenFor.get(next) ?? []);
}

/**
 * Writes the prepared event if the store still holds the version it was prepared from; else 409
 * (another update or a delete came between) and the caller puts the Schedule back in step.
 */
export async function commitUpdate(prev: EventDoc, next: EventDoc): Promise<EventDoc> {
  // The pause is its own change (setPaused): an update never writes back the pause it read.
  const { _id, created_at: _c, updated_at: _u, paused: _p, pause_note: _n, paused_at: _a, slots: _s, ...fields } = next;
  const doc = await writeOverRevision(prev.organization_id, _id, prev.rev, fields);
  if (!doc) {
    await abandonUpdate(prev, next).catch(() => undefined);
    throw conflict('The event was changed or deleted at the same time; read it and try again');
  }
  keepTaken(takenFor.get(next) ?? []);
  return (await withStatus([doc]))[0];
}

/** The event as stored now (null: deleted), to put its Schedule back in step after a conflict. */
export const storedEvent = (organization_id: string, event_id: string) => findEvent(organization_id, event_id);

export async function deleteEvent(organization_id: string, event_id: string): Promise<void> {
  if (!(await removeEvent(organization_id, event_id))) throw eventNotFound();
}

export async function listEvents(organization_id: string, user_id?: string): Promise<EventDoc[]> {
  return withStatus(await eventsOf(organization_id, user_id));
}

/**
 * Records the pause or resume the event's Schedule already accepted (a single-document update;
 * `rev` is left alone, so an update in flight still commits its definition).
 */
export async function setPaused(
  organization_id: string,
  event_id: string,
  paused: boolean,
  note: string | null,
): Promise<EventDoc> {
  const doc = await writePause(organization_id, event_id, {
    paused,
    pause_note: note,
    paused_at: paused ? new Date() : null,
  });
  if (!doc) throw eventNotFound();
  return (await withStatus([doc]))[0];
}
