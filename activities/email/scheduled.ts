/** The email component's scheduled task: one email per run, to metadata.recipient or the owner. */
import type { TaskDefinition } from '../core/scheduled-task.ts';
import { checkFreeText } from './policy.ts';
import { mailOnce, recipientOrOwner } from './reports.ts';

const emailType = (m: Record<string, unknown>) =>
  m.email_type === 'conversation_summary' ? ('conversation_summary' as const) : ('notification' as const);

export const emailTask: TaskDefinition = {
  mails_report: true,
  checkRights: (ev) => checkFreeText(emailType(ev.metadata), ev.metadata),
  async run(task) {
    const m = task.metadata;
    const sent = await mailOnce(task, {
      recipient: await recipientOrOwner(task),
      metadata: m,
      email_type: emailType(m),
      conversation_id: typeof m.conversation_id === 'string' ? m.conversation_id : '-',
    });
    return { message_id: sent.message_id, recipient: sent.recipient };
  },
};
