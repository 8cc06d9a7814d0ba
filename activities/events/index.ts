/** The events component's surface: outgoing signed webhooks and the event log (docs/components/events.md). */
export { beforeSleep, deliverDue, type EndpointActorInput } from './actor.ts';
export { EVENT_TYPES, type EventType } from './constants.ts';
export { attemptDelivery, type AttemptResult, deliveryOutcomes, listDeliveries, retryDelivery } from './deliveries.ts';
export { type DeliveryRun, eventId, eventsRecorded, eventsSettled, recordEvent } from './emit.ts';
export {
  changeEndpoint,
  createEndpoint,
  getEndpoint,
  listEndpoints,
  removeEndpoint,
  rotateSecret,
} from './endpoints.ts';
export { listEvents, sendPing } from './log.ts';
export {
  type EndpointMetric,
  endpointMetrics,
  endpointStats,
  pauseEndpoint,
  REPLAY_LIMIT,
  replayEndpoint,
  resumeEndpoint,
} from './operators.ts';
export { configureEvents, type DeliveryRuns } from './queue.ts';
export { registerEventSource, sweepEvents, type SweepResult } from './sweep.ts';
export { eventsUserData } from './user-data.ts';
