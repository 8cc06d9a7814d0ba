/**
 * What `execute_scheduled_task` does for each `type_of_event`: each component gives its task from
 * its own `scheduled.ts`; this list only wires them. Calling out to a URL is the scheduler's own.
 */
import { checkWebhookTarget, deliverWebhook } from '../engines/webhooks';
import { billingTask } from '../billing/scheduled';
import { documentsTask } from '../documents/scheduled';
import { emailTask } from '../email/scheduled';
import { feedbackTask } from '../feedback/scheduled';
import { loyaltyTask } from '../loyalty/scheduled';
import { supportTask } from '../support/scheduled';
import type { EventType } from './constants';
import type { TaskDefinition } from './task';

export type { ScheduledTask, TaskDefinition } from './task';

const webhookTask: TaskDefinition = {
  admin_only: "sending the owner's data to an address of its choice",
  checkMetadata: async (metadata) => void (await checkWebhookTarget(metadata.url)),
  async run(task) {
    const { url, ...rest } = task.metadata;
    const payload = { action: task.action, event_id: task.event_id, run_id: task.run_id, user_id: task.user_id, idp_id: task.idp_id, organization_id: task.organization_id, metadata: rest };
    const out = await deliverWebhook(url, payload, task.run_id);
    return { status: out.status };
  },
};

export const TASKS: Record<EventType, TaskDefinition> = {
  email: emailTask,
  loyalty: loyaltyTask,
  billing: billingTask,
  support: supportTask,
  feedback: feedbackTask,
  documents: documentsTask,
  webhook: webhookTask,
};
