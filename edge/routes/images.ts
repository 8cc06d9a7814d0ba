/**
 * Image processing: the edge stores the upload in MinIO, then runs the image workflow and waits
 * for its result; an operator finds every run in the Temporal UI by organization and user.
 * `/process_image` takes an Idempotency-Key (edge/idempotency.ts).
 */
import { randomUUID } from 'node:crypto';

import { z } from 'zod';

import { readStoredObject } from '../../activities/images/index.ts';
import { heicRun, imageRun } from '../../workers/runs/uploads.ts';
import { actingUser, organizationFor } from '../auth.ts';
import { defineRoute } from '../http.ts';
import { runOnUpload, runUpload } from '../idempotency.ts';
import { organizationId, requiredId } from '../schemas.ts';

const tag = 'images';

const imageMetadata = z.object({
  dimensions: z.string(),
  width: z.number(),
  height: z.number(),
  format: z.string(),
  mime_type: z.string(),
  size: z.string(),
  size_bytes: z.number(),
  orientation: z.number().optional(),
});

const newMediaId = () => randomUUID().replace(/-/g, '').slice(0, 20);

defineRoute({
  method: 'POST',
  paths: ['/process_image'],
  tag,
  summary:
    'Stores an image, makes a JPEG thumbnail and metadata, records the normalized response (workflow image:<media_id>). An Idempotency-Key header makes a retry return the first answer',
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
    data: z.object({ thumbnail_path: z.string(), original_path: z.string(), metadata: imageMetadata }),
    normalized_response: z.string(),
    metadata: z.record(z.string(), z.unknown()),
    thumbnail_path: z.string(),
  }),
  handler: async ({ event, principal, form, file }) => {
    const org = organizationFor(principal, form.organization_id);
    const user = await actingUser(principal, org, form.user_id);
    const { session_id, conversation_id } = form;
    return runOnUpload({
      event,
      route: 'process_image',
      organization_id: org,
      user_id: user.user_id,
      file: file!,
      fields: { session_id, conversation_id },
      newId: newMediaId,
      workflow: imageRun,
      input: { idp_id: user.idp_id, session_id, conversation_id },
    });
  },
});

defineRoute({
  method: 'POST',
  paths: ['/convert_heic'],
  tag,
  summary: 'Converts a HEIC/HEIF photo to an upright full-size JPEG (workflow heic:<media_id>)',
  auth: 'key',
  audit: false,
  form: {
    file: true,
    fields: z.object({
      user_id: z.string().trim().min(1).optional().describe("defaults to the key's user"),
      organization_id: organizationId,
    }),
  },
  produces: 'image/jpeg',
  handler: async ({ principal, form, file }) => {
    const org = organizationFor(principal, form.organization_id);
    const user = await actingUser(principal, org, form.user_id ?? principal.user_id);
    const out = await runUpload({
      organization_id: org,
      user_id: user.user_id,
      file: file!,
      newId: newMediaId,
      workflow: heicRun,
      input: {},
    });
    return readStoredObject(out.jpeg_path);
  },
});
