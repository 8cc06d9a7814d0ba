import mongoose, { Schema } from 'mongoose';

import type { ActorLevel, AuditOutcome } from './constants.ts';

const actorSchema = new Schema(
  {
    key_id: { type: String, required: true },
    user_id: { type: String, required: true },
    level: { type: String, required: true },
  },
  { _id: false },
);
// A field named `type` needs the sub-schema's typeKey changed, or mongoose reads it as the declaration's type.
const targetSchema = new Schema(
  { type: { $type: String, required: true }, id: { $type: String, required: true } },
  { _id: false, typeKey: '$type' },
);

/**
 * `audit_records`: one per audited change, `_id` `<organization_id>:<seq zero-padded to 12>`, so
 * of two writers of seq n in one organization exactly one wins (the primary key), and a chain is
 * read by `_id` alone. `changes_json` is the changes as JSON text (their keys are request fields
 * and component field names: dots and `$` stay data). `hash` is SHA-256 over the canonical JSON
 * of every other field (chain.ts); `prev_hash` the hash of record seq-1 (64 zeros for seq 1).
 * `actor_key_id` and `target_id` repeat the nested values as plain fields for the list's indexes
 * (dotted paths are not answered from an index on the embedded server). `intent_id` is the id of
 * the intent the request wrote before its handler ran (server-chosen, unlike the request id a
 * client may pick): the maintenance run settles an intent by it. Records appended before it
 * existed have none; being stored, it is covered by the hash like every other field.
 */
const recordSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    seq: { type: Number, required: true },
    at: { type: Date, required: true },
    actor: { type: actorSchema, required: true },
    actor_key_id: { type: String, required: true },
    action: { type: String, required: true },
    target: { type: targetSchema, required: true },
    target_id: { type: String, required: true },
    request_id: { type: String, required: true },
    intent_id: { type: String },
    changes_json: { type: String, required: true },
    outcome: { type: String, required: true },
    prev_hash: { type: String, required: true },
    hash: { type: String, required: true },
  },
  { versionKey: false },
);
// The list: an organization's records newest first, optionally by action, actor key or target.
recordSchema.index({ organization_id: 1, at: -1 });
recordSchema.index({ organization_id: 1, action: 1, at: -1 });
recordSchema.index({ organization_id: 1, actor_key_id: 1, at: -1 });
recordSchema.index({ organization_id: 1, target_id: 1, at: -1 });
// The maintenance run: has an intent's record been written already, before the intent becomes `unknown`.
recordSchema.index({ organization_id: 1, intent_id: 1 });

export interface AuditRecordDoc {
  _id: string;
  organization_id: string;
  seq: number;
  at: Date;
  actor: { key_id: string; user_id: string; level: ActorLevel };
  actor_key_id: string;
  action: string;
  target: { type: string; id: string };
  target_id: string;
  request_id: string;
  intent_id?: string;
  changes_json: string;
  outcome: AuditOutcome;
  prev_hash: string;
  hash: string;
}

/**
 * `audit_heads`: per organization, the newest record known (a hint: appends start there and read
 * forward by `_id` when it is behind) and, once retention removed the oldest records, the anchor
 * verify starts from: the first kept seq and the hash its record must link to.
 */
const headSchema = new Schema(
  {
    _id: { type: String, required: true },
    seq: { type: Number, required: true },
    hash: { type: String, required: true },
    retained_from_seq: { type: Number },
    retained_from_prev_hash: { type: String },
  },
  { versionKey: false },
);

export interface AuditHeadDoc {
  _id: string;
  seq: number;
  hash: string;
  retained_from_seq?: number;
  retained_from_prev_hash?: string;
}

/**
 * `audit_intents`: written before an audited handler runs, removed once its record is appended (or
 * the handler failed). One left behind (the process died between the change and its record, or
 * the append failed) is appended by the maintenance run with outcome `unknown`.
 */
const intentSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    actor: { type: actorSchema, required: true },
    action: { type: String, required: true },
    target: { type: targetSchema, required: true },
    request_id: { type: String, required: true },
    changes_json: { type: String, required: true },
    created_at: { type: Date, required: true },
  },
  { versionKey: false },
);
intentSchema.index({ created_at: 1 });

export interface AuditIntentDoc {
  _id: string;
  organization_id: string;
  actor: { key_id: string; user_id: string; level: ActorLevel };
  action: string;
  target: { type: string; id: string };
  request_id: string;
  changes_json: string;
  created_at: Date;
}

export const AuditRecord = mongoose.model('AuditRecord', recordSchema, 'audit_records');
export const AuditHead = mongoose.model('AuditHead', headSchema, 'audit_heads');
export const AuditIntent = mongoose.model('AuditIntent', intentSchema, 'audit_intents');
