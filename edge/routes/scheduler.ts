/**
 * Scheduler, both interface variants on one event store and one Temporal Schedule per event
 * (the scheduler component keeps the two in step). Variant A `/scheduler/events` (event_type,
 * schedule_time, user_id, metadata); variant B `/api/scheduler-service/events` (type_of_event,
 * recurrency, start_event, end_date, idp_id). Each handler parses, authorizes, and makes one call.
 */
import { z } from 'zod';

import type { Principal } from '../../activities/identity/index.ts';
import {
  DEFAULT_CATCHUP_MINUTES,
  EVENT_TYPES,
  FAILURES,
  OVERLAPS,
  WEBHOOK_SECRET_DEFAULT_GRACE_SECONDS,
  WEBHOOK_SECRET_MAX_GRACE_SECONDS,
} from '../../activities/scheduler/constants.ts';
import {
  createScheduledEvent,
  deleteScheduledEvent,
  type EventInput,
  eventRuns,
  eventViewA,
  eventViewB,
  listVisibleEvents,
  pauseScheduledEvent,
  RECURRENCES,
  rotateWebhookSecret,
  runEventNow,
  savedViewA,
  updateScheduledEvent,
  visibleEvent,
  webhookSecretStatus,
} from '../../activities/scheduler/index.ts';
import { actingUser, existingUser, organizationFor } from '../auth.ts';
import { answerField, defineRoute } from '../http.ts';
import { idempotencyKeyOf } from '../idempotency.ts';
import { organizationId, requiredId } from '../schemas.ts';

const tag = 'scheduler';
const when = z.iso.datetime({ offset: true }).transform((s) => new Date(s));
const eventType = z.enum(EVENT_TYPES);
const recurrency = z.enum(RECURRENCES).nullable().optional();
const metadata = z.record(z.string(), z.unknown()).default({});
const controls = {
  cron: z
    .string()
    .trim()
    .max(100)
    .optional()
    .describe('with recurrency "cron": minute hour day-of-month month day-of-week, in the event\'s time zone'),
  overlap: z
    .enum(OVERLAPS)
    .optional()
    .describe(
      'while a run is still going at the next time: skip it (default), buffer one, or allow all (admin keys only)',
    ),
  catchup_window_minutes: z
    .number()
    .int()
    .min(1)
    .max(10_080)
    .optional()
    .describe(
      `how late a missed time (server or workers down) still runs; default ${DEFAULT_CATCHUP_MINUTES}; a basic key at most SCHEDULER_MAX_CATCHUP_MINUTES_BASIC (60)`,
    ),
};

// Answers (documentation only: the component's views are checked against them below).
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
    failure: z
      .enum(FAILURES)
      .nullable()
      .describe(
        'why a failed run failed: not_allowed (403), limit (409/429), refused (another 4xx), internal (anything else); null otherwise and on runs recorded before failures were classed',
      ),
    error: z
      .string()
      .nullable()
      .describe(
        "a failed run's text: for an internal failure a basic reader sees a fixed text, the detail is for admins and the log",
      ),
    result: z.record(z.string(), z.unknown()).nullable(),
  })
  .meta({ id: 'SchedulerRun' });
const savedA = z.object({ success: z.literal(true), event_id: z.string(), schedule_time: isoTime });
const oneA = z.object({ success: z.literal(true), event: eventA });
const oneB = z.object({ success: z.literal(true), event: eventB });

// The component's views answer the schemas above (checked here at compile time).
const viewA: (...e: Parameters<typeof eventViewA>) => z.output<typeof eventA> = eventViewA;
const viewB: (...e: Parameters<typeof eventViewB>) => z.output<typeof eventB> = eventViewB;
const savedViewOfA: (...e: Parameters<typeof savedViewA>) => z.output<typeof savedA> = savedViewA;

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

/** The event's owner: the user the caller acts for (a basic key: only itself), in the caller's organization. */
async function ownerFor(p: Principal, orgRequested: string | undefined, userRef: string) {
  const organization_id = organizationFor(p, orgRequested);
  const user = await actingUser(p, organization_id, userRef);
  return { organization_id, user_id: user.user_id, idp_id: user.idp_id };
}

/** Whose events a listing reads: the organization, and the user named by idp_id (a basic key: only itself). */
async function listScope(p: Principal, query: z.infer<typeof listQuery>) {
  const org = organizationFor(p, query.organization_id);
  const user_id = query.idp_id ? (await existingUser(p, org, query.idp_id, 'Event not found')).user_id : undefined;
  return { org, user_id };
}

// ---- Both variants: delete and execute are the same operation with the same answer.
defineRoute({
  method: 'DELETE',
  paths: ['/scheduler/events/:event_id', '/api/scheduler-service/events/:event_id'],
  tag,
  auth: 'key',
  audit: {
    action: 'scheduled_event.delete',
    target: ({ params }) => ({ type: 'scheduled_event', id: params.event_id }),
  },
  summary: 'Deletes an event and its Schedule',
  params: idParam,
  query: orgQuery,
  response: z.object({ success: z.literal(true), message: z.string() }),
  handler: ({ principal, params, query }) =>
    deleteScheduledEvent(principal, organizationFor(principal, query.organization_id), params.event_id),
});
defineRoute({
  method: 'POST',
  paths: ['/scheduler/events/:event_id/execute', '/api/scheduler-service/events/:event_id/execute'],
  tag,
  auth: 'key',
  statuses: { 409: 'The event has ended; update it to run again' },
  audit: {
    action: 'scheduled_event.execute',
    target: ({ params }) => ({ type: 'scheduled_event', id: params.event_id }),
  },
  summary:
    "Runs the event now (also while paused); returns execution_time. The same Idempotency-Key starts one run. A basic key: 429 with Retry-After within SCHEDULER_MIN_INTERVAL_SECONDS_BASIC of the last run; 409 for an ended event (update it to run again); the event's overlap policy",
  params: idParam,
  query: orgQuery,
  idempotent: true,
  response: z.object({
    success: z.literal(true),
    event_id: z.string(),
    execution_time: isoTime,
    replayed: z.boolean().optional().describe('with an Idempotency-Key: true when the key had already started the run'),
    paused: z.literal(true).optional(),
    detail: z.string().optional(),
  }),
  handler: ({ event, principal, params, query }) =>
    runEventNow(principal, organizationFor(principal, query.organization_id), params.event_id, idempotencyKeyOf(event)),
});
const pauseBody = z.object({ note: z.string().trim().max(500).optional(), organization_id: organizationId });
const pauseAnswer = z.object({
  success: z.literal(true),
  event_id: z.string(),
  paused: z.boolean(),
  pause_note: z.string().nullable(),
  paused_at: isoTime.nullable(),
  next_runs: z.array(isoTime),
});
for (const [action, paused] of [
  ['pause', true],
  ['resume', false],
] as const) {
  defineRoute({
    method: 'POST',
    paths: [`/scheduler/events/:event_id/${action}`, `/api/scheduler-service/events/:event_id/${action}`],
    tag,
    auth: 'key',
    audit: {
      action: `scheduled_event.${action}`,
      target: ({ params }) => ({ type: 'scheduled_event', id: params.event_id }),
    },
    summary: paused
      ? "Pauses the event's Schedule (optional note): nothing runs until resumed; execute-now still works"
      : "Resumes the event's Schedule; times missed while paused are not run",
    params: idParam,
    body: pauseBody,
    response: pauseAnswer,
    handler: ({ principal, params, body }) =>
      pauseScheduledEvent(
        principal,
        organizationFor(principal, body.organization_id),
        params.event_id,
        paused,
        body.note,
      ),
  });
}
defineRoute({
  method: 'GET',
  paths: ['/scheduler/events/:event_id/runs', '/api/scheduler-service/events/:event_id/runs'],
  tag,
  auth: 'key',
  summary:
    "An event's runs, newest first: time, trigger (scheduled/manual), outcome, error; filters status, from, to; paged by limit/offset",
  params: idParam,
  query: runsQuery,
  response: z.object({ success: z.literal(true), event_id: z.string(), runs: z.array(run) }),
  handler: ({ principal, params, query }) =>
    eventRuns(principal, organizationFor(principal, query.organization_id), params.event_id, query),
});

// ---- Variant A
const bodyA = z.object({
  event_type: eventType,
  schedule_time: when,
  user_id: requiredId,
  organization_id: organizationId,
  recurrency,
  end_date: when.optional(),
  metadata,
  ...controls,
});
/**
 * What an event's audit record keeps as it is: its schedule and the metadata that picks what runs
 * (an action, a template). Other metadata (a subject, a body, a note) is recorded as its length.
 */
const SCHEDULE_FIELDS = [
  'recurrency',
  'cron',
  'timezone',
  'status',
  'metadata.action_type',
  'metadata.template',
  'metadata.template_id',
  'metadata.email_type',
  'metadata.recurrency',
];

const inputA = (b: {
  event_type: EventInput['type_of_event'];
  schedule_time: Date;
  recurrency?: EventInput['recurrency'];
  end_date?: Date;
  metadata: Record<string, unknown>;
  cron?: string;
  overlap?: EventInput['overlap'];
  catchup_window_minutes?: number;
}): EventInput => ({
  cron: b.cron,
  overlap: b.overlap,
  catchup_window_minutes: b.catchup_window_minutes,
  type_of_event: b.event_type,
  start_event: b.schedule_time,
  recurrency:
    b.recurrency ??
    (typeof b.metadata.recurrency === 'string' && (RECURRENCES as readonly string[]).includes(b.metadata.recurrency)
      ? (b.metadata.recurrency as EventInput['recurrency'])
      : null),
  end_date: b.end_date ?? null,
  metadata: b.metadata,
});

defineRoute({
  method: 'POST',
  paths: ['/scheduler/events'],
  tag,
  auth: 'key',
  statuses: { 409: 'A cap on active or stored scheduled events is reached' },
  audit: {
    action: 'scheduled_event.create',
    target: ({ result }) => ({ type: 'scheduled_event', id: answerField(result, 'event_id') }),
    keep: SCHEDULE_FIELDS,
  },
  summary: 'Creates an event and its Temporal Schedule (variant A)',
  body: bodyA,
  response: savedA,
  handler: async ({ principal, body }) =>
    savedViewOfA(
      await createScheduledEvent(
        await ownerFor(principal, body.organization_id, body.user_id),
        inputA(body),
        principal,
      ),
    ),
});
defineRoute({
  method: 'GET',
  paths: ['/scheduler/events'],
  tag,
  auth: 'key',
  summary: 'Lists the events the caller may see (filters idp_id, organization_id) (variant A)',
  query: listQuery,
  response: z.object({ success: z.literal(true), events: z.array(eventA) }),
  handler: async ({ principal, query }) => {
    const { org, user_id } = await listScope(principal, query);
    return { success: true, events: (await listVisibleEvents(principal, org, user_id)).map(viewA) };
  },
});
defineRoute({
  method: 'GET',
  paths: ['/scheduler/events/:event_id'],
  tag,
  auth: 'key',
  summary: 'One event the caller may see (variant A)',
  params: idParam,
  query: orgQuery,
  response: oneA,
  handler: async ({ principal, params, query }) => ({
    success: true,
    event: viewA(await visibleEvent(principal, organizationFor(principal, query.organization_id), params.event_id)),
  }),
});
defineRoute({
  method: 'PUT',
  paths: ['/scheduler/events/:event_id'],
  tag,
  auth: 'key',
  statuses: { 409: 'A cap on active events is reached, or the event was changed at the same time' },
  audit: {
    action: 'scheduled_event.update',
    target: ({ params }) => ({ type: 'scheduled_event', id: params.event_id }),
    keep: SCHEDULE_FIELDS,
  },
  summary: 'Updates an event; its Schedule is updated in place (variant A)',
  params: idParam,
  body: bodyA.omit({ user_id: true }),
  response: savedA,
  handler: async ({ principal, params, body }) =>
    savedViewOfA(
      await updateScheduledEvent(
        principal,
        organizationFor(principal, body.organization_id),
        params.event_id,
        inputA(body),
      ),
    ),
});
// ---- Variant B
const bodyB = z.object({
  idp_id: requiredId,
  organization_id: organizationId,
  type_of_event: eventType,
  recurrency,
  start_event: when,
  end_date: when.nullable().optional(),
  metadata,
  ...controls,
});
const inputB = (b: z.infer<typeof bodyB>): EventInput => ({
  type_of_event: b.type_of_event,
  recurrency: b.recurrency ?? null,
  start_event: b.start_event,
  end_date: b.end_date ?? null,
  metadata: b.metadata,
  cron: b.cron,
  overlap: b.overlap,
  catchup_window_minutes: b.catchup_window_minutes,
});

defineRoute({
  method: 'POST',
  paths: ['/api/scheduler-service/events'],
  tag,
  auth: 'key',
  statuses: { 409: 'A cap on active or stored scheduled events is reached' },
  audit: {
    action: 'scheduled_event.create',
    target: ({ result }) => ({ type: 'scheduled_event', id: answerField(result, 'event', 'id') }),
    keep: SCHEDULE_FIELDS,
  },
  summary: 'Creates an event and its Temporal Schedule (variant B)',
  body: bodyB,
  response: oneB,
  handler: async ({ principal, body }) => ({
    success: true,
    event: viewB(
      await createScheduledEvent(await ownerFor(principal, body.organization_id, body.idp_id), inputB(body), principal),
    ),
  }),
});
defineRoute({
  method: 'GET',
  paths: ['/api/scheduler-service/events'],
  tag,
  auth: 'key',
  summary: 'Lists the events the caller may see (filters idp_id, organization_id) (variant B)',
  query: listQuery,
  response: z.object({ success: z.literal(true), events: z.array(eventB) }),
  handler: async ({ principal, query }) => {
    const { org, user_id } = await listScope(principal, query);
    return { success: true, events: (await listVisibleEvents(principal, org, user_id)).map(viewB) };
  },
});
defineRoute({
  method: 'GET',
  paths: ['/api/scheduler-service/events/:event_id'],
  tag,
  auth: 'key',
  summary: 'One event the caller may see (variant B)',
  params: idParam,
  query: orgQuery,
  response: oneB,
  handler: async ({ principal, params, query }) => ({
    success: true,
    event: viewB(await visibleEvent(principal, organizationFor(principal, query.organization_id), params.event_id)),
  }),
});
defineRoute({
  method: 'PUT',
  paths: ['/api/scheduler-service/events/:event_id'],
  tag,
  auth: 'key',
  statuses: { 409: 'A cap on active events is reached, or the event was changed at the same time' },
  audit: {
    action: 'scheduled_event.update',
    target: ({ params }) => ({ type: 'scheduled_event', id: params.event_id }),
    keep: SCHEDULE_FIELDS,
  },
  summary: 'Updates an event (same body as create); its Schedule is updated in place (variant B)',
  params: idParam,
  body: bodyB,
  response: oneB,
  handler: async ({ principal, params, body }) => ({
    success: true,
    event: viewB(
      await updateScheduledEvent(
        principal,
        organizationFor(principal, body.organization_id),
        params.event_id,
        inputB(body),
      ),
    ),
  }),
});

// ---- The organization's signing secret of its scheduled webhook events (admins).
const webhookSecret = z
  .object({
    organization_id: z.string(),
    created_at: isoTime,
    rotated_at: isoTime.describe('when the current secret was made'),
    previous_secret_expires_at: isoTime
      .nullable()
      .describe('after a rotation: until when the previous secret also signs'),
  })
  .meta({ id: 'ScheduledWebhookSecret' });
const webhookSecretView: (
  ...a: Parameters<typeof webhookSecretStatus>
) => Promise<z.output<typeof webhookSecret> | null> = webhookSecretStatus;

defineRoute({
  method: 'GET',
  paths: ['/api/scheduler-service/webhook-secret'],
  tag,
  auth: 'admin',
  summary:
    'Whether the organization has its signing secret for scheduled webhook events, and its dates (never the secret); null: none yet, and webhook events cannot be saved or run',
  query: orgQuery,
  response: z.object({ success: z.literal(true), signing_secret: webhookSecret.nullable() }),
  handler: async ({ principal, query }) => ({
    success: true,
    signing_secret: await webhookSecretView(organizationFor(principal, query.organization_id)),
  }),
});
defineRoute({
  method: 'POST',
  paths: ['/api/scheduler-service/webhook-secret/rotate'],
  tag,
  auth: 'admin',
  statuses: { 409: 'The secret was created or rotated meanwhile by another request' },
  audit: {
    action: 'scheduled_webhook_secret.rotate',
    target: ({ principal, query }) => ({ type: 'organization', id: organizationFor(principal, query.organization_id) }),
  },
  summary: `Creates the organization's signing secret for scheduled webhook events, or replaces it (admin); shown only in this answer. After a rotation the previous one keeps signing for grace_seconds (default ${WEBHOOK_SECRET_DEFAULT_GRACE_SECONDS}, at most ${WEBHOOK_SECRET_MAX_GRACE_SECONDS}, 0 stops it now): each delivery then carries both signatures`,
  query: orgQuery,
  body: z.object({ grace_seconds: z.number().int().min(0).max(WEBHOOK_SECRET_MAX_GRACE_SECONDS).optional() }),
  response: z.object({
    success: z.literal(true),
    signing_secret: webhookSecret,
    secret: z.string().describe('whsec_…: shown only in this answer'),
  }),
  handler: async ({ principal, query, body }) => ({
    success: true,
    ...(await rotateWebhookSecret(organizationFor(principal, query.organization_id), body.grace_seconds)),
  }),
});
