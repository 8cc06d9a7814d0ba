/** The events component's surface: outgoing signed webhooks and the event log (docs/components/events.md). */
export { EVENT_TYPES, DELIVERY_STATUSES, type EventType, type DeliveryStatus } from './constants';
export { changeEndpoint, createEndpoint, getEndpoint, listEndpoints, removeEndpoint, rotateSecret, type EndpointView } from './endpoints';
export { configureEvents, eventId, eventsRecorded, eventsSettled, recordEvent, type ChangeEvent, type DeliveryRun, type DeliveryRuns } from './emit';
export { attemptDelivery, deliveryOutcomes, listDeliveries, retryDelivery, type AttemptInput, type AttemptResult, type DeliveryView } from './deliveries';
export { listEvents, sendPing } from './log';
export { registerEventSource, sweepEvents, type EventSource, type SweepResult } from './sweep';
export { eventsUserData } from './user-data';
