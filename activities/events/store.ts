/**
 * Events' data, and the only file that reads or writes its models: the endpoints
 * (`webhook_endpoints`), the event log (`events`), each event's delivery to each endpoint
 * (`webhook_deliveries`) and the attempt counters `/metrics` reads. docs/storage.md, "Events".
 */
import { byId, insertOnce } from '../core/db';
import type { DeliveryStatus } from './constants';
import { DeliveryCounter, PlatformEvent, WebhookDelivery, WebhookEndpoint, type AttemptDoc, type DeliveryDoc, type EndpointDoc, type EventDoc } from './models';

// --- endpoints ---

export const insertEndpoint = (doc: Omit<EndpointDoc, 'created_at' | 'updated_at'>) => WebhookEndpoint.create(doc);

/** The endpoint if it belongs to the organization (another organization's reads as missing). */
export async function endpointOf(organization_id: string, endpoint_id: string): Promise<EndpointDoc | null> {
  const doc = await byId<EndpointDoc>(WebhookEndpoint, endpoint_id);
  return doc && doc.organization_id === organization_id ? doc : null;
}

export const endpointById = (endpoint_id: string) => byId<EndpointDoc>(WebhookEndpoint, endpoint_id);

export const endpointsOf = (organization_id: string) =>
  WebhookEndpoint.find({ organization_id }).sort({ created_at: 1 }).lean<EndpointDoc[]>();

export const countEndpoints = (organization_id: string) => WebhookEndpoint.countDocuments({ organization_id });

/** `expect`: further conditions the endpoint must still meet (a rotation's current secret). */
export async function updateEndpoint(organization_id: string, endpoint_id: string, set: Record<string, unknown>, unset: string[] = [], expect: Record<string, unknown> = {}): Promise<EndpointDoc | null> {
  const update: Record<string, unknown> = { $set: set };
  if (unset.length) update.$unset = Object.fromEntries(unset.map((f) => [f, 1]));
  return WebhookEndpoint.findOneAndUpdate({ _id: endpoint_id, organization_id, ...expect }, update, { new: true }).lean<EndpointDoc>();
}

export async function deleteEndpoint(organization_id: string, endpoint_id: string): Promise<boolean> {
  return (await WebhookEndpoint.deleteOne({ _id: endpoint_id, organization_id })).deletedCount === 1;
}

/** Remembers the first failure since the last success (a later failure keeps the first date). */
export async function markFailing(endpoint_id: string, at: Date): Promise<void> {
  await WebhookEndpoint.updateOne({ _id: endpoint_id, failing_since: null }, { $set: { failing_since: at } });
}

export async function markSucceeding(endpoint_id: string): Promise<void> {
  await WebhookEndpoint.updateOne({ _id: endpoint_id, failing_since: { $ne: null } }, { $unset: { failing_since: 1 } });
}

/** Disables an enabled endpoint, saying why; false when it was not enabled (or is gone). */
export async function disableEndpoint(endpoint_id: string, reason: string): Promise<boolean> {
  return (await WebhookEndpoint.updateOne({ _id: endpoint_id, enabled: true }, { $set: { enabled: false, disabled_reason: reason } })).modifiedCount === 1;
}

// --- events ---

/** True when this call wrote the event; false when it was recorded before (the same change). */
export const insertEvent = (doc: Omit<EventDoc, 'created_at'> & { created_at?: Date }) => insertOnce(PlatformEvent, doc);

export const eventById = (event_id: string) => byId<EventDoc>(PlatformEvent, event_id);

export async function markFannedOut(event_id: string): Promise<void> {
  await PlatformEvent.updateOne({ _id: event_id }, { $set: { fanned_out: true } });
}

/** Events whose deliveries may not all have been started, recorded before `before`, oldest first. */
export const unfannedEvents = (before: Date, limit: number) =>
  PlatformEvent.find({ fanned_out: false, created_at: { $lt: before } }).sort({ created_at: 1 }).limit(limit).lean<EventDoc[]>();

export interface EventFilter {
  organization_id: string;
  type?: string;
  from?: Date;
  to?: Date;
}

/** A page of the log, oldest first (a consumer catching up reads forward): `limit + 1` rows tell whether more follow. */
export function eventsPage(f: EventFilter, skip: number, limit: number): Promise<EventDoc[]> {
  const created_at: Record<string, Date> = {};
  if (f.from) created_at.$gte = f.from;
  if (f.to) created_at.$lt = f.to;
  const filter: Record<string, unknown> = { organization_id: f.organization_id, ...(f.type && { type: f.type }), ...(Object.keys(created_at).length && { created_at }) };
  return PlatformEvent.find(filter).sort({ created_at: 1, _id: 1 }).skip(skip).limit(limit + 1).lean<EventDoc[]>();
}

export async function pruneEvents(before: Date): Promise<number> {
  return (await PlatformEvent.deleteMany({ created_at: { $lt: before } })).deletedCount ?? 0;
}

// --- deliveries ---

/** Writes the delivery's record unless it exists (a fan-out repeated by the sweep). */
export async function ensureDelivery(doc: Pick<DeliveryDoc, '_id' | 'organization_id' | 'endpoint_id' | 'event_id' | 'event_type'>): Promise<void> {
  await WebhookDelivery.updateOne({ _id: doc._id }, { $setOnInsert: { ...doc, status: 'pending', attempts: [] } }, { upsert: true });
}

export const deliveryById = (delivery_id: string) => byId<DeliveryDoc>(WebhookDelivery, delivery_id);

export async function deliveryOf(organization_id: string, delivery_id: string): Promise<DeliveryDoc | null> {
  const doc = await deliveryById(delivery_id);
  return doc && doc.organization_id === organization_id ? doc : null;
}

/** Appends an attempt and the state it leaves the delivery in. */
export async function recordAttempt(delivery_id: string, attempt: AttemptDoc, status: DeliveryStatus, next_attempt_at?: Date, final_reason?: string): Promise<void> {
  const set: Record<string, unknown> = { status, ...(next_attempt_at && { next_attempt_at }), ...(final_reason && { final_reason }) };
  const unset: Record<string, 1> = {};
  if (!next_attempt_at) unset.next_attempt_at = 1;
  if (!final_reason) unset.final_reason = 1;
  await WebhookDelivery.updateOne({ _id: delivery_id }, { $push: { attempts: attempt }, $set: set, ...(Object.keys(unset).length && { $unset: unset }) });
}

/** Ends a delivery without an attempt (its endpoint was deleted or disabled meanwhile). */
export async function endDelivery(delivery_id: string, final_reason: string): Promise<void> {
  await WebhookDelivery.updateOne({ _id: delivery_id }, { $set: { status: 'failed', final_reason }, $unset: { next_attempt_at: 1 } });
}

/** A manual retry: due now again. */
export async function markPending(delivery_id: string): Promise<void> {
  await WebhookDelivery.updateOne({ _id: delivery_id }, { $set: { status: 'pending', next_attempt_at: new Date() }, $unset: { final_reason: 1 } });
}

export interface DeliveryFilter {
  organization_id: string;
  endpoint_id?: string;
  event_type?: string;
  status?: string;
}

/** A page of deliveries, newest first (`limit + 1` rows tell whether more follow). */
export function deliveriesPage(f: DeliveryFilter, skip: number, limit: number): Promise<DeliveryDoc[]> {
  const filter: Record<string, unknown> = f.endpoint_id ? { endpoint_id: f.endpoint_id, organization_id: f.organization_id } : { organization_id: f.organization_id };
  if (f.event_type) filter.event_type = f.event_type;
  if (f.status) filter.status = f.status;
  return WebhookDelivery.find(filter).sort({ created_at: -1, _id: -1 }).skip(skip).limit(limit + 1).lean<DeliveryDoc[]>();
}

export async function pruneDeliveries(before: Date): Promise<number> {
  return (await WebhookDelivery.deleteMany({ created_at: { $lt: before }, status: { $in: ['succeeded', 'failed'] } })).deletedCount ?? 0;
}

// --- counters ---

export async function countOutcome(outcome: string): Promise<void> {
  await DeliveryCounter.updateOne({ _id: outcome }, { $inc: { count: 1 } }, { upsert: true });
}

export const outcomeCounts = () => DeliveryCounter.find({}).lean<{ _id: string; count: number }[]>();
