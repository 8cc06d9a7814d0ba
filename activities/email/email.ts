/** The steps of the email workflow: compose, then send once per idempotency key. */
import { createHash } from 'node:crypto';

import { deliver, RecipientRejected } from '../adapters/mail.ts';
import { conflict, invalid, notFound } from '../core/errors.ts';
import { findOrganization } from '../identity/index.ts';
import { listNormalizedResponses } from '../responses/index.ts';
import { type Content, type EmailType, notificationContent, summaryContent } from './compose.ts';
import { recordSent, sentRecord } from './store.ts';
import { isSuppressed, suppress, unsubscribeUrl } from './suppressions.ts';
import { renderTemplate, templateFor } from './templates.ts';

export interface EmailRequest {
  organization_id: string;
  user_id: string;
  conversation_id: string;
  email_type: EmailType;
  metadata: Record<string, unknown>;
  recipient: string;
  idempotency_key: string;
}

export async function composeEmail(req: EmailRequest): Promise<Content> {
  if (req.email_type === 'notification' && req.metadata.template_id !== undefined) {
    const doc = await templateFor(req.organization_id, String(req.metadata.template_id));
    const locale = typeof req.metadata.locale === 'string' ? req.metadata.locale : undefined;
    const { subject, text, html } = renderTemplate(doc, req.metadata.variables, {
      locale,
      field: 'metadata.variables',
      unsubscribe_url: unsubscribeUrl(req.organization_id, req.recipient),
    });
    return { subject, text, html };
  }
  if (req.email_type === 'notification') {
    const org = await findOrganization(req.organization_id);
    return notificationContent(req.metadata, org?.name ?? req.organization_id);
  }
  const responses = await listNormalizedResponses(req.organization_id, req.conversation_id, req.user_id);
  if (!responses.length) throw notFound('No normalized response found');
  const subject =
    typeof req.metadata.subject === 'string' && !/[\r\n]/.test(req.metadata.subject)
      ? req.metadata.subject.slice(0, 200)
      : undefined;
  return summaryContent(req.conversation_id, [...responses].reverse(), subject);
}

/** 409 for a suppressed recipient: every send of the organization refuses it the same way. */
export const suppressedError = (recipient: string, reason: string) =>
  conflict(
    `metadata.recipient: ${recipient} is suppressed in this organization (${reason}); nothing was sent. An admin lifts it with DELETE /api/email/suppressions/{address}`,
  );

export interface SentEmail {
  message_id: string;
  sent_at: string;
  recipient: string;
  email_type: EmailType;
  transport: string;
  duplicate: boolean;
}

/**
 * Sends unless this key was already sent. SMTP cannot be exactly-once: if the process dies after
 * the server accepted the message and before the record is written, the retry sends again with
 * the same Message-ID, which mail systems use to drop the duplicate.
 */
export async function sendEmail(input: { req: EmailRequest; content: Content }): Promise<SentEmail> {
  const { req, content } = input;
  const _id = `${req.organization_id}|${req.idempotency_key}`;
  const done = await sentRecord(req.organization_id, req.idempotency_key);
  if (done)
    return {
      message_id: done.message_id,
      sent_at: done.sent_at.toISOString(),
      recipient: done.recipient,
      email_type: done.email_type,
      transport: done.transport,
      duplicate: true,
    };
  const suppressed = await isSuppressed(req.organization_id, req.recipient);
  if (suppressed) throw suppressedError(req.recipient, suppressed.reason);
  const digest = createHash('sha256').update(_id).digest('hex').slice(0, 24);
  const message_id = `<${digest}@${req.organization_id.replace(/[^A-Za-z0-9.-]/g, '-')}.platform>`;
  const out = await deliver({
    to: req.recipient,
    subject: content.subject,
    text: content.text,
    html: content.html,
    messageId: message_id,
    // RFC 2369 and RFC 8058: mail clients show an unsubscribe button that POSTs the link.
    headers: {
      'List-Unsubscribe': `<${unsubscribeUrl(req.organization_id, req.recipient)}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    },
  }).catch(async (err: unknown) => {
    if (!(err instanceof RecipientRejected)) throw err;
    await suppress(req.organization_id, req.recipient, 'hard_bounce', 'smtp', err.response);
    throw invalid(
      'metadata.recipient',
      `the mail server refused ${req.recipient} for good (${err.response}): suppressed as a hard bounce, nothing was sent`,
    );
  });
  const sent_at = new Date();
  // The outbox file's name is recorded with the message: the user's erasure removes it by that name.
  await recordSent(req.idempotency_key, {
    organization_id: req.organization_id,
    user_id: req.user_id,
    message_id,
    recipient: req.recipient,
    email_type: req.email_type,
    subject: content.subject,
    transport: out.transport,
    ...(out.outbox_file && { outbox_file: out.outbox_file }),
    sent_at,
  });
  return {
    message_id,
    sent_at: sent_at.toISOString(),
    recipient: req.recipient,
    email_type: req.email_type,
    transport: out.transport,
    duplicate: false,
  };
}
