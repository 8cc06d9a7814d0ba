/**
 * Events' data, and the only file that reads or writes its models: the endpoints
 * (`webhook_endpoints`), the event log (`events`), each event's delivery to each endpoint
 * (`webhook_deliveries`) and the attempt counters `/metrics` reads. docs/storage.md, "Events".
 */
import { byId, byIds, Cache, insertEach, isDuplicateKey } from '../core/db/index.ts';
import { groupCommit } from '../core/group-commit.ts';
import type { DeliveryStatus } from './constants.ts';
import {
  type AttemptDoc,
  DeliveryCounter,
  type DeliveryDoc,
  EndpointCount,
  type EndpointDoc,
  EndpointHour,
  EndpointQueue,
  type EndpointQueueDoc,
  type EventDoc,
  PlatformEvent,
  WebhookDelivery,
  WebhookEndpoint,
} from './models.ts';

// --- endpoints ---

export const insertEndpoint = async (doc: Omit<EndpointDoc, 'created_at' | 'updated_at'>) =>
  changed(doc.organization_id, await WebhookEndpoint.create(doc));

/** The endpoint if it belongs to the organization (another organization's reads as missing). */
export async function endpointOf(organization_id: string, endpoint_id: string): Promise<EndpointDoc | null> {
  const doc = await byId<EndpointDoc>(WebhookEndpoint, endpoint_id);
  return doc && doc.organization_id === organization_id ? doc : null;
}

export const endpointById = (endpoint_id: string) => byId<EndpointDoc>(WebhookEndpoint, endpoint_id);

export const endpointsOf = (organization_id: string) =>
  WebhookEndpoint.find({ organization_id }).sort({ created_at: 1 }).lean<EndpointDoc[]>();

/**
 * The organization's endpoints for fan-outs, cached 1 s per process: a change of endpoints made by
 * this process is seen at once (the functions below drop the entry), one made by another process
 * within a second. Only which endpoints want an event is read from here; each attempt reads its
 * endpoint afresh (enabled, url, secrets).
 */
const fanOutCache = new Cache<string, EndpointDoc[]>({ max: 10_000, ttlMs: 1000 });
export const endpointsForFanOut = (organization_id: string) =>
  fanOutCache.getOrLoad(organization_id, () => endpointsOf(organization_id));
const changed = <T>(organization_id: string, v: T): T => {
  fanOutCache.delete(organization_id);
  return v;
};

/** Takes one of the organization's `cap` endpoint places; false when all are taken. */
export async function takeEndpointPlace(organization_id: string, cap: number): Promise<boolean> {
  try {
    const res = await EndpointCount.updateOne(
      { _id: organization_id, n: { $lt: cap } },
      { $inc: { n: 1 } },
      { upsert: true },
    );
    return res.modifiedCount === 1 || res.upsertedCount === 1;
  } catch (err) {
    if (isDuplicateKey(err)) return false; // the counter exists and is at the cap: the upsert's insert collided
    throw err;
  }
}

export async function giveEndpointPlace(organization_id: string): Promise<void> {
  await EndpointCount.updateOne({ _id: organization_id, n: { $gt: 0 } }, { $inc: { n: -1 } });
}

/** `expect`: further conditions the endpoint must still meet (a rotation's current secret). */
export async function updateEndpoint(
  organization_id: string,
  endpoint_id: string,
  set: Record<string, unknown>,
  unset: string[] = [],
  expect: Record<string, unknown> = {},
): Promise<EndpointDoc | null> {
  const update: Record<string, unknown> = { $set: set };
  if (unset.length) update.$unset = Object.fromEntries(unset.map((f) => [f, 1]));
  return changed(
    organization_id,
    await WebhookEndpoint.findOneAndUpdate({ _id: endpoint_id, organization_id, ...expect }, update, {
      new: true,
    }).lean<EndpointDoc>(),
  );
}

export async function deleteEndpoint(organization_id: string, endpoint_id: string): Promise<boolean> {
  const deleted = (await WebhookEndpoint.deleteOne({ _id: endpoint_id, organization_id })).deletedCount === 1;
  if (deleted) await giveEndpointPlace(organization_id);
  return changed(organization_id, deleted);
}

/** Takes the endpoint's ping slot: false when a ping was sent less than `gap_ms` ago. */
export async function takePingSlot(organization_id: string, endpoint_id: string, gap_ms: number): Promise<boolean> {
  const now = new Date();
  const res = await WebhookEndpoint.updateOne(
    {
      _id: endpoint_id,
      organization_id,
      $or: [{ last_ping_at: null }, { last_ping_at: { $lte: new Date(now.getTime() - gap_ms) } }],
    },
    { $set: { last_ping_at: now } },
  );
  return res.modifiedCount === 1;
}

/** Remembers the first failure since the last success (a later failure keeps the first date). */
export async function markFailing(endpoint_id: string, at: Date): Promise<void> {
  await WebhookEndpoint.updateOne({ _id: endpoint_id, failing_since: null }, { $set: { failing_since: at } });
}

export async function markSucceeding(endpoint_id: string): Promise<void> {
  await WebhookEndpoint.updateOne({ _id: endpoint_id, failing_since: { $ne: null } }, { $unset: { failing_since: 1 } });
}

/**
 * Disables an enabled endpoint, saying why; false when it was not enabled (or is gone). `failingSince`:
 * only if it has been failing since then at the latest (an admin who enabled it meanwhile cleared that).
 */
export async function disableEndpoint(
  organization_id: string,
  endpoint_id: string,
  reason: string,
  failingSince?: Date,
): Promise<boolean> {
  const filter: Record<string, unknown> = {
    _id: endpoint_id,
    enabled: true,
    ...(failingSince && { failing_since: { $lte: failingSince } }),
  };
  return changed(
    organization_id,
    (await WebhookEndpoint.updateOne(filter, { $set: { enabled: false, disabled_reason: reason } })).modifiedCount ===
      1,
  );
}

// --- events ---

/**
 * True when this call wrote the event; false when it was recorded before (the same change). The
 * driver's insert, not mongoose's create: the document is built here whole, and an event is
 * recorded for every change of the award path, where create's casting and validation showed.
 */
/**
 * Records an event unless one with its id is there (false then). Concurrent events go out in one
 * unordered insert (group commit: an award's event and the other awards' of the moment).
 */
const insertEvents = groupCommit<EventDoc, boolean>(async (docs) =>
  (await insertEach(PlatformEvent.collection, docs)).map((r) => (r === true || !isDuplicateKey(r.error) ? r : false)),
);

export const insertEvent = (doc: Omit<EventDoc, 'recorded_at'>): Promise<boolean> =>
  insertEvents({ ...doc, recorded_at: new Date() } as EventDoc);

export const eventById = (event_id: string) => byId<EventDoc>(PlatformEvent, event_id);

/** Which of these events are recorded. */
export const recordedEvents = async (ids: string[]) =>
  new Set((await byIds<EventDoc>(PlatformEvent, ids, { _id: 1 })).keys());

/** Marks events fanned out: the fan-outs of the moment in one write. */
export const markFannedOut = groupCommit<string>(async (ids) => {
  await PlatformEvent.updateMany({ _id: { $in: ids } }, { $set: { fanned_out: true } });
});

/** Events whose deliveries may not all have been started, recorded before `before`, oldest first. */
export const unfannedEvents = (before: Date, limit: number) =>
  PlatformEvent.find({ fanned_out: false, recorded_at: { $lt: before } })
    .sort({ recorded_at: 1 })
    .limit(limit)
    .lean<EventDoc[]>();

export interface EventFilter {
  organization_id: string;
  type?: string;
  from?: Date;
  to?: Date;
}

/**
 * A page of the log in the order the events were recorded (a consumer catching up reads forward;
 * `from`/`to` bound the recording time): `limit + 1` rows tell whether more follow.
 */
export function eventsPage(f: EventFilter, skip: number, limit: number): Promise<EventDoc[]> {
  const recorded_at: Record<string, Date> = {};
  if (f.from) recorded_at.$gte = f.from;
  if (f.to) recorded_at.$lt = f.to;
  const filter: Record<string, unknown> = {
    organization_id: f.organization_id,
    ...(f.type && { type: f.type }),
    ...(Object.keys(recorded_at).length && { recorded_at }),
  };
  return PlatformEvent.find(filter)
    .sort({ recorded_at: 1, _id: 1 })
    .skip(skip)
    .limit(limit + 1)
    .lean<EventDoc[]>();
}

export async function pruneEvents(before: Date): Promise<number> {
  return (await PlatformEvent.deleteMany({ recorded_at: { $lt: before } })).deletedCount ?? 0;
}

// --- deliveries ---

export type DeliveryKey = Pick<DeliveryDoc, '_id' | 'organization_id' | 'endpoint_id' | 'event_id' | 'event_type'>;

export const deliveryById = (delivery_id: string) => byId<DeliveryDoc>(WebhookDelivery, delivery_id);

export async function deliveryOf(organization_id: string, delivery_id: string): Promise<DeliveryDoc | null> {
  const doc = await deliveryById(delivery_id);
  return doc && doc.organization_id === organization_id ? doc : null;
}

/**
 * Appends an attempt and the state it leaves the delivery in, for an older build's per-delivery
 * run: its first attempt writes the record (one write per attempt, none before).
 */
export async function recordAttempt(
  d: DeliveryKey,
  attempt: AttemptDoc,
  status: DeliveryStatus,
  next_attempt_at?: Date,
  final_reason?: string,
): Promise<void> {
  const { _id, ...key } = d;
  const set: Record<string, unknown> = {
    status,
    ...(next_attempt_at && { next_attempt_at }),
    ...(final_reason && { final_reason }),
  };
  const unset: Record<string, 1> = {};
  if (!next_attempt_at) unset.next_attempt_at = 1;
  if (!final_reason) unset.final_reason = 1;
  await WebhookDelivery.updateOne(
    { _id },
    { $push: { attempts: attempt }, $set: set, $setOnInsert: key, ...(Object.keys(unset).length && { $unset: unset }) },
    { upsert: true, timestamps: true },
  );
}

/** Ends an older build's delivery without an attempt (its endpoint was deleted or disabled meanwhile). */
export async function endDelivery(d: DeliveryKey, final_reason: string): Promise<void> {
  const { _id, ...key } = d;
  await WebhookDelivery.updateOne(
    { _id },
    {
      $set: { status: 'failed', final_reason },
      $setOnInsert: { ...key, attempts: [] },
      $unset: { next_attempt_at: 1, due_at: 1 },
    },
    { upsert: true },
  );
}

/**
 * Records what a round's attempts left their deliveries in, in one bulk write. Each applies only
 * while the delivery is still due at `due_at` as the round read it: a retry by hand meanwhile
 * (due again now) decides the delivery's state, not an attempt that was in flight. A retried
 * delivery keeps its place in the queue (due at its next attempt); an ended one leaves it.
 */
export async function settle(
  rows: {
    _id: string;
    due_at: Date;
    status: DeliveryStatus;
    attempt?: AttemptDoc;
    next_attempt_at?: Date;
    final_reason?: string;
  }[],
): Promise<void> {
  if (!rows.length) return;
  const now = new Date();
  await WebhookDelivery.collection.bulkWrite(
    rows.map((r) => {
      const set: Record<string, unknown> = { status: r.status, updated_at: now };
      const unset: Record<string, 1> = { claim: 1 };
      if (r.next_attempt_at) set.next_attempt_at = set.due_at = r.next_attempt_at;
      else unset.next_attempt_at = unset.due_at = 1;
      if (r.final_reason) set.final_reason = r.final_reason;
      else unset.final_reason = 1;
      return {
        updateOne: {
          filter: { _id: r._id, due_at: r.due_at },
          update: { $set: set, $unset: unset, ...(r.attempt && { $push: { attempts: r.attempt } }) },
        },
      };
    }) as never,
    { ordered: false },
  );
}

/** Every delivery still queued for a deleted endpoint ends, without a send. */
export async function endQueued(endpoint_id: string, final_reason: string): Promise<number> {
  const r = await WebhookDelivery.updateMany(
    { endpoint_id, due_at: { $gte: new Date(0) } },
    { $set: { status: 'failed', final_reason }, $unset: { next_attempt_at: 1, due_at: 1, claim: 1 } },
  );
  await EndpointQueue.deleteOne({ _id: endpoint_id });
  return r.modifiedCount;
}

/** Events by id (a round's batch: one read). */
export const eventsByIds = (ids: string[]) => byIds<EventDoc>(PlatformEvent, ids);

/**
 * Takes the endpoint's queue for one round until `until` (or renews this round's hold): false while
 * another round holds it. One round at a time sends an endpoint's deliveries: a round that died is
 * taken over once its hold has passed (what it sent but did not record is sent again).
 */
export async function holdQueue(
  endpoint_id: string,
  organization_id: string,
  round: string,
  until: Date,
): Promise<boolean> {
  try {
    const r = await EndpointQueue.updateOne(
      { _id: endpoint_id, $or: [{ held_by: round }, { held_until: null }, { held_until: { $lt: new Date() } }] },
      { $set: { held_by: round, held_until: until }, $setOnInsert: { organization_id, awake: true } },
      { upsert: true },
    );
    return r.matchedCount + r.upsertedCount === 1;
  } catch (err) {
    if (isDuplicateKey(err)) return false; // held by another round: the upsert's insert collided
    throw err;
  }
}

/** Until when another round holds the endpoint's queue (null: none does). */
export const heldUntil = async (endpoint_id: string) =>
  (await byId<EndpointQueueDoc>(EndpointQueue, endpoint_id, { held_until: 1 }))?.held_until ?? null;

/** The round is over: the next may start at once. */
export async function releaseQueue(endpoint_id: string, round: string): Promise<void> {
  await EndpointQueue.updateOne({ _id: endpoint_id, held_by: round }, { $unset: { held_by: 1, held_until: 1 } });
}

/** Due now again in its endpoint's queue, with a new window (a retry by hand, a replay). */
const dueAgain = (now: Date, window_ms: number) => ({
  $set: { status: 'pending', next_attempt_at: now, due_at: now, window_ends_at: new Date(now.getTime() + window_ms) },
  $unset: { final_reason: 1, claim: 1 },
});

/**
 * A manual retry: due now again in its endpoint's queue, with a new window; false when one is
 * already due (`pending`).
 */
export async function markPending(delivery_id: string, window_ms: number): Promise<boolean> {
  const now = new Date();
  return (
    (
      await WebhookDelivery.updateOne(
        { _id: delivery_id, status: { $ne: 'pending' } },
        // an attempt in flight no longer decides its state (its record is not written)
        dueAgain(now, window_ms),
      )
    ).modifiedCount === 1
  );
}

// --- endpoint queues ---

/** New deliveries, due now in their endpoints' queues (one that exists already is left as it is). */
export const queueDeliveries = groupCommit<DeliveryDoc>(async (docs) => {
  const out = await insertEach(WebhookDelivery.collection, docs);
  return out.map((r) => (r === true || isDuplicateKey(r.error) ? undefined : r));
});

/** An endpoint's due deliveries, soonest first. */
export const dueDeliveries = (endpoint_id: string, now: Date, limit: number) =>
  WebhookDelivery.find({ endpoint_id, due_at: { $lte: now } })
    .sort({ due_at: 1 })
    .limit(limit)
    .lean<DeliveryDoc[]>();

/** When the endpoint's next queued delivery is due (null: none is queued). */
export async function nextDue(endpoint_id: string): Promise<Date | null> {
  const d = await WebhookDelivery.findOne({ endpoint_id, due_at: { $gte: new Date(0) } }, { due_at: 1 })
    .sort({ due_at: 1 })
    .lean<{ due_at: Date }>();
  return d?.due_at ?? null;
}

/**
 * Endpoints marked awake since before `before`: a wake a crash lost between the mark and the
 * signal, or an actor busy that long (a signal costs it nothing). One document per endpoint.
 */
export const staleWakes = (before: Date, limit: number) =>
  EndpointQueue.find({ awake: true, woken_at: { $lt: before } }, { organization_id: 1 })
    .limit(limit)
    .lean<{ _id: string; organization_id: string }[]>();

/** How long a wake is trusted to have reached the actor: after this, the next fan-out wakes it again. */
const WAKE_TRUSTED_MS = 30_000;

/**
 * Marks the endpoint's actor awake; true when it was not (or its wake is old): the caller
 * signals it. One conditional write: of concurrent fan-outs, one signals.
 */
export const takeWake = groupCommit<{ endpoint_id: string; organization_id: string }, boolean>(
  // The fan-outs of the moment to one endpoint share one write; the first of them signals.
  async (items) => [
    await takeWakeOnce(items[0].endpoint_id, items[0].organization_id),
    ...items.slice(1).map(() => false),
  ],
  { key: (i) => i.endpoint_id },
);

async function takeWakeOnce(endpoint_id: string, organization_id: string, now = new Date()): Promise<boolean> {
  // Read first: an actor awake and woken recently (the usual case under load) costs a read, not a
  // write that matches nothing and an upsert that collides. A read made after the delivery was
  // queued sees a mark of sleep made before it, as the write would.
  const seen = await byId<EndpointQueueDoc>(EndpointQueue, endpoint_id, { awake: 1, woken_at: 1 });
  if (seen?.awake && seen.woken_at && seen.woken_at.getTime() >= now.getTime() - WAKE_TRUSTED_MS) return false;
  try {
    const r = await EndpointQueue.updateOne(
      {
        _id: endpoint_id,
        $or: [{ awake: false }, { woken_at: { $lt: new Date(now.getTime() - WAKE_TRUSTED_MS) } }],
      },
      { $set: { awake: true, woken_at: now }, $setOnInsert: { organization_id } },
      { upsert: true },
    );
    return r.modifiedCount + r.upsertedCount > 0;
  } catch (err) {
    if (isDuplicateKey(err)) return false; // awake, woken recently
    throw err;
  }
}

/** The actor goes to sleep: the next fan-out wakes it. */
export async function markAsleep(endpoint_id: string): Promise<void> {
  await EndpointQueue.updateOne({ _id: endpoint_id }, { $set: { awake: false } });
}

/** The actor is awake again (it found work after saying it would sleep). */
export async function markAwake(endpoint_id: string): Promise<void> {
  await EndpointQueue.updateOne({ _id: endpoint_id }, { $set: { awake: true, woken_at: new Date() } });
}

// --- pausing, replaying, and what operators see of an endpoint's queue (operators.ts) ---

/**
 * The endpoint's ended deliveries (succeeded or failed; `failed_only`) queued in [since, until),
 * oldest first, at most `limit`: what a replay queues again.
 */
export const endedDeliveries = (endpoint_id: string, since: Date, until: Date, failed_only: boolean, limit: number) =>
  WebhookDelivery.find(
    {
      endpoint_id,
      created_at: { $gte: since, $lt: until },
      status: failed_only ? 'failed' : { $in: ['succeeded', 'failed'] },
    },
    { created_at: 1 },
  )
    .sort({ created_at: 1, _id: 1 })
    .limit(limit)
    .lean<{ _id: string; created_at: Date }[]>();

/** Queues these ended deliveries again, due now with a new window (one queued meanwhile is left as it is). */
export async function requeue(ids: string[], window_ms: number): Promise<number> {
  if (!ids.length) return 0;
  const now = new Date();
  const r = await WebhookDelivery.updateMany(
    { _id: { $in: ids }, status: { $in: ['succeeded', 'failed'] } },
    dueAgain(now, window_ms),
  );
  return r.modifiedCount;
}

const QUEUED = { $gte: new Date(0) }; // `due_at` set: in its endpoint's queue

/**
 * Endpoints' queues: how many deliveries wait (due or scheduled) and when the oldest of them was
 * queued. One read of the queued deliveries (`due_at` index), as long as the backlog.
 */
async function queued(filter: Record<string, unknown>): Promise<Map<string, { size: number; oldest: Date }>> {
  const rows = await WebhookDelivery.find(
    { ...filter, due_at: QUEUED },
    { endpoint_id: 1, created_at: 1, _id: 0 },
  ).lean<{ endpoint_id: string; created_at: Date }[]>();
  const out = new Map<string, { size: number; oldest: Date }>();
  for (const r of rows) {
    const q = out.get(r.endpoint_id);
    if (!q) out.set(r.endpoint_id, { size: 1, oldest: r.created_at });
    else {
      q.size += 1;
      if (r.created_at < q.oldest) q.oldest = r.created_at;
    }
  }
  return out;
}

export async function backlogOf(endpoint_id: string): Promise<{ size: number; oldest: Date | null }> {
  const q = (await queued({ endpoint_id })).get(endpoint_id);
  return { size: q?.size ?? 0, oldest: q?.oldest ?? null };
}

/** Every endpoint's queue (`/metrics`): only endpoints with deliveries waiting. */
export async function backlogs(): Promise<{ endpoint_id: string; size: number; oldest: Date | null }[]> {
  return [...(await queued({}))].map(([endpoint_id, q]) => ({ endpoint_id, ...q }));
}

export const queueOf = (endpoint_id: string) => byId<EndpointQueueDoc>(EndpointQueue, endpoint_id);

/** Every endpoint's queue document (`/metrics`: attempts so far). */
export const queues = () =>
  EndpointQueue.find({}, { organization_id: 1, succeeded: 1, failed: 1 }).lean<EndpointQueueDoc[]>();

/** The ids of the paused endpoints (`/metrics`). */
export const pausedEndpoints = async () =>
  new Set(
    (await WebhookEndpoint.find({ paused_at: { $ne: null } }, { _id: 1 }).lean<{ _id: string }[]>()).map((e) => e._id),
  );

/** The endpoint's attempts per hour since `since`. */
export const hoursOf = (endpoint_id: string, since: Date) =>
  EndpointHour.find({ endpoint_id, hour: { $gte: since } }).lean<{ succeeded: number; failed: number }[]>();

export interface EndpointOutcomes {
  organization_id: string;
  succeeded: number;
  failed: number;
  last_success_at?: Date;
  last_error?: EndpointQueueDoc['last_error'];
}

/** Adds attempts to their endpoints' totals and hours: one bulk write per collection. */
export async function addEndpointOutcomes(hour: Date, byEndpoint: Map<string, EndpointOutcomes>): Promise<void> {
  if (!byEndpoint.size) return;
  const list = [...byEndpoint];
  await Promise.all([
    EndpointQueue.bulkWrite(
      list.map(([endpoint_id, o]) => ({
        updateOne: {
          filter: { _id: endpoint_id },
          update: {
            $inc: { succeeded: o.succeeded, failed: o.failed },
            ...(o.last_success_at && { $max: { last_success_at: o.last_success_at } }),
            // Two workers' flushes in the same second: the later write's error is kept.
            ...(o.last_error && { $set: { last_error: o.last_error } }),
          },
          // not upserted: a deleted endpoint's queue document is gone for good (endQueued)
        },
      })) as never,
      { ordered: false },
    ),
    EndpointHour.bulkWrite(
      list.map(([endpoint_id, o]) => ({
        updateOne: {
          filter: { _id: `${endpoint_id}:${hour.toISOString()}` },
          update: { $inc: { succeeded: o.succeeded, failed: o.failed }, $setOnInsert: { endpoint_id, hour } },
          upsert: true,
        },
      })) as never,
      { ordered: false },
    ),
  ]);
}

export async function pruneEndpointHours(before: Date): Promise<number> {
  return (await EndpointHour.deleteMany({ hour: { $lt: before } })).deletedCount ?? 0;
}

export interface DeliveryFilter {
  organization_id: string;
  endpoint_id?: string;
  event_type?: string;
  status?: string;
}

/** A page of deliveries, newest first (`limit + 1` rows tell whether more follow). */
export function deliveriesPage(f: DeliveryFilter, skip: number, limit: number): Promise<DeliveryDoc[]> {
  const filter: Record<string, unknown> = f.endpoint_id
    ? { endpoint_id: f.endpoint_id, organization_id: f.organization_id }
    : { organization_id: f.organization_id };
  if (f.event_type) filter.event_type = f.event_type;
  if (f.status) filter.status = f.status;
  return WebhookDelivery.find(filter)
    .sort({ created_at: -1, _id: -1 })
    .skip(skip)
    .limit(limit + 1)
    .lean<DeliveryDoc[]>();
}

export async function pruneDeliveries(before: Date): Promise<number> {
  return (
    (await WebhookDelivery.deleteMany({ created_at: { $lt: before }, status: { $in: ['succeeded', 'failed'] } }))
      .deletedCount ?? 0
  );
}

// --- counters ---

export async function addOutcomes(counts: Map<string, number>): Promise<void> {
  if (!counts.size) return;
  await DeliveryCounter.bulkWrite(
    [...counts].map(([outcome, n]) => ({
      updateOne: { filter: { _id: outcome }, update: { $inc: { count: n } }, upsert: true },
    })),
    { ordered: false },
  );
}

export const outcomeCounts = () => DeliveryCounter.find({}).lean<{ _id: string; count: number }[]>();

// --- one person's data (user-data.ts) ---

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The organization's events (kept EVENT_RETENTION_DAYS) whose body contains one of `needles`, in
 * recording order: the index {organization_id, recorded_at} selects the organization's, the
 * server's filter the text. The log has no index by user, and an erasure is rare.
 */
export function eventsContaining(organization_id: string, needles: string[]): Promise<EventDoc[]> {
  const list = needles.filter((n) => n.length);
  if (!list.length) return Promise.resolve([]);
  return PlatformEvent.find({ organization_id, body: { $regex: list.map(escapeRegex).join('|') } })
    .sort({ recorded_at: 1 })
    .lean<EventDoc[]>();
}

/** Replaces events' bodies, each only while it is still `from` (a second run changes nothing). Answers how many changed. */
export async function rewriteEventBodies(changes: { _id: string; from: string; body: string }[]): Promise<number> {
  if (!changes.length) return 0;
  const res = await PlatformEvent.bulkWrite(
    changes.map((c) => ({
      updateOne: { filter: { _id: c._id, body: c.from }, update: { $set: { body: c.body } } },
    })) as never,
    { ordered: false },
  );
  return res.modifiedCount;
}

/** The organization's endpoints created by a key of this user. */
export async function endpointsCreatedBy(organization_id: string, user_id: string): Promise<EndpointDoc[]> {
  return (await endpointsOf(organization_id)).filter((e) => e.created_by?.user_id === user_id);
}

/** Hands the creator of an endpoint to the tombstone (only while it is still this user). */
export async function tombstoneEndpointCreator(
  organization_id: string,
  endpoint_id: string,
  user_id: string,
  tombstone: string,
): Promise<boolean> {
  const res = await WebhookEndpoint.updateOne(
    { _id: endpoint_id, organization_id, 'created_by.user_id': user_id },
    { $set: { created_by: { key_id: tombstone, user_id: tombstone } } },
    { timestamps: false },
  );
  return changed(organization_id, res.modifiedCount === 1);
}
