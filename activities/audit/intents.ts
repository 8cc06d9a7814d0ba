/**
 * Intents: what an audited request is about to change, written before its handler runs and removed
 * once its record is appended. A process that dies between the change and its record, or an
 * append that failed, leaves the intent: the maintenance run appends it with outcome `unknown`
 * (the change may or may not have happened), once per intent.
 */
import { newId } from '../core/ids.ts';
import { INTENT_SETTLE_MINUTES } from './constants.ts';
import { decodeChanges, encodeChanges, recordChange, type AuditEntry } from './records.ts';
import { deleteIntent, insertIntent, recordOfRequest, staleIntents } from './store.ts';

/** Writes the intent of a request; answers its id (to drop it afterwards). */
export async function beginIntent(e: AuditEntry): Promise<string> {
  const _id = newId('aui');
  await insertIntent({ _id, organization_id: e.organization_id, actor: e.actor, action: e.action, target: { type: e.target.type, id: String(e.target.id) }, request_id: e.request_id, changes_json: encodeChanges(e.changes), created_at: new Date() });
  return _id;
}

export const dropIntent = (id: string) => deleteIntent(id);

/**
 * Appends the intents older than INTENT_SETTLE_MINUTES whose request left no record, as outcome
 * `unknown`, and removes them. A record of the same request and action written since the intent
 * means only the intent's removal was lost: nothing is appended.
 */
export async function settleStaleIntents(now = new Date()): Promise<number> {
  const before = new Date(now.getTime() - INTENT_SETTLE_MINUTES * 60_000);
  let recorded = 0;
  for (;;) {
    const batch = await staleIntents(before, 100);
    for (const i of batch) {
      if (!(await recordOfRequest(i.organization_id, i.request_id, i.action, i.created_at))) {
        await recordChange({ organization_id: i.organization_id, actor: i.actor, action: i.action, target: i.target, request_id: i.request_id, changes: decodeChanges(i.changes_json), outcome: 'unknown' });
        recorded += 1;
      }
      await deleteIntent(i._id);
    }
    if (batch.length < 100) return recorded;
  }
}
