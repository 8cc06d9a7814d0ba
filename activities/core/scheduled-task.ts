/**
 * The contract between the scheduler and the components that offer it a task: what a component
 * gives for its `type_of_event` (its own `scheduled.ts`) and what a run hands it. The composition
 * root registers each task (workers/root.ts); neither side imports the other.
 */

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
interface EventForRights {
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
  /** metadata the task needs to run at all (422 naming the field), checked when the event is saved in `ev.organization_id` */
  checkMetadata?(metadata: Record<string, unknown>, ev: { organization_id: string }): Promise<void> | void;
}
