/**
 * Document processing: `/process_document` runs the workflow `document:<media_id>` and waits for
 * it; `/generate_thumbnail` answers the first page as JPEG (workflow `thumbnail:<media_id>`), for the
 * key's own user unless `user_id` names another. Both take an Idempotency-Key (edge/idempotency.ts).
 */
import { randomUUID } from 'node:crypto';

import type { H3Event } from 'h3';
import { z } from 'zod';

import { invalid } from '../../activities/core/errors.ts';
import type { UserRef } from '../../activities/identity/constants.ts';
import { readStoredObject } from '../../activities/images/index.ts';
import { documentRun, thumbnailRun, type UploadWorkflow } from '../../workers/runs/uploads.ts';
import { actingUser, organizationFor } from '../auth.ts';
import { defineRoute, type UploadedFile } from '../http.ts';
import { runOnUpload } from '../idempotency.ts';
import { organizationId, requiredId } from '../schemas.ts';

const tag = 'documents';
const newMediaId = () => randomUUID().replace(/-/g, '').slice(0, 20);

/** The run over the stored file, once per Idempotency-Key. */
function runOnce<Rest, R>(
  event: H3Event,
  route: string,
  user: UserRef & { organization_id: string },
  file: UploadedFile,
  fields: Record<string, unknown>,
  workflow: UploadWorkflow<Rest, R>,
  input: Rest,
) {
  const { organization_id, user_id } = user;
  return runOnUpload({ event, route, organization_id, user_id, file, fields, newId: newMediaId, workflow, input });
}

defineRoute({
  method: 'POST',
  paths: ['/process_document'],
  statuses: {
    402: "The organization's token budget cannot cover the model call",
    502: 'The model provider failed',
    503: 'The PDF reader is busy, or model calls are busy; retry after Retry-After',
  },
  tag,
  summary:
    'Reads a document (PDF, DOCX, image, text, Markdown, CSV): metadata, text (OCR for scans), folder classification, first-page thumbnail, normalized response (workflow document:<media_id>). An Idempotency-Key header makes a retry return the first answer',
  auth: 'key',
  audit: false,
  idempotent: true,
  form: {
    file: true,
    fields: z.object({
      user_id: requiredId,
      session_id: requiredId,
      conversation_id: requiredId,
      organization_id: organizationId,
    }),
  },
  response: z.object({
    success: z.literal(true),
    data: z.object({
      folder_structure: z.object({ folder_name: z.string(), category: z.string(), subcategory: z.string() }),
      metadata: z.object({ pages: z.number(), size: z.string(), format: z.string() }).passthrough(),
    }),
    normalized_response: z.string(),
    metadata: z.record(z.string(), z.unknown()),
    thumbnail_path: z.string(),
  }),
  handler: async ({ event, principal, form, file }) => {
    const org = organizationFor(principal, form.organization_id);
    const user = await actingUser(principal, org, form.user_id);
    const { session_id, conversation_id } = form;
    const input = { idp_id: user.idp_id, session_id, conversation_id };
    return runOnce(
      event,
      'process_document',
      { ...user, organization_id: org },
      file!,
      { session_id, conversation_id },
      documentRun,
      input,
    );
  },
});

defineRoute({
  method: 'POST',
  paths: ['/generate_thumbnail'],
  statuses: { 503: 'The PDF reader is busy; retry after Retry-After' },
  tag,
  summary:
    'The first page (PDF, DOCX, text) or frame (images) as a JPEG thumbnail; also stored, its path in X-Thumbnail-Path. An Idempotency-Key header makes a retry return the first thumbnail',
  auth: 'key',
  audit: false,
  idempotent: true,
  form: {
    file: true,
    fields: z.object({
      user_id: z
        .string()
        .trim()
        .min(1)
        .max(200)
        .optional()
        .describe(
          "whose thumbnail it is; default the key's own user (required when a system admin names another organization)",
        ),
      organization_id: organizationId,
    }),
  },
  produces: 'image/jpeg',
  handler: async ({ event, principal, form, file }) => {
    const org = organizationFor(principal, form.organization_id);
    if (!form.user_id && org !== principal.organization_id)
      throw invalid('user_id', "required when acting in another organization: the key's own user is not there");
    const user = await actingUser(principal, org, form.user_id ?? principal.user_id);
    const out = await runOnce(
      event,
      'generate_thumbnail',
      { ...user, organization_id: org },
      file!,
      {},
      thumbnailRun,
      {},
    );
    event.node.res.setHeader('x-thumbnail-path', out.thumbnail_path);
    return readStoredObject(out.thumbnail_path);
  },
});
