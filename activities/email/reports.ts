/**
 * The mail a scheduled report sends: composed and sent once per run (the run id is the
 * idempotency key), a basic owner's mail counted against its hourly budget.
 */
import { PlatformError } from '../core/errors.ts';
import type { ScheduledTask } from '../core/scheduled-task.ts';
import { ADMIN_LEVEL } from '../identity/constants.ts';
import { getUser } from '../identity/index.ts';
import { composeEmail, type EmailRequest, sendEmail } from './email.ts';
import { reserveSend } from './policy.ts';

/** metadata.recipient, else the owner's own address (422 when it has none). */
export async function recipientOrOwner(task: ScheduledTask): Promise<string> {
  if (typeof task.metadata.recipient === 'string') return task.metadata.recipient;
  const own = (await getUser(task.organization_id, task.user_id)).email;
  if (!own) throw new PlatformError('invalid', 'metadata.recipient: no recipient and the user has no email');
  return own;
}

export interface Mail {
  recipient: string;
  /** a report's subject and body; the email task passes its own metadata and type */
  metadata: Record<string, unknown>;
  email_type?: EmailRequest['email_type'];
  conversation_id?: string;
}

/**
 * Composes and sends once per run (the run id is the idempotency key: a retried run sends
 * nothing twice); a basic owner's mail counts against its hourly budget.
 */
export async function mailOnce(task: ScheduledTask, mail: Mail): Promise<{ message_id: string; recipient: string }> {
  const req: EmailRequest = {
    organization_id: task.organization_id,
    user_id: task.user_id,
    conversation_id: mail.conversation_id ?? '-',
    email_type: mail.email_type ?? 'notification',
    metadata: mail.metadata,
    recipient: mail.recipient,
    idempotency_key: `event:${task.run_id}`,
  };
  const content = await composeEmail(req);
  if (task.actor_level < ADMIN_LEVEL)
    await reserveSend({
      organization_id: req.organization_id,
      user_id: req.user_id,
      idempotency_key: req.idempotency_key,
    });
  const sent = await sendEmail({ req, content });
  return { message_id: sent.message_id, recipient: sent.recipient };
}

/** metadata.period_days (default 7) of a report, 422 outside 1..3660. */
export function periodDays(metadata: Record<string, unknown>): number {
  const days = Number(metadata.period_days ?? 7);
  if (!Number.isFinite(days) || days <= 0 || days > 3660)
    throw new PlatformError('invalid', 'metadata.period_days: must be a number of days between 1 and 3660');
  return days;
}
