/**
 * Intents: what an audited request is about to change, written before its handler runs and removed
 * once its record is appended. A process that dies between the change and its record, or an
 * append that failed, leaves the intent: the maintenance run appends it with outcome `unknown`
 * (the change may or may not have happened), once per intent.
 */
import { newId } from '../core/ids.ts';
import { INTENT_SETTLE_MINUTES } from './constants.ts';
import { type AuditEntry, decodeChanges, encodeChanges, recordChange } from './records.ts';
import { deleteIntent, insertIntent, recordOfIntent, staleIntents } from './store.ts';

/** A new intent's id: chosen here, so no client can make two requests share one. */
export const newIntentId = () => newId('aui');

/**
 * Writes the intent of a request under `_id` (newIntentId); the record appended when the request
 * succeeds carries the same id as its `intent_id`.
 */
export async function beginIntent(e: AuditEntry, _id = newIntentId()): Promise<string> {
  await insertIntent({
    _id,
    organization_id: e.organization_id,
    actor: e.actor,
    action: e.action,
    target: { type: e.target.type, id: String(e.target.id) },
    request_id: e.request_id,
    changes_json: encodeChanges(e.changes),
    created_at: new Date(),
  });
  return _id;
}

export const dropIntent = (id: string) => deleteIntent(id);

/**
 * Appends the intents older than INTENT_SETTLE_MINUTES whose request left no record, as outcome
 * `unknown`, and removes them. A record carrying the intent's id means only the intent's removal
 * was lost: nothing is appended. The record appended here carries the id too, so a run that dies
 * between the append and the removal appends nothing the next time.
 */
export async function settleStaleIntents(now = new Date()): Promise<number> {
  const before = new Date(now.getTime() - INTENT_SETTLE_MINUTES * 60_000);
  let recorded = 0;
  for (;;) {
    const batch = await staleIntents(before, 100);
    for (const i of batch) {
      if (!(await recordOfIntent(i.organization_id, i._id))) {
        await recordChange({
          organization_id: i.organization_id,
          actor: i.actor,
          action: i.action,
          target: i.target,
          request_id: i.request_id,
          intent_id: i._id,
          changes: decodeChanges(i.changes_json),
          outcome: 'unknown',
        });
        recorded += 1;
      }
      await deleteIntent(i._id);
    }
    if (batch.length < 100) return recorded;
  }
}
