/** The scheduler component's surface: what the edge, the workflows, the composition root and other components may use. */
export { RECURRENCES, scheduleSpec } from './calendar.ts';
export { runScheduledEvent } from './event-runs.ts';
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
export type { SchedulePort } from './port.ts';
export { configureScheduler } from './port.ts';
export { registerTask } from './registry.ts';
export type { EventInput } from './scheduled-events.ts';
export type { EventDoc } from './store.ts';
export { schedulerUserData } from './user-data.ts';
export { eventViewA, eventViewB, savedViewA } from './views.ts';
export { rotateWebhookSecret, webhookSecretStatus } from './webhook-secret.ts';
