/** Appending what an audited request did, and reading the trail (list, one record's view). */
import { jsonText } from '../core/db/index.ts';
import { appendRecord } from './chain.ts';
import type { ActorLevel, AuditOutcome } from './constants.ts';
import type { Changes } from './mask.ts';
import type { AuditRecordDoc } from './models.ts';
import { type RecordFilter, recordsPage } from './store.ts';

const changesText = jsonText<Changes>({});

export interface AuditEntry {
  organization_id: string;
  actor: { key_id: string; user_id: string; level: ActorLevel };
  action: string;
  target: { type: string; id: string };
  request_id: string;
  /** the intent written before the change (intents.ts): how the maintenance run finds this record */
  intent_id?: string;
  /** masked already (mask.ts) */
  changes: Changes;
  outcome?: AuditOutcome;
  at?: Date;
}

export interface AuditRecordView {
  id: string;
  seq: number;
  at: string;
  organization_id: string;
  actor: { key_id: string; user_id: string; level: ActorLevel };
  action: string;
  target: { type: string; id: string };
  request_id: string;
  changes: Changes;
  outcome: AuditOutcome;
  prev_hash: string;
  hash: string;
}

const viewRecord = (d: AuditRecordDoc): AuditRecordView => ({
  id: d._id,
  seq: d.seq,
  at: new Date(d.at).toISOString(),
  organization_id: d.organization_id,
  actor: { key_id: d.actor.key_id, user_id: d.actor.user_id, level: d.actor.level },
  action: d.action,
  target: { type: d.target.type, id: d.target.id },
  request_id: d.request_id,
  changes: changesText.decode(d.changes_json),
  outcome: d.outcome,
  prev_hash: d.prev_hash,
  hash: d.hash,
});

/** Appends the entry at its organization's tail; answers the record as listed. */
export async function recordChange(e: AuditEntry): Promise<AuditRecordView> {
  const doc = await appendRecord({
    organization_id: e.organization_id,
    at: e.at ?? new Date(),
    actor: e.actor,
    actor_key_id: e.actor.key_id,
    action: e.action,
    target: { type: e.target.type, id: String(e.target.id) },
    target_id: String(e.target.id),
    request_id: e.request_id,
    // left out when unknown: a stored null would be hashed differently from a missing field
    ...(e.intent_id && { intent_id: e.intent_id }),
    changes_json: changesText.encode(e.changes),
    outcome: e.outcome ?? 'succeeded',
  });
  return viewRecord(doc);
}

export const encodeChanges = (c: Changes) => changesText.encode(c);
export const decodeChanges = (text: string) => changesText.decode(text);

/** A page of the organization's records, newest first. */
export async function listAuditRecords(f: RecordFilter, page: number, limit: number) {
  const rows = await recordsPage(f, (page - 1) * limit, limit);
  return { records: rows.slice(0, limit).map(viewRecord), page, limit, has_more: rows.length > limit };
}
