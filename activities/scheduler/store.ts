/**
 * The scheduler store: the one file that reads and writes events, their runs and completions.
 * A run reads its event and its own record by `_id` (both servers answer from the primary key);
 * an event's organization is checked on the document read. Listings use the declared indexes
 * (a user's events, an event's runs): an index on MongoDB, a scan on the embedded FerretDB,
 * which these admin and owner pages afford. Runs never update their event: a one-off event's
 * completion is its own document, inserted once (on FerretDB 1.x an update read the whole
 * collection under the write lock, and at 20 due events a second those reads were most of the
 * dispatch lateness).
 */
import { byIds, Cache, firstFree, insertOnce, jsonText, readSlots, takeSlot } from '../db';
import { nextRuns } from './calendar';
import { DEFAULT_CATCHUP_MINUTES } from './constants';
import { EventCompletion, EventManualRun, EventRun, EventSlot, ScheduledEvent, type EventDoc, type ManualRunDoc, type RunDoc, type SlotDoc } from './models';

export type { EventDoc, RunDoc };

const metadataText = jsonText<Record<string, unknown>>(() => ({}));
const resultText = jsonText<Record<string, unknown> | null>(null);

export const encodeMetadata = (metadata: Record<string, unknown>) => metadataText.encode(metadata);
/** The event's metadata (stored as JSON text: any keys survive FerretDB). */
export const eventMetadata = (e: Pick<EventDoc, 'metadata_json'>): Record<string, unknown> => metadataText.decode(e.metadata_json);

export async function insertEvent(doc: Omit<EventDoc, 'created_at' | 'updated_at'>): Promise<EventDoc> {
  return (await ScheduledEvent.create(doc)).toObject() as EventDoc;
}

/** By primary key alone, the organization checked on the document. */
export async function eventById(organization_id: string, event_id: string): Promise<EventDoc | null> {
  const doc = await ScheduledEvent.findById(event_id).lean<EventDoc>();
  return doc && doc.organization_id === organization_id ? doc : null;
}

/** Writes `fields` only over revision `rev` (absent on events saved before revisions); null when another write came between. */
export async function writeOverRevision(organization_id: string, _id: string, rev: number | undefined, fields: Partial<EventDoc>): Promise<EventDoc | null> {
  return ScheduledEvent.findOneAndUpdate({ _id, organization_id, rev: rev ?? { $exists: false } }, { $set: fields }, { new: true }).lean<EventDoc>();
}

export async function writePause(organization_id: string, _id: string, pause: { paused: boolean; pause_note: string | null; paused_at: Date | null }): Promise<EventDoc | null> {
  return ScheduledEvent.findOneAndUpdate({ _id, organization_id }, { $set: pause }, { new: true }).lean<EventDoc>();
}

/** false: no such event in the organization. Its completions and its places under the caps go with it. */
export async function removeEvent(organization_id: string, event_id: string): Promise<boolean> {
  const doc = await ScheduledEvent.findOneAndDelete({ _id: event_id, organization_id }).lean<EventDoc>();
  if (!doc) return false;
  await EventCompletion.deleteMany({ event_id });
  await EventManualRun.deleteMany({ event_id });
  await freePlaces(event_id, doc.slots ?? []);
  return true;
}

// ---- places under the caps (models.ts, EventSlot): numbered slots, taken by insert (db `takeSlot`)

export const userPlace = (organization_id: string, user_id: string) => (n: number) => `u|${organization_id}|${user_id}|${n}`;
export const organizationPlace = (organization_id: string) => (n: number) => `o|${organization_id}|${n}`;
/**
 * A user's stored events, ended ones included: taken at create only and freed only with the event
 * (`removeEvent`), never by the release of ended events, so ended events (and their Schedules)
 * stay bounded however often short-lived ones are created.
 */
export const storedPlace = (organization_id: string, user_id: string) => (n: number) => `s|${organization_id}|${user_id}|${n}`;
const BLOCK = 128;
/** A slot its event does not list (or whose event does not exist) after this long was left by a process that stopped between writes. */
const ABANDONED_MS = 60_000;
/** Where this process last found a free place, per counter: a hint (a taken slot is skipped by its unique key). */
const placeHint = new Cache<string, number>({ max: 10_000, ttlMs: 600_000 });
/**
 * Inserts tried from a guess (the hint, or the first free slot read) before the slots are read
 * again: another process may have filled the range after the guess, and one insert per taken slot
 * would make a create cost up to `cap` failing inserts.
 */
const MISSES = 4;

async function tryTake(id: (n: number) => string, from: number, cap: number, fields: () => Record<string, unknown>) {
  if (from >= cap) return null;
  const slot = await takeSlot(EventSlot, { id, from, to: Math.min(cap, from + MISSES), fields });
  if (slot) placeHint.set(id(0), slot.n + 1);
  return slot?._id ?? null;
}

/**
 * Per counter, until when (epoch ms) `releaseAbandoned` found nothing it could free: no held place
 * can be freed before then, since no event can end and no interrupted write pass ABANDONED_MS
 * earlier. Capped at QUIET_MS, the delay an event resumed or moved by another call may wait to be
 * freed; a full counter is then not reread (every place and its event) on every refused create.
 */
const QUIET_MS = 10_000;
const MIN_QUIET_MS = 1_000;
const quietUntil = new Cache<string, number>({ max: 10_000, ttlMs: QUIET_MS });

/**
 * Which of these events are over for good: a one-off event whose start-time run happened, or any
 * event with no rule time left within its catch-up window (its end_date, or a one-off's start
 * time, is past). A paused event is never over: it keeps its places, so a resume never meets a cap.
 */
export async function endedEvents(events: EventDoc[], now = Date.now()): Promise<Set<string>> {
  const live = events.filter((e) => !e.paused);
  const oneOff = live.filter((e) => !e.recurrency);
  const done = oneOff.length ? await completedEvents(oneOff) : new Set<string>();
  const over = (e: EventDoc) => {
    if (!e.recurrency && done.has(e._id)) return true;
    const from = new Date(now - (e.catchup_window_minutes ?? DEFAULT_CATCHUP_MINUTES) * 60_000);
    return nextRuns({ start: e.start_event, end: e.end_date, recurrency: e.recurrency, cron: e.cron, timezone: e.timezone }, from, 1).length === 0;
  };
  return new Set(live.filter(over).map((e) => e._id));
}

/**
 * Takes `slot` off an ended event's `slots`, only over the version read (and not paused since):
 * true when this call did. The revision is bumped, so an update prepared from that version (which
 * would write the place back) fails as changed at the same time instead of reviving the event
 * without a place.
 */
async function dropPlace(e: EventDoc, slot: string): Promise<boolean> {
  const res = await ScheduledEvent.updateOne(
    { _id: e._id, rev: e.rev ?? { $exists: false }, paused: { $ne: true } },
    { $set: { slots: (e.slots ?? []).filter((s) => s !== slot), rev: (e.rev ?? 0) + 1 } },
    { timestamps: false },
  );
  return res.modifiedCount === 1;
}

/** What `endedEvents` and `dropPlace` read of an event. */
const LIFETIME_FIELDS = { _id: 1, recurrency: 1, cron: 1, start_event: 1, end_date: 1, timezone: 1, catchup_window_minutes: 1, paused: 1, slots: 1, rev: 1 } as const;

/**
 * The earliest time a live (not ended, not paused) event may end: a one-off event at its start
 * time (its run may complete then), any other no earlier than its next rule time within the
 * catch-up window plus that window.
 */
function earliestEnd(e: EventDoc, now: number): number {
  if (!e.recurrency) return e.start_event.getTime();
  const window = (e.catchup_window_minutes ?? DEFAULT_CATCHUP_MINUTES) * 60_000;
  const next = nextRuns({ start: e.start_event, end: e.end_date, recurrency: e.recurrency, cron: e.cron, timezone: e.timezone }, new Date(now - window), 1)[0];
  return next ? next.getTime() + window : now;
}

/**
 * Frees the counter's places that no active event holds; how many. A place is freed when its
 * event is gone, or lists it no more (a create, revival or release interrupted half-way: only
 * once older than ABANDONED_MS, so not one of an event being created or revived now), or has
 * ended (`endedEvents`; the event's `slots` is written first, so it always lists what it holds).
 * Skipped while an earlier call found nothing to free and nothing can be yet (`quietUntil`).
 * `endedFree` false (the stored counter, `storedPlace`): an ended event keeps its place.
 */
async function releaseAbandoned(id: (n: number) => string, endedFree: boolean): Promise<number> {
  const now = Date.now();
  if ((quietUntil.get(id(0)) ?? 0) > now) return 0;
  const slots = (await readSlots<SlotDoc>(EventSlot, id, BLOCK)).map((s) => s.doc);
  const events = await byIds<EventDoc>(ScheduledEvent, slots.map((s) => s.event_id), LIFETIME_FIELDS);
  const ended = endedFree ? await endedEvents([...events.values()], now) : new Set<string>();
  const old = now - ABANDONED_MS;
  let freed = 0;
  let quiet = now + QUIET_MS;
  for (const s of slots) {
    const e = events.get(s.event_id);
    const held = e?.slots?.includes(s._id);
    const free = held ? ended.has(e!._id) && (await dropPlace(e!, s._id)) : s.created_at.getTime() <= old;
    if (free) freed += (await EventSlot.deleteOne({ _id: s._id, event_id: s.event_id })).deletedCount ?? 0;
    else if (!held) quiet = Math.min(quiet, s.created_at.getTime() + ABANDONED_MS);
    // At least a second ahead: a one-off event past its start whose run did not complete (skipped,
    // or no worker up) may end any moment, but an earliestEnd in the past would set no quiet time
    // and every refused create would reread every place.
    else if (endedFree && !e!.paused && !ended.has(e!._id)) quiet = Math.min(quiet, Math.max(earliestEnd(e!, now), now + MIN_QUIET_MS));
  }
  if (freed === 0 && quiet > now) quietUntil.set(id(0), quiet, quiet - now);
  return freed;
}

/**
 * One place below `cap` of the counter for `event_id`, or null when all are taken. From the
 * hint, else from the first free slot (deletes leave gaps below the hint), a few inserts at a
 * time (MISSES); when full, the places of ended events and those left by an interrupted write
 * are freed (at most once per QUIET_MS while there is nothing to free) and a free one tried again;
 * with `endedFree` false, only those left by an interrupted write (`storedPlace`).
 */
export async function takePlace(id: (n: number) => string, cap: number, event_id: string, organization_id: string, endedFree = true): Promise<string | null> {
  const fields = () => ({ event_id, organization_id, created_at: new Date() });
  const hint = placeHint.get(id(0));
  if (hint !== undefined) {
    const taken = await tryTake(id, hint, cap, fields);
    if (taken) return taken;
  }
  // A few inserts from the first free slot read, then read again: null only once a read finds
  // every place below the cap taken (each missed insert is a place another create took meanwhile).
  const fromFirstFree = async () => {
    for (;;) {
      const from = firstFree(await readSlots<SlotDoc>(EventSlot, id, BLOCK));
      if (from >= cap) return null;
      const taken = await tryTake(id, from, cap, fields);
      if (taken) return taken;
    }
  };
  const taken = await fromFirstFree();
  if (taken || (await releaseAbandoned(id, endedFree)) === 0) return taken;
  return fromFirstFree();
}

/** Whether `slots` has a place of counter `id`. */
export const holdsPlace = (id: (n: number) => string, slots: readonly string[]) => slots.some((s) => s.startsWith(id(0).slice(0, -1)));

/** Frees the event's places (those it still holds). */
export async function freePlaces(event_id: string, slots: string[]): Promise<void> {
  if (slots.length) await EventSlot.deleteMany({ _id: { $in: slots }, event_id });
}

export async function eventsOf(organization_id: string, user_id?: string): Promise<EventDoc[]> {
  return ScheduledEvent.find({ organization_id, ...(user_id ? { user_id } : {}) }).sort({ start_event: 1 }).lean<EventDoc[]>();
}

export const completionKey = (event_id: string, start_event: Date) => `${event_id}@${start_event.toISOString()}`;

/** Which of these one-off events' start-time runs happened (one `_id` read for a single event). */
export async function completedEvents(events: Array<Pick<EventDoc, '_id' | 'start_event'>>): Promise<Set<string>> {
  if (events.length === 1) {
    const [e] = events;
    return new Set((await EventCompletion.findById(completionKey(e._id, e.start_event)).lean()) ? [e._id] : []);
  }
  const keys = new Set(events.map((e) => completionKey(e._id, e.start_event)));
  const found = await EventCompletion.find({ event_id: { $in: events.map((e) => e._id) } }, { _id: 1, event_id: 1 }).lean<Array<{ _id: string; event_id: string }>>();
  return new Set(found.filter((c) => keys.has(c._id)).map((c) => c.event_id));
}

/** Records the start-time run of a one-off event (once: a repeat changes nothing). */
export async function insertCompletion(event: Pick<EventDoc, '_id' | 'organization_id' | 'start_event'>, run_id: string): Promise<void> {
  await insertOnce(EventCompletion, { _id: completionKey(event._id, event.start_event), event_id: event._id, organization_id: event.organization_id, run_id, completed_at: new Date() });
}

export interface RunRecord extends Omit<RunDoc, 'result_json'> {
  result: Record<string, unknown> | null;
}

const runRecord = ({ result_json, ...r }: RunDoc): RunRecord => ({ ...r, result: resultText.decode(result_json) });

export async function runById(run_id: string): Promise<RunRecord | null> {
  const doc = await EventRun.findById(run_id).lean<RunDoc>();
  return doc ? runRecord(doc) : null;
}

/** The run's record, once per run id (an activity retry records nothing twice). */
export async function insertRun(run: RunRecord): Promise<void> {
  const { result, ...rest } = run;
  await insertOnce(EventRun, { ...rest, ...(result ? { result_json: resultText.encode(result) } : {}) });
}

export async function runsOf(filter: Record<string, unknown>, skip: number, limit: number): Promise<RunRecord[]> {
  return (await EventRun.find(filter).sort({ started_at: -1 }).skip(skip).limit(limit).lean<RunDoc[]>()).map(runRecord);
}

// ---- a basic caller's runs by hand (models.ts, EventManualRun)

export const manualWindowId = (event_id: string, n: number) => `w|${event_id}|${n}`;
export const manualKeyId = (event_id: string, key_sha256: string) => `k|${event_id}|${key_sha256}`;

/** Inserts the record once: true when this call did; false when one was there (another call's). */
export const insertManualRun = (doc: ManualRunDoc) => insertOnce(EventManualRun, { ...doc });

/** The records with these `_id`s (those that exist). */
export async function manualRunsByIds(ids: string[]): Promise<ManualRunDoc[]> {
  return [...(await byIds<ManualRunDoc>(EventManualRun, ids)).values()];
}

/** Deletes a record this call inserted (its `at` tells it from a later one under the same `_id`). */
export async function deleteManualRun(doc: Pick<ManualRunDoc, '_id' | 'at'>): Promise<void> {
  await EventManualRun.deleteOne({ _id: doc._id, at: doc.at });
}
