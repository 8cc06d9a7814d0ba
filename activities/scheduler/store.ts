/**
 * The scheduler store, the one file that reads and writes the scheduler's collections (models.ts):
 * events, their runs, one-off events' completions, a basic caller's runs by hand, and the
 * counters of the caps on events with the places each event holds under them. How they are read
 * and written, and why: docs/storage.md, Scheduler.
 */
import { randomBytes } from 'node:crypto';

import { insertOnce, jsonText, markedOnce } from '../core/db/index.ts';
import { nextRuns } from './calendar.ts';
import { DEFAULT_CATCHUP_MINUTES } from './constants.ts';
import {
  type CounterDoc,
  EventCompletion,
  EventCounter,
  type EventDoc,
  EventManualRun,
  EventRun,
  type ManualRunDoc,
  type RunDoc,
  ScheduledEvent,
  WebhookSecret,
  type WebhookSecretDoc,
} from './models.ts';

export type { EventDoc, RunDoc, WebhookSecretDoc };

const metadataText = jsonText<Record<string, unknown>>(() => ({}));
const resultText = jsonText<Record<string, unknown> | null>(null);

export const encodeMetadata = (metadata: Record<string, unknown>) => metadataText.encode(metadata);
/** The event's metadata (stored as JSON text: any keys survive FerretDB). */
export const eventMetadata = (e: Pick<EventDoc, 'metadata_json'>): Record<string, unknown> =>
  metadataText.decode(e.metadata_json);

export async function insertEvent(doc: Omit<EventDoc, 'created_at' | 'updated_at'>): Promise<EventDoc> {
  return (await ScheduledEvent.create(doc)).toObject() as EventDoc;
}

/** By primary key alone, the organization checked on the document. */
export async function eventById(organization_id: string, event_id: string): Promise<EventDoc | null> {
  const doc = await ScheduledEvent.findById(event_id).lean<EventDoc>();
  return doc && doc.organization_id === organization_id ? doc : null;
}

/** Writes `fields` only over revision `rev` (absent on events saved before revisions); null when another write came between. */
export async function writeOverRevision(
  organization_id: string,
  _id: string,
  rev: number | undefined,
  fields: Partial<EventDoc>,
): Promise<EventDoc | null> {
  return ScheduledEvent.findOneAndUpdate(
    { _id, organization_id, rev: rev ?? { $exists: false } },
    { $set: fields },
    { new: true },
  ).lean<EventDoc>();
}

export async function writePause(
  organization_id: string,
  _id: string,
  pause: { paused: boolean; pause_note: string | null; paused_at: Date | null },
): Promise<EventDoc | null> {
  return ScheduledEvent.findOneAndUpdate({ _id, organization_id }, { $set: pause }, { new: true }).lean<EventDoc>();
}

/** false: no such event in the organization. Its completions, manual runs and places go with it. */
export async function removeEvent(organization_id: string, event_id: string): Promise<boolean> {
  await placesReady();
  // Whoever deletes the document gives its places back (from the document as deleted): once.
  const doc = await ScheduledEvent.findOneAndDelete({ _id: event_id, organization_id }).lean<EventDoc>();
  if (!doc) return false;
  const held = placesOf(doc);
  await Promise.all([
    EventCompletion.deleteMany({ event_id }),
    EventManualRun.deleteMany({ event_id }),
    ...KINDS.filter((k) => held?.[k]).map((k) => giveBackHeld(doc, k)),
  ]);
  return true;
}

// ---- places under the caps (models.ts, EventCounter)

/**
 * `stored`: a user's stored events, ended ones included (SCHEDULER_MAX_STORED_EVENTS_PER_USER),
 * taken at create and given back only with the event, so ended events (and their Schedules) stay
 * bounded. `user`, `organization`: active events, given back also once the event has ended.
 */
const KINDS = ['stored', 'user', 'organization'] as const;
export type PlaceKind = (typeof KINDS)[number];
const FIELD = { stored: 'stored_place', user: 'user_place', organization: 'organization_place' } as const;
export type Places = Record<PlaceKind, boolean>;

const counterId = (kind: PlaceKind, e: Pick<EventDoc, 'organization_id' | 'user_id'>) =>
  kind === 'organization'
    ? `o|${e.organization_id}`
    : `${kind === 'user' ? 'u' : 's'}|${e.organization_id}|${e.user_id}`;

/** The places the event holds; null for an event saved before the caps (it takes none). */
export function placesOf(
  e: Pick<EventDoc, 'stored_place' | 'user_place' | 'organization_place' | 'slots'>,
): Places | null {
  if (KINDS.some((k) => e[FIELD[k]] !== undefined))
    return { stored: !!e.stored_place, user: !!e.user_place, organization: !!e.organization_place };
  if (!e.slots) return null;
  const has = (p: string) => e.slots!.some((s) => s.startsWith(p));
  return { stored: has('s|'), user: has('u|'), organization: has('o|') };
}

/** The event fields saying it holds these places. */
export const placeFields = (p: Places) => ({
  stored_place: p.stored,
  user_place: p.user,
  organization_place: p.organization,
});

/**
 * The earliest time the event may be over (ScheduledEvent `ends_at`): a one-off event at its start
 * (its run may complete then), a rule with an end_date no earlier than its next time within the
 * catch-up window plus that window; null for a rule without end_date, never over.
 */
export function endsAt(
  e: Pick<EventDoc, 'start_event' | 'end_date' | 'recurrency' | 'cron' | 'timezone' | 'catchup_window_minutes'>,
  now = Date.now(),
): Date | null {
  if (!e.recurrency) return e.start_event;
  if (!e.end_date) return null;
  const window = (e.catchup_window_minutes ?? DEFAULT_CATCHUP_MINUTES) * 60_000;
  const next = nextRuns(
    { start: e.start_event, end: e.end_date, recurrency: e.recurrency, cron: e.cron, timezone: e.timezone },
    new Date(now - window),
    1,
  )[0];
  return new Date(next ? next.getTime() + window : now);
}

/**
 * A place taken for an event: its counter and the take's token, `<event id>~<random>`, kept in the
 * counter's `pending` (and, once written, in the event's `place_tokens`) until the token is cleared.
 * A token left in a counter whose event does not hold the place with it (a process stopped between
 * the take and the event's write, or before giving it back) is given back when the counter is next
 * full (`freeFull`), once older than ABANDONED_MS.
 */
export interface Taken {
  kind: PlaceKind;
  counter: string;
  token: string;
}

const ABANDONED_MS = 60_000;
const eventOfToken = (token: string) => token.slice(0, token.lastIndexOf('~'));
const pendingPath = (token: string) => `pending.${token}`;

/**
 * Tokens of takes whose event was written, per counter, cleared by this process's next take on
 * that counter in the same update (keeping a place costs no write). Bounded: dropped entries only
 * leave their tokens in the counter until it is next full, which then clears them.
 */
const toClear = new Map<string, string[]>();
const TO_CLEAR_MAX = 10_000;

/** The event holds its places now (it was written): their tokens are cleared by the next take. */
export function keepTaken(taken: readonly Taken[]): void {
  if (toClear.size >= TO_CLEAR_MAX) toClear.clear();
  for (const t of taken) toClear.set(t.counter, [...(toClear.get(t.counter) ?? []), t.token]);
}

/** The event fields recording the tokens of these takes (over the event's `before`). */
export const tokenFields = (before: EventDoc['place_tokens'], taken: readonly Taken[]) => ({
  place_tokens: { ...before, ...Object.fromEntries(taken.map((t) => [t.kind, t.token])) },
});

/**
 * Gives a take back (`n - 1`) only if its token is still in the counter, so whoever calls, and
 * however often, it is given back once. true when this call did.
 */
async function giveBackToken(counter: string, token: string): Promise<boolean> {
  const res = await EventCounter.updateOne(
    { _id: counter, [pendingPath(token)]: { $exists: true } },
    { $unset: { [pendingPath(token)]: 1 }, $inc: { n: -1 } },
  );
  return res.modifiedCount === 1;
}

/** Gives back places taken for an event that will not hold them (its write failed or was refused). */
export async function giveBackTaken(taken: readonly Taken[]): Promise<void> {
  await Promise.all(taken.map((t) => giveBackToken(t.counter, t.token)));
}

/**
 * Gives back a place the event held, by the one call that took it off the event (its delete, or
 * its release): its token goes too, so no later repair gives it back again.
 */
async function giveBackHeld(
  e: Pick<EventDoc, 'organization_id' | 'user_id' | 'place_tokens'>,
  kind: PlaceKind,
): Promise<void> {
  const token = e.place_tokens?.[kind];
  // Never below zero, whatever a repair gave back first (a take whose event came after its repair).
  await EventCounter.updateOne(
    { _id: counterId(kind, e), n: { $gt: 0 } },
    { $inc: { n: -1 }, ...(token ? { $unset: { [pendingPath(token)]: 1 } } : {}) },
  );
}

/** What `endedEvents` and the release of an ended event read of an event. */
const LIFETIME_FIELDS = {
  _id: 1,
  organization_id: 1,
  user_id: 1,
  recurrency: 1,
  cron: 1,
  start_event: 1,
  end_date: 1,
  timezone: 1,
  catchup_window_minutes: 1,
  paused: 1,
  rev: 1,
  stored_place: 1,
  user_place: 1,
  organization_place: 1,
  place_tokens: 1,
} as const;

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
    return (
      nextRuns(
        { start: e.start_event, end: e.end_date, recurrency: e.recurrency, cron: e.cron, timezone: e.timezone },
        from,
        1,
      ).length === 0
    );
  };
  return new Set(live.filter(over).map((e) => e._id));
}

/**
 * Gives back an ended event's place of this kind: the event's field is cleared only over the
 * version read (and not paused since), then the counter goes down, so of concurrent releases one
 * does. The revision is bumped, so an update prepared from that version (which would write the
 * place back) fails as changed instead of reviving the event without a place.
 */
async function releaseEnded(e: EventDoc, kind: PlaceKind): Promise<boolean> {
  const res = await ScheduledEvent.updateOne(
    { _id: e._id, rev: e.rev ?? { $exists: false }, paused: { $ne: true }, [FIELD[kind]]: true },
    { $set: { [FIELD[kind]]: false, rev: (e.rev ?? 0) + 1 } },
    { timestamps: false },
  );
  if (res.modifiedCount !== 1) return false;
  await giveBackHeld(e, kind);
  return true;
}

/**
 * Frees what it can of a full counter; how many places. Takes left pending by a process that
 * stopped (older than ABANDONED_MS): given back unless their event holds the place. For the active
 * counters, the holders whose `ends_at` passed (an index range: live events are not read) that
 * have ended (`endedEvents`); one still live gets its `ends_at` moved to its next possible end, so
 * the next refusal does not read it again.
 */
async function freeFull(
  kind: PlaceKind,
  counter: string,
  owner: Pick<EventDoc, 'organization_id' | 'user_id'>,
): Promise<number> {
  const now = Date.now();
  let freed = 0;
  const doc = await EventCounter.findById(counter, { pending: 1 }).lean<CounterDoc>();
  const stale = Object.entries(doc?.pending ?? {})
    .filter(([, at]) => new Date(at).getTime() <= now - ABANDONED_MS)
    .map(([token]) => token);
  if (stale.length) {
    const events = await ScheduledEvent.find(
      { _id: { $in: [...new Set(stale.map(eventOfToken))] } },
      { _id: 1, [FIELD[kind]]: 1, place_tokens: 1 },
    ).lean<EventDoc[]>();
    const kept = new Set(events.filter((e) => e[FIELD[kind]] === true).map((e) => e.place_tokens?.[kind]));
    for (const token of stale) {
      if (kept.has(token)) await EventCounter.updateOne({ _id: counter }, { $unset: { [pendingPath(token)]: 1 } });
      else if (await giveBackToken(counter, token)) freed += 1;
    }
  }
  if (kind === 'stored') return freed;
  const filter =
    kind === 'user'
      ? { organization_id: owner.organization_id, user_id: owner.user_id, user_place: true }
      : { organization_id: owner.organization_id, organization_place: true };
  const candidates = await ScheduledEvent.find({ ...filter, ends_at: { $lte: new Date(now) } }, LIFETIME_FIELDS).lean<
    EventDoc[]
  >();
  const ended = await endedEvents(candidates, now);
  for (const e of candidates) {
    if (ended.has(e._id)) {
      if (await releaseEnded(e, kind)) freed += 1;
    } else if (!e.paused) {
      const next = endsAt(e, now);
      // Over the version read: an update writes its own ends_at, which this must not overwrite.
      if (next && next.getTime() > now)
        await ScheduledEvent.updateOne(
          { _id: e._id, rev: e.rev ?? { $exists: false } },
          { $set: { ends_at: next } },
          { timestamps: false },
        );
    }
  }
  return freed;
}

/**
 * One place under `cap` of the owner's counter of this kind for `event_id` (a conditional `$inc`,
 * exact when creations race), or null when the counter is full after freeing what it could
 * (`freeFull`). Its token stays in the counter until cleared (`keepTaken`) or given back (`giveBackTaken`).
 */
export async function takePlace(
  kind: PlaceKind,
  owner: Pick<EventDoc, 'organization_id' | 'user_id'>,
  cap: number,
  event_id: string,
): Promise<Taken | null> {
  await placesReady();
  const counter = counterId(kind, owner);
  const token = `${event_id}~${randomBytes(6).toString('base64url')}`;
  const take = async () => {
    const clear = toClear.get(counter) ?? [];
    toClear.delete(counter);
    const unset = clear.length ? { $unset: Object.fromEntries(clear.map((t) => [pendingPath(t), 1])) } : {};
    const res = await EventCounter.updateOne(
      { _id: counter, n: { $lt: cap } },
      { $inc: { n: 1 }, $set: { [pendingPath(token)]: new Date() }, ...unset },
    ).catch((err) => {
      if (clear.length) keepTaken(clear.map((t) => ({ kind, counter, token: t })));
      throw err;
    });
    if (res.modifiedCount !== 1 && clear.length) keepTaken(clear.map((t) => ({ kind, counter, token: t })));
    return res.modifiedCount === 1;
  };
  const taken = { kind, counter, token };
  if (await take()) return taken;
  // Not there yet (its first place), or created by a concurrent call after the first try, or full.
  if (!(await EventCounter.exists({ _id: counter })))
    await insertOnce(EventCounter, { _id: counter, n: 0, pending: {} });
  if (await take()) return taken;
  if ((await freeFull(kind, counter, owner)) === 0) return null;
  return (await take()) ? taken : null;
}

// ---- events saved by the previous version (numbered slot documents listed in `slots`)

/**
 * The previous version kept the places as `scheduled_event_slots` documents (`u|<org>|<user>|<n>`,
 * …) listed in each event's `slots`; that collection is no longer read or written. Once per
 * database (the `db_markers` document `scheduled_events:places`), before any place is taken or
 * given back, the counters are set from the events' `slots` (a counter already there is kept) and
 * those events are rewritten with the place fields and `ends_at`, `slots` removed: one read of the
 * events that have `slots` (a scan on the embedded server) and one write per such event.
 */
export async function convertPlaces(): Promise<void> {
  const legacy = await ScheduledEvent.find({ slots: { $exists: true } }, { ...LIFETIME_FIELDS, slots: 1 }).lean<
    EventDoc[]
  >();
  const counts = new Map<string, number>();
  for (const e of legacy)
    for (const k of KINDS) if (placesOf(e)?.[k]) counts.set(counterId(k, e), (counts.get(counterId(k, e)) ?? 0) + 1);
  for (const [_id, n] of counts) await insertOnce(EventCounter, { _id, n, pending: {} });
  for (const e of legacy) {
    await ScheduledEvent.updateOne(
      { _id: e._id, slots: { $exists: true } },
      { $set: { ...placeFields(placesOf(e)!), ends_at: endsAt(e) }, $unset: { slots: 1 } },
      { timestamps: false },
    );
  }
}

let converted: Promise<unknown> | undefined;
/** Resolves once the database's events are converted (`convertPlaces`, once per database: its marker; then once per process). */
export function placesReady(): Promise<unknown> {
  if (!converted) {
    converted = markedOnce('scheduled_events:places', async () => (await convertPlaces(), true));
    converted.catch(() => (converted = undefined));
  }
  return converted;
}

export async function eventsOf(organization_id: string, user_id?: string): Promise<EventDoc[]> {
  return ScheduledEvent.find({ organization_id, ...(user_id ? { user_id } : {}) })
    .sort({ start_event: 1 })
    .lean<EventDoc[]>();
}

const completionKey = (event_id: string, start_event: Date) => `${event_id}@${start_event.toISOString()}`;

/** Which of these one-off events' start-time runs happened (their completions, by the event_id index). */
export async function completedEvents(events: Array<Pick<EventDoc, '_id' | 'start_event'>>): Promise<Set<string>> {
  const keys = new Set(events.map((e) => completionKey(e._id, e.start_event)));
  const found = await EventCompletion.find(
    { event_id: { $in: events.map((e) => e._id) } },
    { _id: 1, event_id: 1 },
  ).lean<Array<{ _id: string; event_id: string }>>();
  return new Set(found.filter((c) => keys.has(c._id)).map((c) => c.event_id));
}

/** Records the start-time run of a one-off event (once: a repeat changes nothing). */
export async function insertCompletion(
  event: Pick<EventDoc, '_id' | 'organization_id' | 'start_event'>,
  run_id: string,
): Promise<void> {
  await insertOnce(EventCompletion, {
    _id: completionKey(event._id, event.start_event),
    event_id: event._id,
    organization_id: event.organization_id,
    run_id,
    completed_at: new Date(),
  });
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

/** The record with this `_id`, or null. */
export const manualRunById = (_id: string) => EventManualRun.findById(_id).lean<ManualRunDoc>();

/** The event's interval claims (`w|`) other than `except` taken less than `ms` from `at` (by the event_id, at index). */
export async function windowClaimsNear(
  event_id: string,
  at: Date,
  ms: number,
  except: string,
): Promise<ManualRunDoc[]> {
  const near = await EventManualRun.find({
    event_id,
    at: { $gt: new Date(at.getTime() - ms), $lt: new Date(at.getTime() + ms) },
  }).lean<ManualRunDoc[]>();
  return near.filter((d) => d._id.startsWith('w|') && d._id !== except);
}

/** Deletes a record this call inserted (its `at` tells it from a later one under the same `_id`). */
export async function deleteManualRun(doc: Pick<ManualRunDoc, '_id' | 'at'>): Promise<void> {
  await EventManualRun.deleteOne({ _id: doc._id, at: doc.at });
}

// ---- a user's export and erasure (user-data.ts)

/** Deletes the event's runs (the event_id index); how many. */
export async function deleteRunsOf(event_id: string): Promise<number> {
  return (await EventRun.deleteMany({ event_id })).deletedCount ?? 0;
}

/**
 * Deletes the user's own cap counters (`u|<organization>|<user>`, `s|<organization>|<user>`), once
 * their events are gone; the organization's counter stays (removeEvent gave its places back).
 */
export async function deleteUserCounters(organization_id: string, user_id: string): Promise<number> {
  const owner = { organization_id, user_id };
  return (
    (await EventCounter.deleteMany({ _id: { $in: [counterId('user', owner), counterId('stored', owner)] } }))
      .deletedCount ?? 0
  );
}

// ---- the organization's signing secret of scheduled webhooks (models.ts, WebhookSecret)

/** By primary key: the organization. */
export const webhookSecretOf = (organization_id: string) =>
  WebhookSecret.findById(organization_id).lean<WebhookSecretDoc>();

/** The organization's first secret; null when another request wrote one first. */
export async function insertWebhookSecret(
  organization_id: string,
  secrets: WebhookSecretDoc['secrets'],
): Promise<WebhookSecretDoc | null> {
  return (await insertOnce(WebhookSecret, { _id: organization_id, secrets })) ? webhookSecretOf(organization_id) : null;
}

/** Replaces the secrets only over the current one read (`current`); null when another rotation came between. */
export function replaceWebhookSecrets(
  organization_id: string,
  current: string,
  secrets: WebhookSecretDoc['secrets'],
): Promise<WebhookSecretDoc | null> {
  return WebhookSecret.findOneAndUpdate(
    { _id: organization_id, 'secrets.0.value': current },
    { $set: { secrets } },
    { new: true },
  ).lean<WebhookSecretDoc>();
}
