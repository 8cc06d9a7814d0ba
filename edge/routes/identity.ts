/** Organizations and the users directory. */
import { z } from 'zod';

import { forbidden, invalid } from '../../activities/core/errors.ts';
import {
  KEY_CREDITS_MAX,
  KEY_META_MAX_BYTES,
  KEY_NAME_MAX,
  KEY_OUTCOMES,
  KEY_USAGE_MAX_DAYS,
  REFILL_INTERVALS,
  TIERS,
} from '../../activities/identity/constants.ts';
import {
  createOrganization,
  forgetUserKeys,
  getOrganization,
  getUser,
  isPlatformUserId,
  keyUsage,
  listOrganizationKeys,
  requireRankOver,
  searchMembers,
  updateApiKey,
  updateOrganization,
  updateUser,
  upsertUser,
} from '../../activities/identity/index.ts';
import { actingUser, existingUser, organizationFor, requireLevel } from '../auth.ts';
import { answerField, defineRoute, Reply } from '../http.ts';
import { limitParam, listedKey, organizationId, pageAnswer, pageParam, requiredId } from '../schemas.ts';

const tag = 'identity';

const organization = z.object({
  organization_id: z.string(),
  name: z.string(),
  tier: z.enum(TIERS),
  created_at: z.string(),
  updated_at: z.string(),
});
const user = z.object({
  user_id: z.string(),
  idp_id: z.string(),
  organization_id: z.string(),
  email: z.string().nullable(),
  display_name: z.string().nullable(),
  user_rate_limit_per_minute: z
    .number()
    .nullable()
    .describe("requests a minute shared by all of the user's keys; null: only each key's own limit"),
  created_at: z.string(),
  updated_at: z.string(),
});
const orgIdPattern = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'letters, digits, `_`, `.`, `-`; at most 64');

defineRoute({
  method: 'POST',
  paths: ['/api/organizations'],
  statuses: { 409: 'An organization with this organization_id exists' },
  tag,
  summary: 'Creates an organization (system admin)',
  auth: 'sysadmin',
  audit: {
    action: 'organization.create',
    target: ({ result }) => ({ type: 'organization', id: answerField(result, 'organization', 'organization_id') }),
    keep: ['name'],
  },
  body: z.object({
    organization_id: orgIdPattern.optional(),
    name: z.string().trim().min(1).max(200),
    tier: z.enum(TIERS),
  }),
  status: 201,
  response: z.object({ success: z.literal(true), organization }),
  handler: async ({ body }) => new Reply(201, { success: true, organization: await createOrganization(body) }),
});

defineRoute({
  method: 'GET',
  paths: ['/api/organizations/:organization_id'],
  tag,
  summary: 'Reads an organization (system admin, or an admin of that organization)',
  auth: 'admin',
  params: z.object({ organization_id: requiredId }),
  response: z.object({ success: z.literal(true), organization }),
  handler: async ({ principal, params }) => {
    const org = organizationFor(principal, params.organization_id);
    return { success: true, organization: await getOrganization(org) };
  },
});

defineRoute({
  method: 'PATCH',
  paths: ['/api/organizations/:organization_id'],
  tag,
  summary: 'Renames an organization or changes its tier (system admin)',
  auth: 'sysadmin',
  audit: {
    action: 'organization.update',
    target: ({ params }) => ({ type: 'organization', id: params.organization_id }),
    keep: ['name'],
  },
  params: z.object({ organization_id: requiredId }),
  body: z.object({ name: z.string().trim().min(1).max(200).optional(), tier: z.enum(TIERS).optional() }),
  response: z.object({ success: z.literal(true), organization }),
  handler: async ({ params, body }) => ({
    success: true,
    organization: await updateOrganization(params.organization_id, body),
  }),
});

/**
 * The address on record is where the platform mails a user, and the only one a basic key may
 * mail: if the end user could set it, a basic key would mail anyone. The organization's back end
 * (an admin key) sets it, once it has verified the address.
 */
const EMAIL_BY_ADMIN =
  "email: a user's address on record is set with an admin key (the platform mails it on the user's behalf)";

defineRoute({
  method: 'POST',
  paths: ['/api/users'],
  tag,
  summary: 'Creates a user, idempotent on idp_id (a repeat updates email/display_name)',
  auth: 'key',
  audit: {
    action: 'user.upsert',
    target: ({ result }) => ({ type: 'user', id: answerField(result, 'user', 'user_id') }),
  },
  body: z.object({
    idp_id: requiredId.refine((v) => !isPlatformUserId(v), 'usr_… is reserved for platform user ids'),
    organization_id: organizationId,
    email: z.email().max(320).optional(),
    display_name: z.string().trim().min(1).max(200).optional(),
  }),
  response: z.object({ success: z.literal(true), created: z.boolean(), user }),
  statuses: { 201: 'The user was created (`created: true`); 200 when it existed' },
  handler: async ({ principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    if (principal.level === 0 && body.idp_id !== principal.idp_id)
      throw forbidden('A basic API key may only act for its own user');
    if (principal.level === 0 && body.email !== undefined) throw forbidden(EMAIL_BY_ADMIN);
    const out = await upsertUser({
      organization_id: org,
      idp_id: body.idp_id,
      email: body.email,
      display_name: body.display_name,
    });
    return new Reply(out.created ? 201 : 200, { success: true, created: out.created, user: out.user });
  },
});

/** Optional search text: empty is the same as none. */
const searchText = z
  .string()
  .trim()
  .max(200, 'must be at most 200 characters')
  .optional()
  .transform((v) => v || undefined);

defineRoute({
  method: 'GET',
  paths: ['/api/users'],
  tag,
  summary:
    "The organization's members (admin), paginated: newest first; with `q` a platform user_id (`usr_…`: that user), else the users whose idp_id starts with q (case-sensitive, by idp_id) then those whose email starts with it (case-insensitive, by email). Users being erased are not listed",
  auth: 'admin',
  query: z.object({
    organization_id: organizationId,
    q: searchText.describe(
      'a platform user_id (exact), or the start of an idp_id (case-sensitive) or of an email (case-insensitive)',
    ),
    page: pageParam,
    limit: limitParam(20),
  }),
  response: z.object({ success: z.literal(true), users: z.array(user), ...pageAnswer }),
  handler: async ({ principal, query }) => {
    const org = organizationFor(principal, query.organization_id);
    return { success: true, ...(await searchMembers(org, query.q, query.page, query.limit)) };
  },
});

defineRoute({
  method: 'GET',
  paths: ['/api/users/:user_ref'],
  tag,
  summary: 'Reads a user by user_id or idp_id',
  auth: 'key',
  params: z.object({ user_ref: requiredId }),
  query: z.object({ organization_id: organizationId }),
  response: z.object({ success: z.literal(true), user }),
  handler: async ({ principal, params, query }) => {
    const org = organizationFor(principal, query.organization_id);
    if (principal.level === 0) await actingUser(principal, org, params.user_ref);
    else requireLevel(principal, 'admin');
    return { success: true, user: await getUser(org, params.user_ref) };
  },
});

defineRoute({
  method: 'PATCH',
  paths: ['/api/users/:user_ref'],
  tag,
  summary: "Updates a user's email, display name or shared rate limit (null removes)",
  auth: 'key',
  audit: {
    action: 'user.update',
    target: ({ result }) => ({ type: 'user', id: answerField(result, 'user', 'user_id') }),
  },
  params: z.object({ user_ref: requiredId }),
  query: z.object({ organization_id: organizationId }),
  body: z.object({
    email: z.email().max(320).nullable().optional(),
    display_name: z.string().trim().min(1).max(200).nullable().optional(),
    user_rate_limit_per_minute: z
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .nullable()
      .optional()
      .describe(
        "requests a minute shared by all of the user's keys, on top of each key's own limit (admin keys; not for a user holding more rights than the calling key)",
      ),
  }),
  response: z.object({ success: z.literal(true), user }),
  handler: async ({ principal, params, query, body }) => {
    const org = organizationFor(principal, query.organization_id);
    if (principal.level === 0) await actingUser(principal, org, params.user_ref);
    if (principal.level === 0 && body.email !== undefined) throw forbidden(EMAIL_BY_ADMIN);
    if (body.user_rate_limit_per_minute === undefined)
      return { success: true, user: await updateUser(org, params.user_ref, body) };
    // The limit binds every key of the user: the end user must not lift it, nor an admin bind a user above itself.
    if (principal.level === 0)
      throw forbidden("user_rate_limit_per_minute: a user's shared rate limit is set with an admin key");
    const target = await getUser(org, params.user_ref);
    await requireRankOver(principal, org, target.user_id);
    const updated = await updateUser(org, target.user_id, body);
    forgetUserKeys(updated.user_id);
    return { success: true, user: updated };
  },
});

// ---- what people manage on a key: name, meta, credits, and its usage (docs/components/identity.md)

const credits = z.object({
  remaining: z.number().describe('credits left; each authenticated request spends one'),
  refill: z
    .object({
      amount: z.number(),
      interval: z.enum(REFILL_INTERVALS),
      next_refill_at: z.string().describe('the next UTC day or month start, when remaining is set back to amount'),
    })
    .nullable(),
});

const keyMeta = z
  .record(z.string(), z.unknown())
  .refine(
    (m) => Buffer.byteLength(JSON.stringify(m)) <= KEY_META_MAX_BYTES,
    `must be at most ${KEY_META_MAX_BYTES} bytes as JSON`,
  );

defineRoute({
  method: 'PATCH',
  paths: ['/api/keys/:key_id'],
  statuses: { 409: 'The key no longer authenticates (revoked, expired, rotated past its grace)' },
  tag,
  summary:
    "Sets a key's name, meta and credits (admin of the key's organization; not on a user holding more rights than the calling key). A field left out stays, null removes it; credits are spent one per request, refilled daily or monthly. A rotation hands all three to the new key",
  auth: 'admin',
  audit: {
    action: 'api_key.update',
    target: ({ params }) => ({ type: 'api_key', id: params.key_id }),
    keep: ['credits.remaining', 'credits.refill.amount', 'credits.refill.interval'],
  },
  params: z.object({ key_id: requiredId }),
  body: z.object({
    name: z.string().trim().min(1).max(KEY_NAME_MAX).nullable().optional(),
    meta: keyMeta
      .nullable()
      .optional()
      .describe(`a JSON object of the caller's own, at most ${KEY_META_MAX_BYTES} bytes`),
    credits: z
      .object({
        remaining: z.number().int().min(0).max(KEY_CREDITS_MAX),
        refill: z
          .object({
            amount: z.number().int().min(1).max(KEY_CREDITS_MAX),
            interval: z.enum(REFILL_INTERVALS).describe('at each UTC day start, or each UTC month start'),
          })
          .nullable()
          .optional(),
      })
      .nullable()
      .optional()
      .describe('null: no credits (the key is unlimited but for its per-minute limits)'),
    organization_id: organizationId,
  }),
  response: z.object({
    success: z.literal(true),
    key_id: z.string(),
    user_id: z.string(),
    name: z.string().nullable(),
    meta: z.record(z.string(), z.unknown()).nullable(),
    credits: credits.nullable(),
  }),
  handler: async ({ principal, params, body }) => {
    // Another organization is refused before the body is judged: a probe learns nothing from a 422.
    const org = organizationFor(principal, body.organization_id);
    if (body.name === undefined && body.meta === undefined && body.credits === undefined)
      throw invalid('name', 'give at least one of name, meta, credits');
    const out = await updateApiKey(principal, org, params.key_id, {
      name: body.name,
      meta: body.meta,
      credits: body.credits,
    });
    return { success: true, ...out };
  },
});

defineRoute({
  method: 'GET',
  paths: ['/api/keys'],
  tag,
  summary:
    "The organization's API keys (admin), newest first, paginated, masked as in list_api_keys (never a secret or hash), each with its user; filter by user (user_id or idp_id) and by stored status (active: not revoked, listed as active, expiring or expired; revoked). Keys of users holding more rights than the calling key are left out (naming such a user: 403)",
  auth: 'admin',
  query: z.object({
    organization_id: organizationId,
    user_ref: requiredId.optional().describe("the keys' user: user_id or idp_id (unknown: 404)"),
    status: z
      .enum(['active', 'revoked'])
      .optional()
      .describe('active: not revoked (each key then says active, expiring or expired); revoked'),
    page: pageParam,
    limit: limitParam(20),
  }),
  response: z.object({
    success: z.literal(true),
    api_keys: z.array(
      listedKey.extend({
        user_id: z.string().describe("the key's user (an erased user's: its tombstone, del_…)"),
        idp_id: z.string(),
      }),
    ),
    ...pageAnswer,
  }),
  handler: async ({ principal, query }) => {
    const org = organizationFor(principal, query.organization_id);
    // A read: an unknown user is 404, never created (docs/api-conventions.md, "Users").
    const user_id = query.user_ref
      ? (await existingUser(principal, org, query.user_ref, `User not found: ${query.user_ref}`)).user_id
      : undefined;
    return {
      success: true,
      ...(await listOrganizationKeys(principal, org, { user_id, status: query.status }, query.page, query.limit)),
    };
  },
});

const outcomeCounts = Object.fromEntries(KEY_OUTCOMES.map((o) => [o, z.number()])) as Record<
  (typeof KEY_OUTCOMES)[number],
  z.ZodNumber
>;

defineRoute({
  method: 'GET',
  paths: ['/api/keys/:key_id/usage'],
  tag,
  summary:
    "A key's requests by UTC day and outcome over the last `days` days, today included (a basic key: its own user's keys; an admin: its organization's). Counted by each edge process and written every few seconds",
  auth: 'key',
  params: z.object({ key_id: requiredId }),
  query: z.object({
    days: z.coerce.number().int().min(1).max(KEY_USAGE_MAX_DAYS).default(30),
    organization_id: organizationId,
  }),
  response: z.object({
    success: z.literal(true),
    key_id: z.string(),
    days: z.number(),
    from: z.string().describe('the first day, YYYY-MM-DD (UTC)'),
    to: z.string().describe('today, YYYY-MM-DD (UTC)'),
    totals: z.object({ ...outcomeCounts, total: z.number() }),
    by_day: z.array(z.object({ day: z.string(), ...outcomeCounts, total: z.number() })),
  }),
  handler: async ({ principal, params, query }) => {
    const org = organizationFor(principal, query.organization_id);
    return { success: true, ...(await keyUsage(principal, org, params.key_id, query.days)) };
  },
});
