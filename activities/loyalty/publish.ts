/**
 * What loyalty publishes to the outgoing event log (activities/events).
 * The ledger's events: each entry is told as one event, keyed by the entry's operation id. The
 * entry is written with `event_pending`, so the change and the duty to tell it are one write; the
 * event is recorded right after, in the background (the caller does not wait). The events sweep
 * (every minute) clears the marks of entries whose event is recorded, a batch at a time, and
 * records the events a process that died in between left unrecorded (`publishPendingEntries`).
 */
import { Background } from '../core/background.ts';
import { eventId, eventsRecorded, type EventType, recordEvent } from '../events/index.ts';
import type { LedgerEntryDoc, LedgerReason } from './models.ts';
import { clearEventPending, entriesWithPendingEvent } from './store.ts';

/** The event an entry is told as (every entry is told: a consumer can follow a balance from the events alone). */
function entryEventType(reason: LedgerReason, amount: number): EventType {
  if (reason === 'reversal') return 'points.reversed';
  if (reason === 'expiry') return 'points.expired';
  return amount > 0 ? 'points.credited' : 'points.debited';
}

export async function publishEntry(e: LedgerEntryDoc): Promise<void> {
  await recordEvent(entryEvent(e));
}

function entryEvent(e: LedgerEntryDoc) {
  return {
    organization_id: e.organization_id,
    type: entryEventType(e.reason, e.amount),
    key: e.operation_id,
    at: e.created_at,
    data: {
      user_id: e.user_id,
      operation_id: e.operation_id,
      entry_id: e.entry_id,
      /** the entry's number in the user's ledger (1, 2, 3…): a consumer sees a gap or the order */
      seq: e.seq,
      amount: e.amount,
      balance_after: e.balance_after,
      reason: e.reason,
      // An action credit's action (`purchase`); other entries' descriptions can hold words
      // (a reversal's is the admin's reason): ids and amounts tell those.
      description: e.reason === 'action' ? (e.description ?? null) : null,
      ...(e.reverses && { reverses_entry_id: e.reverses }),
      expires_at: e.expires_at ? new Date(e.expires_at).toISOString() : null,
      available_at: e.available_at ? new Date(e.available_at).toISOString() : null,
    },
  };
}

const recordings = new Background("loyalty: an entry's event was not recorded; the events sweep records it");

/** Records the entry's event after the caller's answer. */
export function publishLater(e: LedgerEntryDoc): void {
  if (e.event_pending) recordings.run(publishEntry(e));
}

/** Resolves when the events being recorded have been (tests, and a process shutting down). */
export const ledgerEventsSettled = () => recordings.settled();

/** The events sweep's source (workers/root.ts registers it): entries older than `before` still marked; answers how many events it had to record. */
export async function publishPendingEntries(before: Date): Promise<number> {
  let n = 0;
  for (;;) {
    const batch = await entriesWithPendingEvent(before, 500);
    const events = batch.map(entryEvent);
    const recorded = await eventsRecorded(events.map((e) => eventId(e.organization_id, e.type, e.key)));
    for (const e of events) {
      if (recorded.has(eventId(e.organization_id, e.type, e.key))) continue;
      await recordEvent(e);
      n += 1;
    }
    await clearEventPending(batch.map((e) => e._id));
    if (batch.length < 500) return n;
  }
}
