/** Email: conversation summaries and notifications, sent by the workflow email:<org>:<key>. */
import { z } from 'zod';

import { EMAIL_TYPES, requestEmail } from '../../activities/email/index.ts';
import { actingUser, organizationFor } from '../auth.ts';
import { answerField, defineRoute } from '../http.ts';
import { idempotencyKeyOf } from '../idempotency.ts';
import { organizationId, requiredId } from '../schemas.ts';

defineRoute({
  method: 'POST',
  paths: ['/email/send'],
  tag: 'email',
  summary: 'Sends a conversation summary or a notification; metadata.idempotency_key (or Idempotency-Key) sends once',
  auth: 'key',
  audit: {
    action: 'email.send',
    target: ({ result }) => ({ type: 'email', id: answerField(result, 'message_id') }),
    keep: ['conversation_id', 'metadata.template', 'metadata.email_type'],
  },
  idempotent: true,
  body: z.object({
    user_id: requiredId,
    organization_id: organizationId,
    conversation_id: requiredId,
    email_type: z.enum(EMAIL_TYPES),
    metadata: z.record(z.string(), z.unknown()).default({}),
  }),
  response: z.object({
    success: z.literal(true),
    message_id: z.string(),
    metadata: z.object({ sent_at: z.string(), recipient: z.string(), email_type: z.string() }),
    duplicate: z.boolean(),
    transport: z.string(),
  }),
  handler: async ({ event, principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    const user = await actingUser(principal, org, body.user_id);
    const { sent, duplicate } = await requestEmail({
      organization_id: org,
      user_id: user.user_id,
      actor_level: principal.level,
      conversation_id: body.conversation_id,
      email_type: body.email_type,
      metadata: body.metadata,
      headerKey: () => idempotencyKeyOf(event),
    });
    const { message_id, sent_at, recipient, email_type, transport } = sent;
    return { success: true, message_id, metadata: { sent_at, recipient, email_type }, duplicate, transport };
  },
});
