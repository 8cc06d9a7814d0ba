/** Session service: the seven operations, at `/` and at `/api/session-service` (same handlers). */
import { z } from 'zod';

import { config } from '../../activities/core/config.ts';
import { forbidden, invalid, notFound } from '../../activities/core/errors.ts';
import { PERMISSIONS } from '../../activities/identity/constants.ts';
import {
  issueApiKey,
  listApiKeys,
  MAX_GRACE_SECONDS,
  revokeApiKey,
  rotateApiKey,
  verifyApiKey,
} from '../../activities/identity/index.ts';
import {
  END_REASONS,
  ENDED_LISTED_DAYS,
  SESSION_IDLE_MAX_SECONDS,
  SESSION_LIFETIME_MAX_SECONDS,
  SESSION_LIMIT_MIN_SECONDS,
  SESSION_SOURCES,
  SESSION_STATUSES,
} from '../../activities/sessions/constants.ts';
import {
  endOtherSessions,
  endSession,
  getSession,
  getSessionPolicy,
  initializeSession,
  listUserSessions,
  newConversation,
  setSessionPolicy,
  setSessionStatus,
  verifySession,
} from '../../activities/sessions/index.ts';
import { actingUser, budgetSpent, existingUser, organizationFor } from '../auth.ts';
import { answerField, defineRoute } from '../http.ts';
import { listedKey, organizationId, requiredId } from '../schemas.ts';

const both = (path: string) => [path, `/api/session-service${path}`];
const tag = 'session';

const sessionMetadata = z.object({
  created_at: z.string(),
  last_activity: z.string(),
  status: z.enum(['active', 'paused', 'ended']),
  source: z.enum(SESSION_SOURCES),
  organization_id: z.string(),
});

defineRoute({
  method: 'POST',
  paths: both('/initialize_session'),
  tag,
  summary: 'Creates a session in the organization and its first conversation',
  auth: 'key',
  audit: {
    action: 'session.create',
    target: ({ result }) => ({ type: 'session', id: answerField(result, 'session_id') }),
  },
  body: z.object({
    user_id: requiredId.describe('platform user_id or idp_id; unknown idp_ids create the user'),
    organization_id: organizationId,
    source: z.enum(SESSION_SOURCES).optional(),
    metadata: z.object({ source: z.enum(SESSION_SOURCES).optional() }).optional(),
  }),
  response: z.object({
    success: z.literal(true),
    session_id: z.string(),
    conversation_id: z.string(),
    user_id: z.string(),
    idp_id: z.string(),
    organization_id: z.string(),
    metadata: sessionMetadata,
  }),
  handler: async ({ principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    const user = await actingUser(principal, org, body.user_id);
    const { session, conversation_id } = await initializeSession({
      user_id: user.user_id,
      organization_id: org,
      source: body.source ?? body.metadata?.source,
    });
    return {
      success: true,
      session_id: session.session_id,
      conversation_id,
      user_id: user.user_id,
      idp_id: user.idp_id,
      organization_id: org,
      metadata: session.metadata,
    };
  },
});

defineRoute({
  method: 'POST',
  paths: both('/new_conversation'),
  statuses: { 409: 'The session has ended' },
  tag,
  summary: "Opens a conversation in the named session, or in the user's latest open session",
  auth: 'key',
  audit: {
    action: 'conversation.create',
    target: ({ result }) => ({ type: 'conversation', id: answerField(result, 'conversation_id') }),
    keep: ['session_id'],
  },
  body: z.object({
    user_id: requiredId,
    organization_id: organizationId,
    session_id: z.string().trim().min(1).optional(),
  }),
  response: z.object({ success: z.literal(true), conversation_id: z.string(), session_id: z.string() }),
  handler: async ({ principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    const user = await actingUser(principal, org, body.user_id);
    const out = await newConversation({ user_id: user.user_id, organization_id: org, session_id: body.session_id });
    return { success: true, ...out };
  },
});

defineRoute({
  method: 'POST',
  paths: both('/verify_session'),
  tag,
  summary: "Whether the conversation is the user's and its session has not ended",
  auth: 'key',
  audit: false,
  body: z.object({ user_id: requiredId, conversation_id: requiredId, organization_id: organizationId }),
  response: z.object({
    success: z.literal(true),
    valid: z.boolean(),
    session_id: z.string().optional(),
    status: z.string().optional(),
  }),
  handler: async ({ principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    const user = await actingUser(principal, org, body.user_id);
    return {
      success: true,
      ...(await verifySession({ user_id: user.user_id, organization_id: org, conversation_id: body.conversation_id })),
    };
  },
});

const MAX_KEY_YEARS = 10;
const expiresAt = z.iso
  .datetime({ offset: true })
  .transform((s) => new Date(s))
  .refine((d) => d.getTime() > Date.now(), 'must be in the future')
  .refine(
    (d) => d.getTime() <= Date.now() + MAX_KEY_YEARS * 365.25 * 86_400_000,
    `must be at most ${MAX_KEY_YEARS} years ahead`,
  );

const keyMetadata = z.object({
  created_at: z.string(),
  permissions: z.array(z.string()),
  key_id: z.string(),
  user_id: z.string(),
  idp_id: z.string(),
  organization_id: z.string(),
  expires_at: z.string().nullable().describe('refused from then on (401); null: never'),
});

defineRoute({
  method: 'POST',
  paths: both('/generate_api_key'),
  statuses: { 409: 'The user already holds MAX_KEYS_PER_USER active keys' },
  tag,
  summary:
    'Issues a key for a user; shown once. A key grants at most its own permissions and rate limit and expires no later than itself; at most MAX_KEYS_PER_USER active keys per user (409)',
  auth: 'key',
  audit: {
    action: 'api_key.create',
    target: ({ result }) => ({ type: 'api_key', id: answerField(result, 'metadata', 'key_id') }),
  },
  body: z.object({
    user_id: requiredId,
    organization_id: organizationId,
    permissions: z.array(z.enum(PERMISSIONS)).min(1).max(3).default(['basic']),
    rate_limit_per_minute: z
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .optional()
      .describe(
        "lower per-key limit than RATE_LIMIT_PER_MINUTE; never above the calling key's own limit, which a key created without one inherits",
      ),
    expires_at: expiresAt
      .optional()
      .describe(
        `ISO 8601, in the future, at most ${MAX_KEY_YEARS} years ahead; never after the calling key's own expiry, which a key created without one inherits`,
      ),
  }),
  response: z.object({ success: z.literal(true), api_key: z.string(), metadata: keyMetadata }),
  handler: async ({ principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    const user = await actingUser(principal, org, body.user_id);
    const global = config().RATE_LIMIT_PER_MINUTE;
    if (body.rate_limit_per_minute && global && body.rate_limit_per_minute > global) {
      throw forbidden(`rate_limit_per_minute may not exceed the platform limit of ${global}`);
    }
    const issued = await issueApiKey(principal, user, body.permissions, {
      rate_limit_per_minute: body.rate_limit_per_minute,
      expires_at: body.expires_at,
    });
    return { success: true, api_key: issued.api_key, metadata: issued.metadata };
  },
});

defineRoute({
  method: 'GET',
  paths: both('/list_api_keys/:user_id'),
  tag,
  summary: "Lists a user's keys, masked (never the secret)",
  auth: 'key',
  params: z.object({ user_id: requiredId }),
  query: z.object({ organization_id: organizationId }),
  response: z.object({
    success: z.literal(true),
    user_id: z.string(),
    idp_id: z.string(),
    api_keys: z.array(listedKey),
  }),
  handler: async ({ principal, params, query }) => {
    const org = organizationFor(principal, query.organization_id);
    // A read: an unknown user is 404, never created (docs/api-conventions.md, "Users").
    const user = await existingUser(principal, org, params.user_id, `User not found: ${params.user_id}`);
    return {
      success: true,
      user_id: user.user_id,
      idp_id: user.idp_id,
      api_keys: await listApiKeys(principal, org, user.user_id),
    };
  },
});

defineRoute({
  method: 'POST',
  paths: both('/revoke_api_key'),
  tag,
  summary: 'Revokes a key (full key or key_id); effective on the very next request',
  auth: 'key',
  audit: {
    action: 'api_key.revoke',
    target: ({ result }) => ({ type: 'api_key', id: answerField(result, 'key_id') }),
    keep: ['status'],
  },
  body: z.object({
    user_id: requiredId,
    api_key: requiredId.describe('the full key, or its key_id from list_api_keys'),
    organization_id: organizationId,
  }),
  response: z.object({ success: z.literal(true), message: z.string(), key_id: z.string() }),
  handler: async ({ principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    const user = await actingUser(principal, org, body.user_id);
    const out = await revokeApiKey(principal, org, user.user_id, body.api_key);
    return {
      success: true,
      message: out.already ? 'API key was already revoked' : 'API key revoked',
      key_id: out.key_id,
    };
  },
});

defineRoute({
  method: 'POST',
  paths: both('/rotate_api_key'),
  statuses: {
    409: 'The key is revoked, expired or already rotated, or a rotation with a grace would pass MAX_KEYS_PER_USER',
  },
  tag,
  summary:
    'Replaces a key (full key or key_id) by a new one with the same user, permissions, limits and expiry; shown once. The old key works for grace_seconds more, then is refused. While it works it keeps its place under MAX_KEYS_PER_USER, so a rotation with a grace needs a free place (409 at the cap; grace_seconds 0 hands the place over at once)',
  auth: 'key',
  audit: {
    action: 'api_key.rotate',
    target: ({ result }) => ({ type: 'api_key', id: answerField(result, 'previous', 'key_id') }),
    keep: ['key_id', 'status', 'rotated_to'],
  },
  body: z.object({
    user_id: requiredId.optional().describe("the key's owner; defaults to the calling key's own user"),
    api_key: requiredId.optional().describe('the full key, or its key_id from list_api_keys'),
    key_id: requiredId.optional().describe('instead of api_key'),
    grace_seconds: z
      .number()
      .int()
      .min(0)
      .max(MAX_GRACE_SECONDS)
      .default(0)
      .describe(`how long the old key keeps working (at most ${MAX_GRACE_SECONDS}, 7 days; 0: refused at once)`),
    expires_at: expiresAt
      .optional()
      .describe("the new key's expiry instead of the old key's; never after the calling key's own"),
    organization_id: organizationId,
  }),
  response: z.object({
    success: z.literal(true),
    api_key: z.string(),
    metadata: keyMetadata.extend({ rotated_from: z.string() }),
    previous: z.object({
      key_id: z.string(),
      status: z.enum(['expiring', 'expired']),
      expires_at: z.string().describe('the end of its grace'),
    }),
  }),
  handler: async ({ principal, body }) => {
    if (body.api_key && body.key_id) throw invalid('key_id', 'give api_key or key_id, not both');
    const ref = body.api_key ?? body.key_id;
    if (!ref) throw invalid('api_key', 'the key to rotate is required (api_key or key_id)');
    const org = organizationFor(principal, body.organization_id);
    const user = await actingUser(principal, org, body.user_id ?? principal.user_id);
    const out = await rotateApiKey(principal, org, user.user_id, ref, {
      grace_seconds: body.grace_seconds,
      expires_at: body.expires_at,
    });
    return {
      success: true,
      api_key: out.issued.api_key,
      metadata: { ...out.issued.metadata, rotated_from: out.previous.key_id },
      previous: out.previous,
    };
  },
});

defineRoute({
  method: 'POST',
  paths: both('/verify_api_key'),
  tag,
  summary:
    "Whether a key is valid (active, not expired) and, given `permission`, holds it; records its last use but spends none of the key's budget. No key needed; rate limited per address",
  auth: 'none',
  rateLimit: 'ip',
  body: z.object({
    api_key: z.string().max(500),
    permission: z
      .enum(PERMISSIONS)
      .optional()
      .describe('also check that the key holds this permission (or a higher one)'),
  }),
  response: z.object({
    valid: z.boolean(),
    reason: z
      .enum(['not_found', 'revoked', 'expired', 'rate_limited', 'forbidden'])
      .optional()
      .describe(
        'only when not valid: rate_limited when the key or its user has used its whole budget of the current minute; forbidden when it lacks `permission`',
      ),
    user_id: z.string().optional(),
    idp_id: z.string().optional(),
    organization_id: z.string().optional(),
    permissions: z.array(z.string()).optional(),
  }),
  handler: async ({ body }) => verifyApiKey(body.api_key, { permission: body.permission, spent: budgetSpent }),
});

// Extension: the document lists the statuses but no way to change them.
defineRoute({
  method: 'POST',
  paths: both('/update_session_status'),
  statuses: { 409: 'An ended session cannot be reopened' },
  tag,
  summary: 'Pauses, resumes or ends a session (ended is final; its conversations stop verifying)',
  auth: 'key',
  audit: {
    action: 'session.update_status',
    target: ({ body }) => ({ type: 'session', id: body.session_id }),
    keep: ['session_id'],
  },
  body: z.object({
    user_id: requiredId,
    session_id: requiredId,
    status: z.enum(SESSION_STATUSES),
    organization_id: organizationId,
  }),
  response: z.object({
    success: z.literal(true),
    session_id: z.string(),
    user_id: z.string(),
    idp_id: z.string(),
    organization_id: z.string(),
    metadata: sessionMetadata,
  }),
  handler: async ({ principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    const user = await actingUser(principal, org, body.user_id);
    const current = await getSession(org, body.session_id);
    if (current.user_id !== user.user_id) throw notFound(`Session not found: ${body.session_id}`);
    return { success: true, ...(await setSessionStatus(org, body.session_id, body.status)), idp_id: user.idp_id };
  },
});

// ---- a user's sessions: seen, ended one by one or all but the caller's (docs/components/sessions.md)

const listedSession = z.object({
  session_id: z.string(),
  status: z.enum(SESSION_STATUSES),
  source: z.enum(SESSION_SOURCES),
  created_at: z.string(),
  last_activity: z.string().describe('recorded at most once a minute'),
  ended_at: z.string().nullable(),
  end_reason: z
    .enum(END_REASONS)
    .nullable()
    .describe("ended: by a call; lifetime, inactivity: past the organization's session policy"),
  ends_at: z
    .string()
    .nullable()
    .describe("when the organization's policy ends it unless it is used (inactivity) or ended before; null: never"),
});

defineRoute({
  method: 'GET',
  paths: ['/api/users/:user_ref/sessions'],
  tag,
  summary: `A user's sessions, most recently active first: the open ones and those ended in the last ${ENDED_LISTED_DAYS} days. A basic key lists only its own user's`,
  auth: 'key',
  params: z.object({ user_ref: requiredId.describe('platform user_id or idp_id') }),
  query: z.object({
    organization_id: organizationId,
    page: z.coerce.number().int().min(1).max(10_000).default(1),
    limit: z.coerce.number().int().min(1).max(100).default(20),
  }),
  response: z.object({
    success: z.literal(true),
    user_id: z.string(),
    sessions: z.array(listedSession),
    page: z.number(),
    limit: z.number(),
    total: z.number(),
    has_more: z.boolean(),
  }),
  handler: async ({ principal, params, query }) => {
    const org = organizationFor(principal, query.organization_id);
    const user = await existingUser(principal, org, params.user_ref, `User not found: ${params.user_ref}`);
    const { sessions, total } = await listUserSessions(org, user.user_id, query.page, query.limit);
    return {
      success: true,
      user_id: user.user_id,
      sessions,
      page: query.page,
      limit: query.limit,
      total,
      has_more: query.page * query.limit < total,
    };
  },
});

defineRoute({
  method: 'DELETE',
  paths: ['/api/sessions/:session_id'],
  tag,
  summary:
    "Ends one session (its conversations stop verifying). A basic key ends only its own user's (another's is 404); ending an ended session answers it unchanged",
  auth: 'key',
  audit: { action: 'session.end', target: ({ params }) => ({ type: 'session', id: params.session_id }) },
  params: z.object({ session_id: requiredId }),
  query: z.object({ organization_id: organizationId }),
  response: z.object({ success: z.literal(true), session: listedSession, already_ended: z.boolean() }),
  handler: async ({ principal, params, query }) => {
    const org = organizationFor(principal, query.organization_id);
    const out = await endSession(org, params.session_id, principal.level === 0 ? principal.user_id : undefined);
    return { success: true, ...out };
  },
});

defineRoute({
  method: 'POST',
  paths: ['/api/users/:user_ref/sessions/end-others'],
  statuses: { 409: 'The current session has ended' },
  tag,
  summary:
    "Ends every session of the user but the caller's current one, named in the body (it must be the user's and open). A basic key acts only for its own user",
  auth: 'key',
  audit: {
    action: 'session.end_others',
    // the platform id from the answer: the path may hold an idp_id, and audit records outlive an erasure
    target: ({ result }) => ({ type: 'user', id: answerField(result, 'user_id') }),
    keep: ['current_session_id'],
  },
  params: z.object({ user_ref: requiredId.describe('platform user_id or idp_id') }),
  body: z.object({
    current_session_id: requiredId.describe('the session to keep: the one the calling app is using'),
    organization_id: organizationId,
  }),
  response: z.object({
    success: z.literal(true),
    user_id: z.string(),
    current_session_id: z.string(),
    ended: z.number().describe('sessions ended by this call'),
  }),
  handler: async ({ principal, params, body }) => {
    const org = organizationFor(principal, body.organization_id);
    const user = await existingUser(principal, org, params.user_ref, `User not found: ${params.user_ref}`);
    return {
      success: true,
      user_id: user.user_id,
      ...(await endOtherSessions(org, user.user_id, body.current_session_id)),
    };
  },
});

const sessionPolicy = z.object({
  success: z.literal(true),
  organization_id: z.string(),
  lifetime_seconds: z.number().nullable().describe('a session ends this long after its creation; null: never'),
  idle_timeout_seconds: z
    .number()
    .nullable()
    .describe('a session ends this long (up to a minute more) after its last activity; null: never'),
  updated_at: z.string().nullable(),
});

defineRoute({
  method: 'GET',
  paths: ['/api/sessions/policy'],
  tag,
  summary: "The organization's session lifetime and inactivity timeout (admin)",
  auth: 'admin',
  query: z.object({ organization_id: organizationId }),
  response: sessionPolicy,
  handler: async ({ principal, query }) => ({
    success: true,
    ...(await getSessionPolicy(organizationFor(principal, query.organization_id))),
  }),
});

const limitSeconds = (max: number) => z.number().int().min(SESSION_LIMIT_MIN_SECONDS).max(max).nullable().optional();

defineRoute({
  method: 'PUT',
  paths: ['/api/sessions/policy'],
  tag,
  summary:
    "Sets the organization's session lifetime and inactivity timeout (admin); a field left out stays, null removes it. Sessions past a new limit end when next used or listed",
  auth: 'admin',
  audit: {
    action: 'session_policy.update',
    target: ({ principal, body }) => ({ type: 'organization', id: body.organization_id ?? principal.organization_id }),
    keep: ['lifetime_seconds', 'idle_timeout_seconds'],
  },
  body: z.object({
    lifetime_seconds: limitSeconds(SESSION_LIFETIME_MAX_SECONDS).describe(
      `${SESSION_LIMIT_MIN_SECONDS} to ${SESSION_LIFETIME_MAX_SECONDS} (365 days); null: no lifetime`,
    ),
    idle_timeout_seconds: limitSeconds(SESSION_IDLE_MAX_SECONDS).describe(
      `${SESSION_LIMIT_MIN_SECONDS} to ${SESSION_IDLE_MAX_SECONDS} (90 days); null: no inactivity timeout`,
    ),
    organization_id: organizationId,
  }),
  response: sessionPolicy,
  handler: async ({ principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    return {
      success: true,
      ...(await setSessionPolicy(org, {
        lifetime_seconds: body.lifetime_seconds,
        idle_timeout_seconds: body.idle_timeout_seconds,
      })),
    };
  },
});
