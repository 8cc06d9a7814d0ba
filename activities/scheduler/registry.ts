/**
 * What `execute_scheduled_task` does for each `type_of_event`: each component gives its task from
 * its own `scheduled.ts` and the composition root registers it (workers/root.ts). Calling out to
 * a URL is the scheduler's own.
 */
import { checkWebhookTarget, deliverWebhook } from '../adapters/webhooks.ts';
import type { TaskDefinition } from '../core/scheduled-task.ts';
import type { EventType } from './constants.ts';
import { requireWebhookSecret, webhookSigningSecrets } from './webhook-secret.ts';

export type { TaskDefinition } from '../core/scheduled-task.ts';

/**
 * A signed POST to `metadata.url`, signed with the event's organization's own secret
 * (webhook-secret.ts): an organization without one cannot save such an event, and a run of one
 * saved before fails at once saying how to create it. The body names the user by `user_id`
 * only (no `idp_id`, often an email address, leaves the platform this way).
 */
const webhookTask: TaskDefinition = {
  admin_only: "sending the owner's data to an address of its choice",
  async checkMetadata(metadata, ev) {
    await checkWebhookTarget(metadata.url);
    await requireWebhookSecret(ev.organization_id);
  },
  async run(task) {
    const { url, ...rest } = task.metadata;
    const secrets = await webhookSigningSecrets(task.organization_id);
    const payload = {
      action: task.action,
      event_id: task.event_id,
      run_id: task.run_id,
      user_id: task.user_id,
      organization_id: task.organization_id,
      metadata: rest,
    };
    const out = await deliverWebhook(url, payload, task.run_id, secrets);
    return { status: out.status };
  },
};

const tasks = new Map<EventType, TaskDefinition>([['webhook', webhookTask]]);

/** Registers the task of a type of event (the composition root, once per process). */
export function registerTask(type: Exclude<EventType, 'webhook'>, task: TaskDefinition): void {
  tasks.set(type, task);
}

/** The task of a type of event; a type nobody registered is the process's wiring fault. */
export function taskFor(type: EventType): TaskDefinition {
  const task = tasks.get(type);
  if (!task)
    throw new Error(
      `no task registered for events of type ${type}: the process did not call wirePlatform() (workers/root.ts)`,
    );
  return task;
}
