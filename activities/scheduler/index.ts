/** The scheduler component's surface: what the edge, the workflows and other components may use. */
export { RECURRENCES, nextRuns, scheduleSpec } from './calendar';
export { abandonUpdate, claimManualRun, commitUpdate, createEvent, deleteEvent, eventNotFound, getEvent, listEvents, listRuns, prepareUpdate, runScheduledEvent, setPaused, storedEvent } from './events';
export type { EventInput } from './events';
export { registerTask } from './registry';
export { checkEventRights } from './rights';
export type { Actor } from './rights';
export { eventMetadata } from './store';
export type { EventDoc } from './store';
export type { EventForRights, ScheduledTask, TaskDefinition } from './task';
