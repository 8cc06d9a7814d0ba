/**
 * What `execute_scheduled_task` does for each `type_of_event`. Components register a task here;
 * a type whose component is not built yet fails its runs with a clear error rather than pretending.
 */
import { PlatformError } from '../errors';
import { awardAction } from '../loyalty/rules';
import { composeEmail, sendEmail } from '../email/email';
import { getUser } from '../identity/users';
import type { EventType } from './models';
import { deliverWebhook } from '../engines/webhooks';

export interface ScheduledTask {
  action: 'execute_scheduled_task';
  event_id: string;
  run_id: string;
  user_id: string;
  idp_id: string;
  organization_id: string;
  metadata: Record<string, unknown>;
}

type Task = (task: ScheduledTask) => Promise<Record<string, unknown>>;

const notBuilt = (component: string): Task => async () => {
  throw new PlatformError(501, `${component} tasks are not available yet`);
};

export const TASKS: Record<EventType, Task> = {
  async email(task) {
    const m = task.metadata;
    const recipient = typeof m.recipient === 'string' ? m.recipient : (await getUser(task.organization_id, task.user_id)).email;
    if (!recipient) throw new PlatformError(422, "metadata.recipient: no recipient and the user has no email");
    const req = {
      organization_id: task.organization_id,
      user_id: task.user_id,
      conversation_id: typeof m.conversation_id === 'string' ? m.conversation_id : '-',
      email_type: m.email_type === 'conversation_summary' ? ('conversation_summary' as const) : ('notification' as const),
      metadata: m,
      recipient,
      idempotency_key: `event:${task.run_id}`,
    };
    const sent = await sendEmail({ req, content: await composeEmail(req) });
    return { message_id: sent.message_id, recipient: sent.recipient };
  },
  async loyalty(task) {
    if (typeof task.metadata.action_type !== 'string') throw new PlatformError(422, 'metadata.action_type: required for loyalty events');
    const out = await awardAction({ organization_id: task.organization_id, user_id: task.user_id, action_type: task.metadata.action_type, operation_id: `event:${task.run_id}` });
    return { points_awarded: out.points_awarded, balance: out.entry.balance_after };
  },
  billing: notBuilt('billing'),
  support: notBuilt('support'),
  feedback: notBuilt('feedback'),
  documents: notBuilt('documents'),
  async webhook(task) {
    const { url, ...rest } = task.metadata;
    const payload = { action: task.action, event_id: task.event_id, run_id: task.run_id, user_id: task.user_id, idp_id: task.idp_id, organization_id: task.organization_id, metadata: rest };
    const out = await deliverWebhook(url, payload, task.run_id);
    return { status: out.status };
  },
};
