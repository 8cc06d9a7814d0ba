/**
 * Scheduler, both interface variants on one event store and one Temporal Schedule per event.
 * Variant A `/scheduler/events` (event_type, schedule_time, user_id, metadata); variant B
 * `/api/scheduler-service/events` (type_of_event, recurrency, start_event, end_date, idp_id).
 */
import { z } from 'zod';
import { nextRuns, RECURRENCES } from '../../activities/scheduler';
import { abandonUpdate, claimManualRun, commitUpdate, createEvent, deleteEvent, eventNotFound, getEvent, listEvents, listRuns, prepareUpdate, setPaused, storedEvent, type EventInput } from '../../activities/scheduler';
import { checkEventRights, type Actor } from '../../activities/scheduler';
import { DEFAULT_CATCHUP_MINUTES, EVENT_TYPES, FAILURES, OVERLAPS } from '../../activities/scheduler/constants';
import { eventMetadata as storedMetadata, type EventDoc } from '../../activities/scheduler';
import { invalid } from '../../activities/core/errors';
import type { Principal } from '../../activities/identity';
import { actingUser, existingUser, organizationFor } from '../auth';
import { defineRoute } from '../http';
import { idempotencyKeyOf } from '../idempotency';
import { organizationId, requiredId } from '../schemas';
import { createSchedule, deleteSchedule, lastActionAt, pauseSchedule, runOnce, triggerSchedule, updateSchedule } from '../schedules';
import { ADMIN_LEVEL } from '../../activities/identity/constants';

const tag = 'scheduler';
const when = z.iso.datetime({ offset: true }).transform((s) => new Date(s));
const eventType = z.enum(EVENT_TYPES);
const recurrency = z.enum(RECURRENCES).nullable().optional();
const metadata = z.record(z.string(), z.unknown()).default({});
const controls = {
  cron: z.string().trim().max(100).optional().describe('with recurrency "cron": minute hour day-of-month month day-of-week, in the event\'s time zone'),
  overlap: z.enum(OVERLAPS).optional().describe('while a run is still going at the next time: skip it (default), buffer one, or allow all (admin keys only)'),
  catchup_window_minutes: z.number().int().min(1).max(10_080).optional().describe(`how late a missed time (server or workers down) still runs; default ${DEFAULT_CATCHUP_MINUTES}; a basic key at most SCHEDULER_MAX_CATCHUP_MINUTES_BASIC (60)`),
};

// Answers (documentation only: the handlers' views below are typed by them).
const isoTime = z.string().describe('ISO 8601 time');
const eventMetadata = z.record(z.string(), z.unknown());
const controlFields = {
  cron: z.string().nullable(),
  paused: z.boolean(),
  pause_note: z.string().nullable(),
  paused_at: isoTime.nullable(),
  overlap: z.enum(OVERLAPS),
  catchup_window_minutes: z.number().int(),
  next_runs: z.array(isoTime).describe('the next 5 times by the rule (computed while paused too)'),
};
const eventA = z
  .object({
    event_id: z.string(),
    event_type: eventType,
    schedule_time: isoTime,
    user_id: z.string(),
    idp_id: z.string(),
    organization_id: z.string(),
    recurrency: z.enum(RECURRENCES).nullable(),
    end_date: isoTime.nullable(),
    status: z.enum(['scheduled', 'completed']),
    metadata: eventMetadata,
    ...controlFields,
  })
  .meta({ id: 'SchedulerEvent' });
const eventB = z
  .object({
    id: z.string(),
    idp_id: z.string(),
    user_id: z.string(),
    organization_id: z.string(),
    type_of_event: eventType,
    recurrency: z.enum(RECURRENCES).nullable(),
    start_event: isoTime,
    end_date: isoTime.nullable(),
    status: z.enum(['scheduled', 'completed']),
    metadata: eventMetadata,
    ...controlFields,
    created_at: isoTime,
    updated_at: isoTime,
  })
  .meta({ id: 'SchedulerServiceEvent' });
const run = z
  .object({
    run_id: z.string(),
    time: isoTime,
    scheduled_time: isoTime.nullable().describe('the rule time this run was for; null when run by hand'),
    trigger: z.enum(['scheduled', 'manual']),
    outcome: z.enum(['success', 'failed', 'skipped']),
    failure: z.enum(FAILURES).nullable().describe('why a failed run failed: not_allowed (403), limit (409/429), refused (another 4xx), internal (anything else); null otherwise and on runs recorded before failures were classed'),
    error: z.string().nullable().describe("a failed run's text: for an internal failure a basic reader sees a fixed text, the detail is for admins and the log"),
    result: z.record(z.string(), z.unknown()).nullable(),
  })
  .meta({ id: 'SchedulerRun' });
const savedA = z.object({ success: z.literal(true), event_id: z.string(), schedule_time: isoTime });
const oneA = z.object({ success: z.literal(true), event: eventA });
const oneB = z.object({ success: z.literal(true), event: eventB });

const NEXT_RUNS = 5;
const controlView = (e: EventDoc) => ({
  cron: e.cron ?? null,
  paused: e.paused === true,
  pause_note: e.paused ? (e.pause_note ?? null) : null,
  paused_at: e.paused && e.paused_at ? e.paused_at.toISOString() : null,
  overlap: e.overlap ?? 'skip',
  catchup_window_minutes: e.catchup_window_minutes ?? DEFAULT_CATCHUP_MINUTES,
  next_runs: nextRuns({ start: e.start_event, end: e.end_date, recurrency: e.recurrency, cron: e.cron, timezone: e.timezone }, new Date(), NEXT_RUNS)
    .filter(() => e.status !== 'completed')
    .map((d) => d.toISOString()),
});

const viewA = (e: EventDoc): z.output<typeof eventA> => ({
  event_id: e._id,
  event_type: e.type_of_event,
  schedule_time: e.start_event.toISOString(),
  user_id: e.user_id,
  idp_id: e.idp_id,
  organization_id: e.organization_id,
  recurrency: e.recurrency,
  end_date: e.end_date?.toISOString() ?? null,
  status: e.status,
  metadata: storedMetadata(e),
  ...controlView(e),
});
const viewB = (e: EventDoc): z.output<typeof eventB> => ({
  id: e._id,
  idp_id: e.idp_id,
  user_id: e.user_id,
  organization_id: e.organization_id,
  type_of_event: e.type_of_event,
  recurrency: e.recurrency,
  start_event: e.start_event.toISOString(),
  end_date: e.end_date?.toISOString() ?? null,
  status: e.status,
  metadata: storedMetadata(e),
  ...controlView(e),
  created_at: e.created_at.toISOString(),
  updated_at: e.updated_at.toISOString(),
});

/** The event, if the caller may see it (its organization; a basic key: its own events). */
async function visibleEvent(p: Principal, org: string, event_id: string): Promise<EventDoc> {
  const e = await getEvent(org, event_id);
  if (p.level === 0 && e.user_id !== p.user_id) throw eventNotFound();
  return e;
}

const actorOf = (p: Principal): Actor => ({ key_id: p.key_id, user_id: p.user_id, level: p.level });

async function create(p: Principal, orgRequested: string | undefined, userRef: string, input: EventInput): Promise<EventDoc> {
  const org = organizationFor(p, orgRequested);
  const user = await actingUser(p, org, userRef);
  const event = await createEvent({ organization_id: org, user_id: user.user_id, idp_id: user.idp_id }, input, actorOf(p));
  try {
    await createSchedule(event);
  } catch (err) {
    await deleteEvent(org, event._id).catch(() => undefined); // nothing half-created stays behind
    throw err;
  }
  return event;
}

/** The Schedule changes first; the store follows only once the Schedule accepted the change. */
async function update(p: Principal, orgRequested: string | undefined, event_id: string, input: EventInput): Promise<EventDoc> {
  const org = organizationFor(p, orgRequested);
  await visibleEvent(p, org, event_id);
  const { prev, next } = await prepareUpdate(org, event_id, input, actorOf(p));
  // An ended event made to run again took places under the caps: they go if the Schedule refuses.
  await updateSchedule(next).catch(async (err) => {
    await abandonUpdate(prev, next).catch(() => undefined);
    throw err;
  });
  try {
    return await commitUpdate(prev, next);
  } catch (err) {
    // Another update or a delete came between: the Schedule follows what the store holds now.
    const now = await storedEvent(org, event_id).catch(() => undefined);
    if (now) await updateSchedule(now).catch(() => undefined);
    else if (now === null) await deleteSchedule(event_id).catch(() => undefined);
    throw err;
  }
}

async function remove(p: Principal, orgRequested: string | undefined, event_id: string) {
  const org = organizationFor(p, orgRequested);
  await visibleEvent(p, org, event_id);
  await deleteSchedule(event_id);
  await deleteEvent(org, event_id);
  return { success: true, message: `Event ${event_id} deleted` };
}

/**
 * A run by hand below the admin level (README, Scheduler: limits): at most one per
 * SCHEDULER_MIN_INTERVAL_SECONDS_BASIC after the event's last run (429 otherwise), none of an
 * ended event (409: each stored event would add runs), through the
 * Schedule's trigger with the event's overlap policy; an Idempotency-Key answers its first run.
 */
async function runByHand(e: EventDoc, key: string | undefined): Promise<{ at: Date; replayed: boolean }> {
  const run = await claimManualRun(e, key, () => lastActionAt(e._id));
  if (run.replayed) return { at: run.at, replayed: true };
  try {
    return { at: await triggerSchedule(e._id, e.overlap ?? 'skip', run.at), replayed: false };
  } catch (err) {
    await run.release();
    throw err;
  }
}

async function execute(p: Principal, orgRequested: string | undefined, event_id: string, key: string | undefined) {
  const org = organizationFor(p, orgRequested);
  const e = await visibleEvent(p, org, event_id);
  // Running now is doing it by hand: the caller needs the rights too (a basic owner of an event an
  // admin saved cannot repeat an admin-only award or report at will).
  await checkEventRights({ organization_id: org, user_id: e.user_id, type_of_event: e.type_of_event, metadata: storedMetadata(e) }, p.level);
  const { at, replayed } = p.level >= ADMIN_LEVEL ? (key === undefined ? { at: await triggerSchedule(event_id), replayed: false } : await runOnce(e, key)) : await runByHand(e, key);
  return {
    success: true as const,
    event_id,
    execution_time: at.toISOString(),
    ...(key === undefined ? {} : { replayed }),
    ...(e.paused ? { paused: true, detail: 'The event is paused: this run was started by hand; its schedule stays paused' } : {}),
  };
}

/** Same ownership as an update; the Schedule pauses first, the store follows once it accepted. */
async function pause(p: Principal, orgRequested: string | undefined, event_id: string, paused: boolean, note: string | undefined) {
  const org = organizationFor(p, orgRequested);
  await visibleEvent(p, org, event_id);
  await pauseSchedule(event_id, paused, note ?? null);
  const e = await setPaused(org, event_id, paused, paused ? (note ?? null) : null);
  const v = controlView(e);
  return { success: true as const, event_id, paused: v.paused, pause_note: v.pause_note, paused_at: v.paused_at, next_runs: v.next_runs };
}

async function list(p: Principal, query: { idp_id?: string; organization_id?: string }) {
  const org = organizationFor(p, query.organization_id);
  let user_id: string | undefined;
  if (p.level === 0) user_id = p.user_id;
  if (query.idp_id) user_id = (await existingUser(p, org, query.idp_id, 'Event not found')).user_id;
  return listEvents(org, user_id);
}

const idParam = z.object({ event_id: requiredId });
const orgQuery = z.object({ organization_id: organizationId });
const runsQuery = z.object({
  organization_id: organizationId,
  status: z.enum(['success', 'failed', 'skipped']).optional().describe('the outcome'),
  from: when.optional().describe('runs started at or after'),
  to: when.optional().describe('runs started at or before'),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  offset: z.coerce.number().int().min(0).max(100_000).default(0),
});
const listQuery = z.object({ idp_id: z.string().trim().min(1).optional(), organization_id: organizationId });

// ---- Both variants: delete and execute are the same operation with the same answer.
defineRoute({
  method: 'DELETE', paths: ['/scheduler/events/:event_id', '/api/scheduler-service/events/:event_id'], tag, auth: 'key',
  summary: 'Deletes an event and its Schedule',
  params: idParam, query: orgQuery,
  response: z.object({ success: z.literal(true), message: z.string() }),
  handler: ({ principal, params, query }) => remove(principal, query.organization_id, params.event_id),
});
defineRoute({
  method: 'POST', paths: ['/scheduler/events/:event_id/execute', '/api/scheduler-service/events/:event_id/execute'], tag, auth: 'key',
  summary: 'Runs the event now (also while paused); returns execution_time. The same Idempotency-Key starts one run. A basic key: 429 with Retry-After within SCHEDULER_MIN_INTERVAL_SECONDS_BASIC of the last run; 409 for an ended event (update it to run again); the event\'s overlap policy',
  params: idParam, query: orgQuery, idempotent: true,
  response: z.object({
    success: z.literal(true),
    event_id: z.string(),
    execution_time: isoTime,
    replayed: z.boolean().optional().describe('with an Idempotency-Key: true when the key had already started the run'),
    paused: z.literal(true).optional(),
    detail: z.string().optional(),
  }),
  handler: ({ event, principal, params, query }) => execute(principal, query.organization_id, params.event_id, idempotencyKeyOf(event)),
});
const pauseBody = z.object({ note: z.string().trim().max(500).optional(), organization_id: organizationId });
const pauseAnswer = z.object({ success: z.literal(true), event_id: z.string(), paused: z.boolean(), pause_note: z.string().nullable(), paused_at: isoTime.nullable(), next_runs: z.array(isoTime) });
for (const [action, paused] of [['pause', true], ['resume', false]] as const) {
  defineRoute({
    method: 'POST', paths: [`/scheduler/events/:event_id/${action}`, `/api/scheduler-service/events/:event_id/${action}`], tag, auth: 'key',
    summary: paused ? "Pauses the event's Schedule (optional note): nothing runs until resumed; execute-now still works" : "Resumes the event's Schedule; times missed while paused are not run",
    params: idParam, body: pauseBody,
    response: pauseAnswer,
    handler: ({ principal, params, body }) => pause(principal, body.organization_id, params.event_id, paused, body.note),
  });
}
defineRoute({
  method: 'GET', paths: ['/scheduler/events/:event_id/runs', '/api/scheduler-service/events/:event_id/runs'], tag, auth: 'key',
  summary: "An event's runs, newest first: time, trigger (scheduled/manual), outcome, error; filters status, from, to; paged by limit/offset",
  params: idParam, query: runsQuery,
  response: z.object({ success: z.literal(true), event_id: z.string(), runs: z.array(run) }),
  handler: async ({ principal, params, query }) => {
    const org = organizationFor(principal, query.organization_id);
    if (query.from && query.to && query.to < query.from) throw invalid('to', 'must not be before from');
    await visibleEvent(principal, org, params.event_id);
    const runs = await listRuns(org, params.event_id, query, principal.level);
    return { success: true, event_id: params.event_id, runs };
  },
});

// ---- Variant A
const bodyA = z.object({ event_type: eventType, schedule_time: when, user_id: requiredId, organization_id: organizationId, recurrency, end_date: when.optional(), metadata, ...controls });
const inputA = (b: { event_type: EventInput['type_of_event']; schedule_time: Date; recurrency?: EventInput['recurrency']; end_date?: Date; metadata: Record<string, unknown>; cron?: string; overlap?: EventInput['overlap']; catchup_window_minutes?: number }): EventInput => ({
  cron: b.cron,
  overlap: b.overlap,
  catchup_window_minutes: b.catchup_window_minutes,
  type_of_event: b.event_type,
  start_event: b.schedule_time,
  recurrency: b.recurrency ?? (typeof b.metadata.recurrency === 'string' && (RECURRENCES as readonly string[]).includes(b.metadata.recurrency) ? (b.metadata.recurrency as EventInput['recurrency']) : null),
  end_date: b.end_date ?? null,
  metadata: b.metadata,
});

defineRoute({
  method: 'POST', paths: ['/scheduler/events'], tag, auth: 'key',
  summary: 'Creates an event and its Temporal Schedule (variant A)',
  body: bodyA,
  response: savedA,
  handler: async ({ principal, body }) => {
    const e = await create(principal, body.organization_id, body.user_id, inputA(body));
    return { success: true, event_id: e._id, schedule_time: e.start_event.toISOString() };
  },
});
defineRoute({
  method: 'GET', paths: ['/scheduler/events'], tag, auth: 'key',
  summary: 'Lists the events the caller may see (filters idp_id, organization_id) (variant A)',
  query: listQuery,
  response: z.object({ success: z.literal(true), events: z.array(eventA) }),
  handler: async ({ principal, query }) => ({ success: true, events: (await list(principal, query)).map(viewA) }),
});
defineRoute({
  method: 'GET', paths: ['/scheduler/events/:event_id'], tag, auth: 'key',
  summary: 'One event the caller may see (variant A)',
  params: idParam, query: orgQuery,
  response: oneA,
  handler: async ({ principal, params, query }) => ({ success: true, event: viewA(await visibleEvent(principal, organizationFor(principal, query.organization_id), params.event_id)) }),
});
defineRoute({
  method: 'PUT', paths: ['/scheduler/events/:event_id'], tag, auth: 'key',
  summary: 'Updates an event; its Schedule is updated in place (variant A)',
  params: idParam,
  body: bodyA.omit({ user_id: true }),
  response: savedA,
  handler: async ({ principal, params, body }) => {
    const e = await update(principal, body.organization_id, params.event_id, inputA(body));
    return { success: true, event_id: e._id, schedule_time: e.start_event.toISOString() };
  },
});
// ---- Variant B
const bodyB = z.object({ idp_id: requiredId, organization_id: organizationId, type_of_event: eventType, recurrency, start_event: when, end_date: when.nullable().optional(), metadata, ...controls });
const inputB = (b: z.infer<typeof bodyB>): EventInput => ({ type_of_event: b.type_of_event, recurrency: b.recurrency ?? null, start_event: b.start_event, end_date: b.end_date ?? null, metadata: b.metadata, cron: b.cron, overlap: b.overlap, catchup_window_minutes: b.catchup_window_minutes });

defineRoute({
  method: 'POST', paths: ['/api/scheduler-service/events'], tag, auth: 'key',
  summary: 'Creates an event and its Temporal Schedule (variant B)',
  body: bodyB,
  response: oneB,
  handler: async ({ principal, body }) => ({ success: true, event: viewB(await create(principal, body.organization_id, body.idp_id, inputB(body))) }),
});
defineRoute({
  method: 'GET', paths: ['/api/scheduler-service/events'], tag, auth: 'key',
  summary: 'Lists the events the caller may see (filters idp_id, organization_id) (variant B)',
  query: listQuery,
  response: z.object({ success: z.literal(true), events: z.array(eventB) }),
  handler: async ({ principal, query }) => ({ success: true, events: (await list(principal, query)).map(viewB) }),
});
defineRoute({
  method: 'GET', paths: ['/api/scheduler-service/events/:event_id'], tag, auth: 'key',
  summary: 'One event the caller may see (variant B)',
  params: idParam, query: orgQuery,
  response: oneB,
  handler: async ({ principal, params, query }) => ({ success: true, event: viewB(await visibleEvent(principal, organizationFor(principal, query.organization_id), params.event_id)) }),
});
defineRoute({
  method: 'PUT', paths: ['/api/scheduler-service/events/:event_id'], tag, auth: 'key',
  summary: 'Updates an event (same body as create); its Schedule is updated in place (variant B)',
  params: idParam,
  body: bodyB,
  response: oneB,
  handler: async ({ principal, params, body }) => ({ success: true, event: viewB(await update(principal, body.organization_id, params.event_id, inputB(body))) }),
});
