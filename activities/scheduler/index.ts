/** The scheduler component's surface: what the edge, the workflows, the composition root and other components may use. */
export { RECURRENCES, scheduleSpec } from './calendar';
export { runScheduledEvent } from './events';
export type { EventInput } from './events';
export { createScheduledEvent, deleteScheduledEvent, eventRuns, listVisibleEvents, pauseScheduledEvent, runEventNow, updateScheduledEvent, visibleEvent } from './manage';
export type { Viewer } from './manage';
export { configureScheduler } from './port';
export type { ScheduleProvider, SchedulePort } from './port';
export { registerTask } from './registry';
export type { Actor } from './rights';
export type { EventDoc } from './store';
export type { EventForRights, ScheduledTask, TaskDefinition } from '../core/scheduled-task';
export { eventViewA, eventViewB, savedViewA } from './views';
export { schedulerUserData } from './user-data';
