/** The scheduler component's surface: what the edge, the workflows, the composition root and other components may use. */
export type { EventForRights, ScheduledTask, TaskDefinition } from '../core/scheduled-task.ts';
export { RECURRENCES, scheduleSpec } from './calendar.ts';
export { runScheduledEvent } from './event-runs.ts';
export type { Viewer } from './manage.ts';
export {
  createScheduledEvent,
  deleteScheduledEvent,
  eventRuns,
  listVisibleEvents,
  pauseScheduledEvent,
  runEventNow,
  updateScheduledEvent,
  visibleEvent,
} from './manage.ts';
export type { SchedulePort, ScheduleProvider } from './port.ts';
export { configureScheduler } from './port.ts';
export { registerTask } from './registry.ts';
export type { Actor } from './rights.ts';
export type { EventInput } from './scheduled-events.ts';
export type { EventDoc } from './store.ts';
export { schedulerUserData } from './user-data.ts';
export { eventViewA, eventViewB, savedViewA } from './views.ts';
export type { WebhookSecretView } from './webhook-secret.ts';
export { rotateWebhookSecret, webhookSecretStatus } from './webhook-secret.ts';
