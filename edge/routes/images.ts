/**
 * Image processing: the edge stores the upload in MinIO, then runs the image workflow and waits
 * for its result; an operator finds every run in the Temporal UI by organization and user.
 * `/process_image` takes an Idempotency-Key (edge/idempotency.ts).
 */
import { randomUUID } from 'node:crypto';

import { z } from 'zod';

import type { Principal } from '../../activities/identity/index.ts';
import { readStoredObject, storeUpload } from '../../activities/images/index.ts';
import { runIdempotent, taskQueue, temporal } from '../../workers/runs/client.ts';
import { convertHeicWorkflow, processImageWorkflow } from '../../workflows/images.ts';
import { platformSearchAttributes } from '../../workflows/search-attributes.ts';
import { actingUser, organizationFor } from '../auth.ts';
import { defineRoute, type UploadedFile } from '../http.ts';
import { once, uploadFor } from '../idempotency.ts';
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

async function stage(principal: Principal, orgRequested: string | undefined, userRef: string, file: UploadedFile) {
  const org = organizationFor(principal, orgRequested);
  const user = await actingUser(principal, org, userRef);
  const media_id = newMediaId();
  const upload = await storeUpload({
    media_id,
    organization_id: org,
    user_id: user.user_id,
    filename: file.filename,
    body: file.data,
    content_type: file.contentType,
  });
  return { org, user, upload };
}

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
    return once({
      event,
      route: 'process_image',
      organization_id: org,
      user_id: user.user_id,
      fields: { session_id, conversation_id, filename: file!.filename, content_type: file!.contentType },
      file: file!.data,
      newId: newMediaId,
      run: async (media_id, retry) => {
        const workflowId = `image:${media_id}`;
        const upload = await uploadFor(workflowId, retry, {
          media_id,
          organization_id: org,
          user_id: user.user_id,
          filename: file!.filename,
          body: file!.data,
          content_type: file!.contentType,
        });
        const input = { upload, idp_id: user.idp_id, session_id, conversation_id };
        return (
          await runIdempotent(
            processImageWorkflow,
            workflowId,
            [input],
            platformSearchAttributes(org, user.user_id, 'images'),
          )
        ).result;
      },
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
    const { org, user, upload } = await stage(
      principal,
      form.organization_id,
      form.user_id ?? principal.user_id,
      file!,
    );
    const client = await temporal();
    const out = await client.workflow.execute(convertHeicWorkflow, {
      taskQueue: taskQueue(),
      workflowId: `heic:${upload.media_id}`,
      args: [{ upload }],
      typedSearchAttributes: platformSearchAttributes(org, user.user_id, 'images'),
    });
    return readStoredObject(out.jpeg_path);
  },
});
