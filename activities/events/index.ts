/** The events component's surface: outgoing signed webhooks and the event log (docs/components/events.md). */
export { EVENT_TYPES, DELIVERY_STATUSES, type EventType, type DeliveryStatus } from './constants.ts';
export {
  changeEndpoint,
  createEndpoint,
  getEndpoint,
  listEndpoints,
  removeEndpoint,
  rotateSecret,
  type EndpointView,
} from './endpoints.ts';
export {
  configureEvents,
  eventId,
  eventsRecorded,
  eventsSettled,
  recordEvent,
  type ChangeEvent,
  type DeliveryRun,
  type DeliveryRuns,
} from './emit.ts';
export {
  attemptDelivery,
  deliveryOutcomes,
  listDeliveries,
  retryDelivery,
  type AttemptInput,
  type AttemptResult,
  type DeliveryView,
} from './deliveries.ts';
export { listEvents, sendPing } from './log.ts';
export { registerEventSource, sweepEvents, type EventSource, type SweepResult } from './sweep.ts';
export { eventsUserData } from './user-data.ts';
