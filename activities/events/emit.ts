/**
 * Recording events and queueing their deliveries. An event is keyed by the change that caused it
 * (`key`: the change's operation id), so recording it again (a retried activity, the sweep after a
 * crash) writes nothing new. Deliveries are queued in the background of the process that recorded
 * the event, in their endpoints' queues, whose actors (actor.ts) send them: the change's caller
 * does not wait for them, and what a crash leaves unqueued the sweep (sweep.ts) queues within a
 * minute. docs/components/events.md says why.
 */
import { createHash } from 'node:crypto';

import { Background, warnLine } from '../core/background.ts';
import type { EventType } from './constants.ts';
import { wants } from './endpoints.ts';
import type { EventDoc } from './models.ts';
import { wakeEndpoint } from './queue.ts';
import { conformEventData } from './schemas.ts';
import { retryWindowMs } from './settings.ts';
import {
  endpointById,
  endpointsForFanOut,
  eventById,
  insertEvent,
  markFannedOut,
  queueDeliveries,
  recordedEvents,
} from './store.ts';

/** One event's delivery to one endpoint: what its run needs to make and record each attempt. */
export interface DeliveryRun {
  delivery_id: string;
  organization_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: EventType;
}

export interface ChangeEvent {
  organization_id: string;
  type: EventType;
  /** the operation id of the change (unique per organization and type): the event's identity */
  key: string;
  /**
   * the event's `data`: ids, numbers, codes and dates, held to the type's schema (schemas.ts) when
   * it is written; never secrets, key hashes, PINs or a person's words
   */
  data: Record<string, unknown>;
  /** when the change happened (default now) */
  at?: Date;
}

export const eventId = (organization_id: string, type: string, key: string) =>
  `evt_${createHash('sha256').update(`${organization_id}\u0000${type}\u0000${key}`).digest('base64url').slice(0, 24)}`;

/** Which of these event ids are recorded (a component's sweep source checks its changes in batches). */
export const eventsRecorded = (ids: string[]) => recordedEvents(ids);

export const deliveryId = (event_id: string, endpoint_id: string) =>
  `whd_${createHash('sha256').update(`${event_id}\u0000${endpoint_id}`).digest('base64url').slice(0, 24)}`;

/**
 * Records the event of a change that happened (call it after the change, and again whenever the
 * change's code runs again: a duplicate records nothing). Answers the event's id.
 */
export async function recordEvent(e: ChangeEvent, only_endpoint?: string): Promise<string> {
  const id = eventId(e.organization_id, e.type, e.key);
  const created_at = e.at ?? new Date();
  // Only what the type's schema declares, of the kind it declares, is written (schemas.ts).
  const { data, refused } = conformEventData(e.type, e.data);
  if (refused.length)
    warnLine("events: fields left out of an event: not in its type's schema, or not of the declared kind", 'refused', {
      type: e.type,
      event_id: id,
      fields: refused.slice(0, 20),
    });
  const body = JSON.stringify({
    id,
    type: e.type,
    created_at: created_at.toISOString(),
    organization_id: e.organization_id,
    data,
  });
  // An organization none of whose endpoints wants it: nothing to fan out (the usual case, one write).
  const wanted =
    only_endpoint !== undefined ||
    (await endpointsForFanOut(e.organization_id)).some((x) => x.enabled && wants(x, e.type));
  const doc: Omit<EventDoc, 'recorded_at'> = {
    _id: id,
    organization_id: e.organization_id,
    type: e.type,
    body,
    fanned_out: !wanted,
    created_at,
    ...(only_endpoint && { only_endpoint }),
  };
  const inserted = await insertEvent(doc);
  if (inserted && wanted) fanOuts.run(fanOut(doc));
  else if (!inserted) fanOuts.run(fanOutById(id));
  return id;
}

/** Fan-outs finish after the caller's answer; one that fails is left to the sweep. */
const fanOuts = new Background('events: a fan-out failed; the sweep retries it');

/** Resolves when the fan-outs started so far have ended (tests, and a process shutting down). */
export const eventsSettled = () => fanOuts.settled();

async function fanOutById(event_id: string): Promise<void> {
  const doc = await eventById(event_id);
  if (doc && !doc.fanned_out) await fanOut(doc);
}

/**
 * Queues a delivery for every enabled endpoint of the organization that wants the event (a ping:
 * its one endpoint), wakes each endpoint's actor that sleeps, then marks the event fanned out.
 * Each delivery is keyed by event and endpoint, so a repeated fan-out queues nothing twice.
 */
export async function fanOut(doc: Pick<EventDoc, '_id' | 'organization_id' | 'type' | 'only_endpoint'>): Promise<void> {
  const targets = doc.only_endpoint
    ? [await endpointById(doc.only_endpoint)].filter((e) => e && e.organization_id === doc.organization_id)
    : (await endpointsForFanOut(doc.organization_id)).filter((e) => e.enabled && wants(e, doc.type));
  const now = new Date();
  const window_ends_at = new Date(now.getTime() + retryWindowMs());
  await Promise.all(
    targets.map((endpoint) =>
      queueDeliveries({
        _id: deliveryId(doc._id, endpoint!._id),
        organization_id: doc.organization_id,
        endpoint_id: endpoint!._id,
        event_id: doc._id,
        event_type: doc.type,
        status: 'pending',
        attempts: [],
        next_attempt_at: now,
        due_at: now,
        window_ends_at,
        created_at: now,
        updated_at: now,
      }),
    ),
  );
  await Promise.all(targets.map((endpoint) => wakeEndpoint(doc.organization_id, endpoint!._id)));
  await markFannedOut(doc._id);
}
