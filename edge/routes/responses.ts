/** Normalized responses per conversation, and stored thumbnails. */
import { z } from 'zod';

import { notFound } from '../../activities/core/errors.ts';
import { readThumbnail } from '../../activities/images/index.ts';
import { deleteConversationResponses, listNormalizedResponses } from '../../activities/responses/index.ts';
import { deleteConversation } from '../../activities/sessions/index.ts';
import { existingUser, organizationFor } from '../auth.ts';
import { defineRoute } from '../http.ts';
import { organizationId, requiredId } from '../schemas.ts';

defineRoute({
  method: 'GET',
  paths: ['/get_response/:conversation_id'],
  tag: 'responses',
  summary:
    "The normalized responses stored for a user's conversation, newest first (message and metadata of the newest)",
  auth: 'key',
  params: z.object({ conversation_id: requiredId }),
  query: z.object({ user_id: requiredId, organization_id: organizationId }),
  response: z.object({
    success: z.literal(true),
    message: z.string(),
    metadata: z.record(z.string(), z.unknown()),
    responses: z.array(
      z.object({
        response_id: z.string(),
        source: z.string(),
        message: z.string(),
        metadata: z.record(z.string(), z.unknown()),
        created_at: z.string(),
      }),
    ),
  }),
  handler: async ({ principal, params, query }) => {
    const org = organizationFor(principal, query.organization_id);
    const user = await existingUser(principal, org, query.user_id, 'No normalized response found');
    const responses = await listNormalizedResponses(org, params.conversation_id, user.user_id);
    if (!responses.length) throw notFound('No normalized response found');
    const [newest] = responses;
    return {
      success: true,
      message: newest.message,
      metadata: {
        ...newest.metadata,
        source: newest.source,
        created_at: newest.created_at,
        conversation_id: params.conversation_id,
      },
      responses,
    };
  },
});

defineRoute({
  method: 'GET',
  paths: ['/thumbnail/:user_id/:filename'],
  tag: 'documents',
  summary: "A stored JPEG thumbnail of a user of the caller's organization",
  auth: 'key',
  params: z.object({
    user_id: requiredId,
    filename: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/, 'not a thumbnail file name'),
  }),
  query: z.object({ organization_id: organizationId }),
  produces: 'image/jpeg',
  handler: async ({ principal, params, query }) => {
    const org = organizationFor(principal, query.organization_id);
    const user = await existingUser(principal, org, params.user_id, 'Thumbnail not found');
    return readThumbnail(org, user.user_id, params.filename);
  },
});

// Extension: deleting a conversation removes what was stored for it.
defineRoute({
  method: 'DELETE',
  paths: ['/conversations/:conversation_id'],
  tag: 'responses',
  summary: "Deletes a user's conversation and the normalized responses stored for it",
  auth: 'key',
  audit: {
    action: 'conversation.delete',
    target: ({ params }) => ({ type: 'conversation', id: params.conversation_id }),
  },
  params: z.object({ conversation_id: requiredId }),
  query: z.object({ user_id: requiredId, organization_id: organizationId }),
  response: z.object({
    success: z.literal(true),
    conversation_id: z.string(),
    deleted_conversation: z.boolean(),
    deleted_responses: z.number(),
  }),
  handler: async ({ principal, params, query }) => {
    const org = organizationFor(principal, query.organization_id);
    const user = await existingUser(principal, org, query.user_id, 'Conversation not found');
    const deleted_responses = await deleteConversationResponses(org, params.conversation_id, user.user_id);
    const deleted_conversation = await deleteConversation(org, params.conversation_id, user.user_id);
    if (!deleted_conversation && !deleted_responses) throw notFound('Conversation not found');
    return { success: true, conversation_id: params.conversation_id, deleted_conversation, deleted_responses };
  },
});
