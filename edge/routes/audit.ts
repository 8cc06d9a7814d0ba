/**
 * The audit trail (docs/components/audit.md): every change made with an admin or system_admin key,
 * hash-chained per organization. Admins read their organization's; a system_admin names any. No
 * route changes or deletes a record.
 */
import { z } from 'zod';

import {
  ACTOR_LEVELS,
  AUDIT_OUTCOMES,
  BREAK_REASONS,
  listAuditRecords,
  verifyChain,
} from '../../activities/audit/index.ts';
import { organizationFor } from '../auth.ts';
import { defineRoute } from '../http.ts';
import { organizationId, requiredId } from '../schemas.ts';

const tag = 'audit';
const when = z.iso.datetime({ offset: true }).or(z.iso.date());
const paging = {
  page: z.coerce.number().int().min(1).max(10_000).default(1),
  limit: z.coerce.number().int().min(1).max(100).default(50),
};

const record = z.object({
  id: z.string().describe('<organization_id>:<seq, 12 digits>'),
  seq: z.number().describe("the record's place in its organization's chain: 1, 2, 3…"),
  at: z.string(),
  organization_id: z.string(),
  actor: z.object({ key_id: z.string(), user_id: z.string(), level: z.enum(ACTOR_LEVELS) }),
  action: z.string().describe('a stable dotted name: webhook_endpoint.create, api_key.revoke, …'),
  target: z.object({ type: z.string(), id: z.string() }),
  request_id: z.string().describe("the request's X-Request-Id"),
  changes: z
    .record(z.string(), z.object({ from: z.unknown().optional(), to: z.unknown().optional() }))
    .describe('field → {from, to} (from only where the previous value is known); secrets read ***'),
  outcome: z
    .enum(AUDIT_OUTCOMES)
    .describe(
      'unknown: the process stopped between the change and its record; the record was written later from the intent written before the change',
    ),
  prev_hash: z.string().describe('the hash of the previous record of the organization (64 zeros for the first)'),
  hash: z.string().describe('SHA-256 of the canonical JSON of the record without its hash'),
});

defineRoute({
  method: 'GET',
  paths: ['/api/audit'],
  tag,
  summary:
    "The organization's audit records (admin; a system_admin names any organization), newest first: filters action, actor_key_id, target_id, from (inclusive) and to (exclusive) on `at`; paged",
  auth: 'admin',
  query: z.object({
    organization_id: organizationId,
    action: requiredId.optional(),
    actor_key_id: requiredId.optional(),
    target_id: requiredId.optional(),
    from: when.optional(),
    to: when.optional(),
    ...paging,
  }),
  response: z.object({
    success: z.literal(true),
    records: z.array(record),
    page: z.number(),
    limit: z.number(),
    has_more: z.boolean(),
  }),
  handler: async ({ principal, query }) => {
    const organization_id = organizationFor(principal, query.organization_id);
    const filter = {
      organization_id,
      action: query.action,
      actor_key_id: query.actor_key_id,
      target_id: query.target_id,
      from: query.from ? new Date(query.from) : undefined,
      to: query.to ? new Date(query.to) : undefined,
    };
    return { success: true, ...(await listAuditRecords(filter, query.page, query.limit)) };
  },
});

defineRoute({
  method: 'GET',
  paths: ['/api/audit/verify'],
  tag,
  summary:
    "Recomputes the organization's chain (admin; a system_admin names any organization) from its oldest kept record: each record's hash and its link to the previous one; names the first break",
  auth: 'admin',
  query: z.object({ organization_id: organizationId }),
  response: z.object({
    success: z.literal(true),
    organization_id: z.string(),
    ok: z.boolean(),
    records_checked: z.number(),
    checked_from: z.number().describe('the first seq kept (older records were removed by retention)'),
    first_break: z.object({ seq: z.number(), id: z.string(), reason: z.enum(BREAK_REASONS) }).nullable(),
  }),
  handler: async ({ principal, query }) => ({
    success: true,
    ...(await verifyChain(organizationFor(principal, query.organization_id))),
  }),
});
