/**
 * Outgoing events: an organization's webhook endpoints (admin keys; a system_admin names any
 * organization), the deliveries to them and the event log. Events are signed the Standard Webhooks
 * way and delivered by each endpoint's actor, `webhook-endpoint:<id>` (docs/components/events.md).
 */
import { z } from 'zod';

import { DELIVERY_STATUSES, EVENT_TYPES, MAX_ROTATION_GRACE_SECONDS } from '../../activities/events/constants.ts';
import {
  changeEndpoint,
  createEndpoint,
  endpointStats,
  getEndpoint,
  listDeliveries,
  listEndpoints,
  listEvents,
  pauseEndpoint,
  removeEndpoint,
  REPLAY_LIMIT,
  replayEndpoint,
  resumeEndpoint,
  retryDelivery,
  rotateSecret,
  sendPing,
} from '../../activities/events/index.ts';
import { organizationFor } from '../auth.ts';
import { answerField, defineRoute } from '../http.ts';
import { organizationId, requiredId } from '../schemas.ts';

const tag = 'webhooks';

const eventsList = z
  .array(z.enum([...EVENT_TYPES, '*']))
  .min(1)
  .max(EVENT_TYPES.length)
  .describe('event types, or ["*"] for all');
const url = z
  .string()
  .trim()
  .min(1)
  .max(2000)
  .describe(
    'https, a public address (WEBHOOK_ALLOW_PRIVATE allows http and local addresses); redirects are not followed',
  );
const description = z.string().trim().max(500);

const endpoint = z.object({
  id: z.string(),
  organization_id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  enabled: z.boolean(),
  description: z.string().nullable(),
  disabled_reason: z.string().nullable().describe('why the platform disabled it (410 Gone, failing for days)'),
  failing_since: z.string().nullable().describe('the first failed attempt since the last success'),
  paused_at: z
    .string()
    .nullable()
    .describe('paused by an admin since then: deliveries queue, nothing is sent until it is resumed'),
  previous_secret_expires_at: z
    .string()
    .nullable()
    .describe('after a rotation: until when the previous secret also signs'),
  created_by: z
    .object({ key_id: z.string(), user_id: z.string() })
    .nullable()
    .describe('the key that created the endpoint, and its user'),
  created_at: z.string(),
  updated_at: z.string(),
});
const withSecret = z.object({
  success: z.literal(true),
  endpoint,
  secret: z.string().describe('whsec_…: shown only in this answer'),
});
const orgQuery = z.object({ organization_id: organizationId });
const idParams = z.object({ id: requiredId });
const paging = {
  page: z.coerce.number().int().min(1).max(10_000).default(1),
  limit: z.coerce.number().int().min(1).max(100).default(50),
};

defineRoute({
  method: 'POST',
  paths: ['/api/webhooks/endpoints'],
  statuses: { 409: 'The organization has its maximum of webhook endpoints' },
  tag,
  summary:
    'Adds a webhook endpoint to the organization (admin). The answer carries its signing secret, shown only once',
  auth: 'admin',
  audit: {
    action: 'webhook_endpoint.create',
    target: ({ result }) => ({ type: 'webhook_endpoint', id: answerField(result, 'endpoint', 'id') }),
    keep: ['url'],
  },
  status: 201,
  body: z.object({ organization_id: organizationId, url, events: eventsList, description: description.optional() }),
  response: withSecret,
  handler: async ({ principal, body }) => {
    const organization_id = organizationFor(principal, body.organization_id);
    return {
      success: true,
      ...(await createEndpoint({
        organization_id,
        url: body.url,
        events: body.events,
        description: body.description,
        created_by: { key_id: principal.key_id, user_id: principal.user_id },
      })),
    };
  },
});

defineRoute({
  method: 'GET',
  paths: ['/api/webhooks/endpoints'],
  tag,
  summary: "The organization's webhook endpoints (admin), oldest first; no secrets",
  auth: 'admin',
  query: orgQuery,
  response: z.object({ success: z.literal(true), endpoints: z.array(endpoint) }),
  handler: async ({ principal, query }) => ({
    success: true,
    endpoints: await listEndpoints(organizationFor(principal, query.organization_id)),
  }),
});

defineRoute({
  method: 'GET',
  paths: ['/api/webhooks/endpoints/:id'],
  tag,
  summary: "One webhook endpoint (admin); another organization's is 404",
  auth: 'admin',
  params: idParams,
  query: orgQuery,
  response: z.object({ success: z.literal(true), endpoint }),
  handler: async ({ principal, params, query }) => ({
    success: true,
    endpoint: await getEndpoint(organizationFor(principal, query.organization_id), params.id),
  }),
});

defineRoute({
  method: 'PATCH',
  paths: ['/api/webhooks/endpoints/:id'],
  tag,
  summary:
    'Changes a webhook endpoint (admin): the fields named among url, events, enabled (enabling clears the reason the platform disabled it), description (null removes it)',
  auth: 'admin',
  audit: {
    action: 'webhook_endpoint.update',
    target: ({ params }) => ({ type: 'webhook_endpoint', id: params.id }),
    keep: ['url'],
  },
  params: idParams,
  query: orgQuery,
  // Fields left out stay as they are (an empty body changes nothing and answers the endpoint).
  body: z.object({
    url: url.optional(),
    events: eventsList.optional(),
    enabled: z.boolean().optional(),
    description: description.nullable().optional(),
  }),
  response: z.object({ success: z.literal(true), endpoint }),
  handler: async ({ principal, params, query, body }) => ({
    success: true,
    endpoint: await changeEndpoint(organizationFor(principal, query.organization_id), params.id, body),
  }),
});

defineRoute({
  method: 'DELETE',
  paths: ['/api/webhooks/endpoints/:id'],
  tag,
  summary: 'Deletes a webhook endpoint (admin); its pending deliveries end at their next attempt',
  auth: 'admin',
  audit: { action: 'webhook_endpoint.delete', target: ({ params }) => ({ type: 'webhook_endpoint', id: params.id }) },
  params: idParams,
  query: orgQuery,
  response: z.object({ success: z.literal(true), message: z.string() }),
  handler: async ({ principal, params, query }) => {
    await removeEndpoint(organizationFor(principal, query.organization_id), params.id);
    return { success: true, message: 'Webhook endpoint deleted' };
  },
});

defineRoute({
  method: 'POST',
  paths: ['/api/webhooks/endpoints/:id/rotate-secret'],
  statuses: { 409: 'The secret was rotated meanwhile by another request' },
  tag,
  summary:
    'A new signing secret (admin), shown once; the previous one keeps signing for grace_seconds (default 86400, at most 7 days, 0 stops it now): each request then carries both signatures',
  auth: 'admin',
  audit: {
    action: 'webhook_endpoint.rotate_secret',
    target: ({ params }) => ({ type: 'webhook_endpoint', id: params.id }),
  },
  params: idParams,
  query: orgQuery,
  body: z.object({ grace_seconds: z.number().int().min(0).max(MAX_ROTATION_GRACE_SECONDS).optional() }),
  response: withSecret,
  handler: async ({ principal, params, query, body }) => ({
    success: true,
    ...(await rotateSecret(organizationFor(principal, query.organization_id), params.id, body.grace_seconds)),
  }),
});

defineRoute({
  method: 'POST',
  paths: ['/api/webhooks/endpoints/:id/test'],
  tag,
  summary: 'Sends a `ping` event to this endpoint now (admin); its delivery is listed like any other',
  auth: 'admin',
  audit: { action: 'webhook_endpoint.ping', target: ({ params }) => ({ type: 'webhook_endpoint', id: params.id }) },
  status: 202,
  params: idParams,
  query: orgQuery,
  response: z.object({ success: z.literal(true), event_id: z.string() }),
  handler: async ({ principal, params, query }) => ({
    success: true,
    event_id: await sendPing(organizationFor(principal, query.organization_id), params.id),
  }),
});

defineRoute({
  method: 'POST',
  paths: ['/api/webhooks/endpoints/:id/pause'],
  tag,
  summary:
    'Pauses a webhook endpoint (admin): its events keep being queued, nothing is sent (retries by hand and test pings wait too) until it is resumed; pausing a paused one changes nothing',
  auth: 'admin',
  audit: { action: 'webhook_endpoint.pause', target: ({ params }) => ({ type: 'webhook_endpoint', id: params.id }) },
  params: idParams,
  query: orgQuery,
  response: z.object({ success: z.literal(true), endpoint }),
  handler: async ({ principal, params, query }) => ({
    success: true,
    endpoint: await pauseEndpoint(organizationFor(principal, query.organization_id), params.id),
  }),
});

defineRoute({
  method: 'POST',
  paths: ['/api/webhooks/endpoints/:id/resume'],
  tag,
  summary:
    'Resumes a paused webhook endpoint (admin): what queued meanwhile is sent in order, each with a full retry window from now; resuming one not paused changes nothing',
  auth: 'admin',
  audit: { action: 'webhook_endpoint.resume', target: ({ params }) => ({ type: 'webhook_endpoint', id: params.id }) },
  params: idParams,
  query: orgQuery,
  response: z.object({ success: z.literal(true), endpoint }),
  handler: async ({ principal, params, query }) => ({
    success: true,
    endpoint: await resumeEndpoint(organizationFor(principal, query.organization_id), params.id),
  }),
});

const when = z.iso.datetime({ offset: true }).or(z.iso.date());

defineRoute({
  method: 'POST',
  paths: ['/api/webhooks/endpoints/:id/replay'],
  tag,
  summary: `Sends again the endpoint's ended deliveries (admin) first queued from since (inclusive) to until (exclusive, default now): delivered and failed ones, or failed_only; each keeps its webhook-id and gets a new retry window; ones still queued are left as they are. At most ${REPLAY_LIMIT} per call, oldest first: next_since, when set, is where the next call starts`,
  auth: 'admin',
  audit: { action: 'webhook_endpoint.replay', target: ({ params }) => ({ type: 'webhook_endpoint', id: params.id }) },
  status: 202,
  params: idParams,
  query: orgQuery,
  body: z.object({
    since: when,
    until: when.optional(),
    failed_only: z.boolean().default(false),
  }),
  response: z.object({
    success: z.literal(true),
    queued: z.number().describe('deliveries queued again'),
    next_since: z.string().nullable().describe('more remain from this instant: replay again from it'),
  }),
  handler: async ({ principal, params, query, body }) => ({
    success: true,
    ...(await replayEndpoint(organizationFor(principal, query.organization_id), params.id, {
      since: new Date(body.since),
      until: body.until ? new Date(body.until) : undefined,
      failed_only: body.failed_only,
    })),
  }),
});

defineRoute({
  method: 'GET',
  paths: ['/api/webhooks/endpoints/:id/stats'],
  tag,
  summary:
    "A webhook endpoint's queue (admin): backlog, oldest undelivered, attempts and success rate over the last 24 hours, last success and last error (attempt counts lag by up to a second)",
  auth: 'admin',
  params: idParams,
  query: orgQuery,
  response: z.object({
    success: z.literal(true),
    stats: z.object({
      endpoint_id: z.string(),
      state: z.enum(['active', 'paused', 'disabled']),
      backlog: z.number().describe('deliveries queued: due now or scheduled for a retry'),
      oldest_undelivered_at: z.string().nullable().describe('when the oldest delivery still queued was queued'),
      oldest_undelivered_age_seconds: z.number().nullable(),
      last_24h: z.object({
        attempts: z.number(),
        succeeded: z.number(),
        failed: z.number(),
        success_rate: z.number().nullable().describe('succeeded / attempts, 0 to 1; null without attempts'),
      }),
      attempts_total: z.object({ succeeded: z.number(), failed: z.number() }),
      last_success_at: z.string().nullable(),
      last_error: z
        .object({
          at: z.string(),
          status: z.number().nullable().describe("the receiver's HTTP status; null when it never answered"),
          error: z.string().nullable(),
          delivery_id: z.string(),
        })
        .nullable(),
    }),
  }),
  handler: async ({ principal, params, query }) => ({
    success: true,
    stats: await endpointStats(organizationFor(principal, query.organization_id), params.id),
  }),
});

const delivery = z.object({
  id: z.string(),
  endpoint_id: z.string(),
  event_id: z.string(),
  event_type: z.string(),
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.array(
    z.object({
      at: z.string(),
      status: z.number().nullable().describe("the receiver's HTTP status; null when it never answered"),
      duration_ms: z.number(),
      error: z.string().nullable(),
    }),
  ),
  next_attempt_at: z.string().nullable(),
  final_reason: z.string().nullable(),
  created_at: z.string(),
});

defineRoute({
  method: 'GET',
  paths: ['/api/webhooks/deliveries'],
  tag,
  summary:
    "The organization's deliveries (admin), newest first, each with its attempts (time, response status, duration) and next attempt",
  auth: 'admin',
  query: z.object({
    organization_id: organizationId,
    endpoint_id: requiredId.optional(),
    event_type: z.enum(EVENT_TYPES).optional(),
    status: z.enum(DELIVERY_STATUSES).optional(),
    ...paging,
  }),
  response: z.object({
    success: z.literal(true),
    deliveries: z.array(delivery),
    page: z.number(),
    limit: z.number(),
    has_more: z.boolean(),
  }),
  handler: async ({ principal, query }) => {
    const organization_id = organizationFor(principal, query.organization_id);
    return {
      success: true,
      ...(await listDeliveries(
        { organization_id, endpoint_id: query.endpoint_id, event_type: query.event_type, status: query.status },
        query.page,
        query.limit,
      )),
    };
  },
});

defineRoute({
  method: 'POST',
  paths: ['/api/webhooks/deliveries/:id/retry'],
  statuses: { 409: 'An attempt of this delivery is already due' },
  tag,
  summary:
    'An attempt of this delivery now (admin), whatever its state: a waiting one stops waiting; an ended one (delivered or failed) gets a new run, with the retry schedule from its start',
  auth: 'admin',
  audit: { action: 'webhook_delivery.retry', target: ({ params }) => ({ type: 'webhook_delivery', id: params.id }) },
  status: 202,
  params: idParams,
  query: orgQuery,
  response: z.object({ success: z.literal(true), delivery }),
  handler: async ({ principal, params, query }) => ({
    success: true,
    delivery: await retryDelivery(organizationFor(principal, query.organization_id), params.id),
  }),
});

defineRoute({
  method: 'GET',
  paths: ['/api/events'],
  tag,
  summary:
    "The organization's event log (admin), kept 30 days, in the order the events were recorded: each event as its endpoints received it, plus recorded_at; from (inclusive) and to (exclusive) bound recorded_at, so a consumer catching up asks from the last recorded_at it saw",
  auth: 'admin',
  query: z.object({
    organization_id: organizationId,
    type: z.enum(EVENT_TYPES).optional(),
    from: when.optional(),
    to: when.optional(),
    ...paging,
  }),
  response: z.object({
    success: z.literal(true),
    events: z.array(
      z.object({
        id: z.string(),
        type: z.string(),
        created_at: z.string().describe("the change's instant"),
        organization_id: z.string(),
        data: z.record(z.string(), z.unknown()),
        recorded_at: z.string().describe("when the platform recorded the event (the log's order)"),
      }),
    ),
    page: z.number(),
    limit: z.number(),
    has_more: z.boolean(),
  }),
  handler: async ({ principal, query }) => {
    const organization_id = organizationFor(principal, query.organization_id);
    return {
      success: true,
      ...(await listEvents(
        {
          organization_id,
          type: query.type,
          from: query.from ? new Date(query.from) : undefined,
          to: query.to ? new Date(query.to) : undefined,
        },
        query.page,
        query.limit,
      )),
    };
  },
});
