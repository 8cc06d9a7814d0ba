/** A user's data handed back (export) or erased on request (docs/privacy.md). */
import { z } from 'zod';

import { notFound } from '../../activities/core/errors.ts';
import type { Principal } from '../../activities/identity/index.ts';
import { findUser, isPlatformUserId, requireRankOver } from '../../activities/identity/index.ts';
import { ERASURE_STATUSES, EXPORT_STATUSES } from '../../activities/privacy/constants.ts';
import {
  getErasure,
  getExport,
  openExportDownload,
  requestErasure,
  requestExport,
} from '../../activities/privacy/index.ts';
import { existingUser, organizationFor } from '../auth.ts';
import { answerField, defineRoute, Reply, StreamedFile } from '../http.ts';
import { organizationId, requiredId } from '../schemas.ts';

const tag = 'privacy';

const requester = (p: Principal) => ({ key_id: p.key_id, user_id: p.user_id, level: p.level });
const counts = z.record(z.string(), z.record(z.string(), z.number()));
const exportView = z.object({
  export_id: z.string(),
  user_id: z.string(),
  status: z.enum(EXPORT_STATUSES),
  counts: counts.describe(
    'per component, how many records of each kind and how many files it exported (filled in as each part is gathered)',
  ),
  bytes: z.number().nullable().describe("the zip's size once ready"),
  error: z.string().nullable(),
  created_at: z.string(),
  ready_at: z.string().nullable(),
  expires_at: z
    .string()
    .nullable()
    .describe('the zip is removed then (USER_EXPORT_TTL_HOURS after it was ready, 7 days by default)'),
});
const erasureView = z.object({
  erasure_id: z.string(),
  user_id: z.string(),
  status: z.enum(ERASURE_STATUSES),
  reason: z.string().nullable(),
  steps: z
    .record(
      z.string(),
      z.object({
        status: z.enum(['pending', 'done']),
        report: z.record(z.string(), z.number()),
        at: z.string().nullable(),
      }),
    )
    .describe('per component: pending or done, and what it did (`{objects_deleted: 3}`)'),
  created_at: z.string(),
  completed_at: z.string().nullable(),
});
const userParams = z.object({ user_ref: requiredId });
const exportParams = z.object({ user_ref: requiredId, export_id: requiredId });
const orgQuery = z.object({ organization_id: organizationId });

defineRoute({
  method: 'POST',
  paths: ['/api/users/:user_ref/export'],
  tag,
  summary:
    "Starts an export of the user's data (a zip: a JSON file per component and the user's files); the user's own basic key or an admin key",
  auth: 'key',
  params: userParams,
  query: orgQuery,
  status: 202,
  response: z.object({
    success: z.literal(true),
    export_id: z.string(),
    status: z.enum(EXPORT_STATUSES),
    export: exportView,
  }),
  handler: async ({ principal, params, query }) => {
    const org = organizationFor(principal, query.organization_id);
    const user = await existingUser(principal, org, params.user_ref, `User not found: ${params.user_ref}`);
    const view = await requestExport(org, user.user_id, requester(principal));
    return { success: true, export_id: view.export_id, status: view.status, export: view };
  },
});

defineRoute({
  method: 'GET',
  paths: ['/api/users/:user_ref/exports/:export_id'],
  tag,
  summary: "An export's status (processing, ready, failed, expired) and, per component, what it holds",
  auth: 'key',
  params: exportParams,
  query: orgQuery,
  response: z.object({ success: z.literal(true), export: exportView }),
  handler: async ({ principal, params, query }) => {
    const org = organizationFor(principal, query.organization_id);
    const user = await existingUser(principal, org, params.user_ref, `User not found: ${params.user_ref}`);
    return { success: true, export: await getExport(org, user.user_id, params.export_id) };
  },
});

defineRoute({
  method: 'GET',
  paths: ['/api/users/:user_ref/exports/:export_id/download'],
  statuses: { 409: 'The export is still being prepared, or failed', 410: 'The export has expired' },
  tag,
  summary: 'Downloads a ready export (application/zip); 409 while it is prepared, 410 once expired',
  auth: 'key',
  params: exportParams,
  query: orgQuery,
  produces: 'application/zip',
  handler: async ({ principal, params, query }) => {
    const org = organizationFor(principal, query.organization_id);
    const user = await existingUser(principal, org, params.user_ref, `User not found: ${params.user_ref}`);
    const file = await openExportDownload(org, user.user_id, params.export_id);
    return new StreamedFile(file.stream, file.size, file.filename);
  },
});

defineRoute({
  method: 'DELETE',
  paths: ['/api/users/:user_ref'],
  tag,
  summary:
    "Erases the user's data (admin): keys revoked, personal data deleted, the organization's books kept under a tombstone; asking again answers the same erasure",
  auth: 'admin',
  // The user_id, never the user_ref: an idp_id (often an email) would outlive the erasure in the trail.
  audit: {
    action: 'user.erase',
    target: ({ result }) => ({ type: 'user', id: answerField(result, 'user_id') }),
  },
  params: userParams,
  query: orgQuery,
  body: z.object({
    reason: z
      .string()
      .trim()
      .min(1)
      .max(500)
      .optional()
      .describe("why (kept on the erasure's record and in the audit trail)"),
  }),
  status: 202,
  response: z.object({
    success: z.literal(true),
    erasure_id: z.string(),
    user_id: z.string(),
    status: z.enum(ERASURE_STATUSES),
    erasure: erasureView,
  }),
  handler: async ({ principal, params, query, body }) => {
    const org = organizationFor(principal, query.organization_id);
    const user = await findUser(org, params.user_ref);
    if (!user) {
      // Already being (or been) erased: the same erasure, by user_id.
      if (isPlatformUserId(params.user_ref)) {
        const view = await getErasure(org, params.user_ref).catch(() => null);
        if (view)
          return new Reply(202, {
            success: true,
            erasure_id: view.erasure_id,
            user_id: view.user_id,
            status: view.status,
            erasure: view,
          });
      }
      throw notFound(`User not found: ${params.user_ref}`);
    }
    // An admin may not erase a user holding more rights than its own key.
    await requireRankOver(principal, org, user.user_id);
    const { view } = await requestErasure(org, user, requester(principal), body.reason);
    return { success: true, erasure_id: view.erasure_id, user_id: view.user_id, status: view.status, erasure: view };
  },
});

defineRoute({
  method: 'GET',
  paths: ['/api/users/:user_ref/erasure'],
  tag,
  summary: "The user's erasure: its status and what each component did (admin; by user_id once the erasure began)",
  auth: 'admin',
  params: userParams,
  query: orgQuery,
  response: z.object({ success: z.literal(true), erasure: erasureView }),
  handler: async ({ principal, params, query }) => {
    const org = organizationFor(principal, query.organization_id);
    return { success: true, erasure: await getErasure(org, params.user_ref) };
  },
});
