/** Email: conversation summaries and notifications, sent by the workflow email:<org>:<key>. */
import { createHash, randomUUID } from 'node:crypto';

import { getRequestHeader } from 'h3';
import { z } from 'zod';

import { invalid } from '../../activities/core/errors.ts';
import {
  checkFreeText,
  checkRecipient,
  EMAIL_TYPES,
  notificationContent,
  reserveSend,
} from '../../activities/email/index.ts';
import { ADMIN_LEVEL } from '../../activities/identity/constants.ts';
import { getUser } from '../../activities/identity/index.ts';
import { runIdempotent } from '../../workers/runs/client.ts';
import { emailWorkflow } from '../../workflows/email.ts';
import { platformSearchAttributes } from '../../workflows/search-attributes.ts';
import { actingUser, organizationFor } from '../auth.ts';
import { answerField, defineRoute } from '../http.ts';
import { organizationId, requiredId } from '../schemas.ts';

const address = z.email();

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
    const meta = body.metadata;
    let recipient: string | undefined;
    let own: string | null | undefined;
    if (meta.recipient !== undefined) {
      if (
        typeof meta.recipient !== 'string' ||
        /[\r\n]/.test(meta.recipient) ||
        !address.safeParse(meta.recipient.trim()).success
      ) {
        throw invalid('metadata.recipient', 'must be one valid email address');
      }
      recipient = meta.recipient.trim();
    } else {
      recipient = own = (await getUser(org, user.user_id)).email ?? undefined;
      if (!recipient)
        throw invalid(
          'metadata.recipient',
          "no recipient: give metadata.recipient or set the user's email (PATCH /api/users/{user})",
        );
    }
    if (body.email_type === 'notification') notificationContent(meta, org); // refuses bad templates before anything starts
    if (principal.level < ADMIN_LEVEL) {
      if (own === undefined) own = (await getUser(org, user.user_id)).email;
      checkRecipient(principal.level, recipient, own);
      checkFreeText(body.email_type, meta);
      recipient = own!; // the address as on record, whatever case it was given in
    }
    const rawKey =
      (typeof meta.idempotency_key === 'string' && meta.idempotency_key.trim()) ||
      getRequestHeader(event, 'idempotency-key')?.trim() ||
      `auto-${randomUUID()}`;
    if (rawKey.length > 200) throw invalid('metadata.idempotency_key', 'at most 200 characters');
    const idempotency_key = `${user.user_id}:${rawKey}`;
    if (principal.level < ADMIN_LEVEL)
      await reserveSend({ organization_id: org, user_id: user.user_id, idempotency_key });
    const workflowId = `email:${org}:${createHash('sha256').update(idempotency_key).digest('hex').slice(0, 32)}`;
    const { result: sent, attached } = await runIdempotent(
      emailWorkflow,
      workflowId,
      [
        {
          organization_id: org,
          user_id: user.user_id,
          conversation_id: body.conversation_id,
          email_type: body.email_type,
          metadata: meta,
          recipient,
          idempotency_key,
        },
      ],
      platformSearchAttributes(org, user.user_id, 'email'),
    );
    return {
      success: true,
      message_id: sent.message_id,
      metadata: { sent_at: sent.sent_at, recipient: sent.recipient, email_type: sent.email_type },
      duplicate: sent.duplicate || attached,
      transport: sent.transport,
    };
  },
});
