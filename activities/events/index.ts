/** The events component's surface: outgoing signed webhooks and the event log (docs/components/events.md). */
export { DELIVERY_STATUSES, type DeliveryStatus, EVENT_TYPES, type EventType } from './constants.ts';
export {
  attemptDelivery,
  type AttemptInput,
  type AttemptResult,
  deliveryOutcomes,
  type DeliveryView,
  listDeliveries,
  retryDelivery,
} from './deliveries.ts';
export {
  type ChangeEvent,
  configureEvents,
  type DeliveryRun,
  type DeliveryRuns,
  eventId,
  eventsRecorded,
  eventsSettled,
  recordEvent,
} from './emit.ts';
export {
  changeEndpoint,
  createEndpoint,
  type EndpointView,
  getEndpoint,
  listEndpoints,
  removeEndpoint,
  rotateSecret,
} from './endpoints.ts';
export { listEvents, sendPing } from './log.ts';
export { type EventSource, registerEventSource, sweepEvents, type SweepResult } from './sweep.ts';
export { eventsUserData } from './user-data.ts';
