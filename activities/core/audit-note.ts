/**
 * Notes for the audit record of the request being served: component code that knows what a change
 * replaced (the previous value of a field, the id of what it created) says so here, and the edge
 * merges the notes into the one record it appends when the request succeeds
 * (docs/components/audit.md). Outside an audited request (a basic key, a read, a workflow's
 * activity in the worker) every call is a no-op, so a component may call them unconditionally.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface AuditNotes {
  /** field → {from, to}; a field noted twice keeps its first `from` and its last `to` */
  changes: Record<string, { from?: unknown; to?: unknown }>;
  /** the request was answered from an earlier one (an idempotent replay): no record */
  replayed?: boolean;
}

const storage = new AsyncLocalStorage<AuditNotes>();

export const newAuditNotes = (): AuditNotes => ({ changes: {} });

/** Runs `fn` with `notes` as the request's notes (the edge, around an audited handler). */
export const withAuditNotes = <T>(notes: AuditNotes, fn: () => T): T => storage.run(notes, fn);

/** A field the request changed, with its previous value when known (`from` undefined: not known). */
export function noteChange(field: string, from: unknown, to: unknown): void {
  const notes = storage.getStore();
  if (!notes) return;
  const earlier = notes.changes[field];
  notes.changes[field] =
    earlier && 'from' in earlier ? { from: earlier.from, to } : from === undefined ? { to } : { from, to };
}

/** The request repeated an earlier one and changed nothing (answered from the idempotency store). */
export function noteReplay(): void {
  const notes = storage.getStore();
  if (notes) notes.replayed = true;
}
