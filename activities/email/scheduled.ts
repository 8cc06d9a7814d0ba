/** The email component's scheduled task: one email per run, to metadata.recipient or the owner. */
import type { TaskDefinition } from '../core/scheduled-task.ts';
import { checkFreeText } from './policy.ts';
import { mailOnce, recipientOrOwner } from './reports.ts';
import { checkTemplateSend } from './templates.ts';

const emailType = (m: Record<string, unknown>) =>
  m.email_type === 'conversation_summary' ? ('conversation_summary' as const) : ('notification' as const);

export const emailTask: TaskDefinition = {
  mails_report: true,
  checkRights: (ev) => checkFreeText(emailType(ev.metadata), ev.metadata),
  // A template_id names a template of the organization whose variables the event fills (404 / 422
  // when saved); a template deleted or changed later fails the run with the same error.
  checkMetadata: (m, ev) => checkTemplateSend(ev.organization_id, emailType(m), m),
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
