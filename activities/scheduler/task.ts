/**
 * What a component gives the scheduler for its `type_of_event` (its own `scheduled.ts`), and the
 * one mail helper every report task uses. registry.ts lists them; the scheduler knows no
 * component's rules itself.
 */
import { PlatformError } from '../core/errors';
import { composeEmail, sendEmail, type EmailRequest } from '../email/email';
import { ADMIN_LEVEL, reserveSend } from '../email/policy';
import { getUser } from '../identity/users';

/** `execute_scheduled_task`: what a run hands the component's task. */
export interface ScheduledTask {
  action: 'execute_scheduled_task';
  event_id: string;
  run_id: string;
  user_id: string;
  idp_id: string;
  organization_id: string;
  metadata: Record<string, unknown>;
  /** the level the event runs with (see rights.ts), checked before the task starts */
  actor_level: number;
}

/** The event as its rights are checked: when saved and again at every run. */
export interface EventForRights {
  organization_id: string;
  user_id: string;
  metadata: Record<string, unknown>;
}

export interface TaskDefinition {
  run(task: ScheduledTask): Promise<Record<string, unknown>>;
  /** set when only an admin may schedule it: what it reads or sends beyond the owner's own data */
  admin_only?: string;
  /** the task mails a report to metadata.recipient (or the owner): a basic key sends only to its own address */
  mails_report?: boolean;
  /** what a basic actor may not schedule (403), beyond the rules above */
  checkRights?(ev: EventForRights, level: number): Promise<void> | void;
  /** metadata the task needs to run at all (422 naming the field), checked when the event is saved */
  checkMetadata?(metadata: Record<string, unknown>): Promise<void> | void;
}

/** metadata.recipient, else the owner's own address (422 when it has none). */
export async function recipientOrOwner(task: ScheduledTask): Promise<string> {
  if (typeof task.metadata.recipient === 'string') return task.metadata.recipient;
  const own = (await getUser(task.organization_id, task.user_id)).email;
  if (!own) throw new PlatformError(422, 'metadata.recipient: no recipient and the user has no email');
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
  if (task.actor_level < ADMIN_LEVEL) await reserveSend({ organization_id: req.organization_id, user_id: req.user_id, idempotency_key: req.idempotency_key });
  const sent = await sendEmail({ req, content });
  return { message_id: sent.message_id, recipient: sent.recipient };
}

/** metadata.period_days (default 7) of a report, 422 outside 1..3660. */
export function periodDays(metadata: Record<string, unknown>): number {
  const days = Number(metadata.period_days ?? 7);
  if (!Number.isFinite(days) || days <= 0 || days > 3660) throw new PlatformError(422, 'metadata.period_days: must be a number of days between 1 and 3660');
  return days;
}
