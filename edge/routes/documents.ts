/**
 * Document processing: `/process_document` runs the workflow `document:<media_id>` and waits for
 * it; `/generate_thumbnail` answers the first page as JPEG (workflow `thumbnail:<media_id>`), for the
 * key's own user unless `user_id` names another.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { invalid } from '../../activities/errors';
import { readStoredObject, storeUpload } from '../../activities/images/images';
import { platformSearchAttributes } from '../../workflows/search-attributes';
import { actingUser, organizationFor } from '../auth';
import { defineRoute } from '../http';
import { organizationId, requiredId } from '../schemas';
import { taskQueue, temporal } from '../temporal';

const tag = 'documents';

defineRoute({
  method: 'POST',
  paths: ['/process_document'],
  tag,
  summary: 'Reads a document (PDF, DOCX, image, text, Markdown, CSV): metadata, text (OCR for scans), folder classification, first-page thumbnail, normalized response (workflow document:<media_id>)',
  auth: 'key',
  form: { file: true, fields: z.object({ user_id: requiredId, session_id: requiredId, conversation_id: requiredId, organization_id: organizationId }) },
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
  handler: async ({ principal, form, file }) => {
    const org = organizationFor(principal, form.organization_id);
    const user = await actingUser(principal, org, form.user_id);
    const media_id = randomUUID().replace(/-/g, '').slice(0, 20);
    const upload = await storeUpload({ media_id, organization_id: org, user_id: user.user_id, filename: file!.filename, body: file!.data, content_type: file!.contentType });
    const client = await temporal();
    return client.workflow.execute('processDocumentWorkflow', {
      taskQueue: taskQueue(),
      workflowId: `document:${media_id}`,
      args: [{ upload, idp_id: user.idp_id, session_id: form.session_id, conversation_id: form.conversation_id }],
      typedSearchAttributes: platformSearchAttributes(org, user.user_id, 'documents'),
    });
  },
});

defineRoute({
  method: 'POST',
  paths: ['/generate_thumbnail'],
  tag,
  summary: 'The first page (PDF, DOCX, text) or frame (images) as a JPEG thumbnail; also stored, its path in X-Thumbnail-Path',
  auth: 'key',
  form: {
    file: true,
    fields: z.object({
      user_id: z.string().trim().min(1).max(200).optional().describe("whose thumbnail it is; default the key's own user (required when a system admin names another organization)"),
      organization_id: organizationId,
    }),
  },
  produces: 'image/jpeg',
  handler: async ({ event, principal, form, file }) => {
    const org = organizationFor(principal, form.organization_id);
    if (!form.user_id && org !== principal.organization_id) throw invalid('user_id', "required when acting in another organization: the key's own user is not there");
    const user = await actingUser(principal, org, form.user_id ?? principal.user_id);
    const media_id = randomUUID().replace(/-/g, '').slice(0, 20);
    const upload = await storeUpload({ media_id, organization_id: org, user_id: user.user_id, filename: file!.filename, body: file!.data, content_type: file!.contentType });
    const client = await temporal();
    const out: { thumbnail_path: string } = await client.workflow.execute('generateThumbnailWorkflow', {
      taskQueue: taskQueue(),
      workflowId: `thumbnail:${media_id}`,
      args: [{ upload }],
      typedSearchAttributes: platformSearchAttributes(org, user.user_id, 'documents'),
    });
    event.node.res.setHeader('x-thumbnail-path', out.thumbnail_path);
    return readStoredObject(out.thumbnail_path);
  },
});
