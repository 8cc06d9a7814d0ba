/**
 * Sessions' schemas, imported by store.ts alone. A session is found by its session_id and a
 * conversation by its conversation_id (unique indexes; new documents also take them as `_id`),
 * a user's recent sessions by (organization, user, last_activity).
 */
import mongoose, { Schema } from 'mongoose';

import { idFrom } from '../core/db/index.ts';
import {
  END_REASONS,
  type EndReason,
  SESSION_SOURCES,
  SESSION_STATUSES,
  type SessionSource,
  type SessionStatus,
} from './constants.ts';

export { type EndReason, type SessionSource, type SessionStatus };

const sessionSchema = new Schema(
  {
    _id: idFrom('session_id'),
    session_id: { type: String, required: true, unique: true },
    user_id: { type: String, required: true },
    organization_id: { type: String, required: true },
    status: { type: String, enum: SESSION_STATUSES, default: 'active' },
    source: { type: String, enum: SESSION_SOURCES, default: 'web' },
    last_activity: { type: Date, required: true },
    /** a copy of the end record's time, so a user's list can keep ended sessions for a while (ENDED_LISTED_DAYS) */
    ended_at: { type: Date },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: false }, versionKey: false },
);
sessionSchema.index({ organization_id: 1, user_id: 1, last_activity: -1 });

const conversationSchema = new Schema(
  {
    _id: idFrom('conversation_id'),
    conversation_id: { type: String, required: true, unique: true },
    session_id: { type: String, required: true },
    user_id: { type: String, required: true },
    organization_id: { type: String, required: true },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: false }, versionKey: false },
);
conversationSchema.index({ session_id: 1 });

/**
 * That a session ended, kept apart from the session: an insert under the session's id is never
 * undone; whatever the session document says, a session with this record has ended. (Earlier
 * versions ran on a server whose unisolated updates could write an old status back over the end,
 * so documents in existing databases may still disagree with their record.)
 */
const sessionEndSchema = new Schema(
  {
    _id: { type: String, required: true },
    ended_at: { type: Date, required: true },
    /** absent on records written before reasons were kept: `ended` */
    reason: { type: String, enum: END_REASONS },
  },
  { versionKey: false },
);

/**
 * An organization's session limits (`_id` its organization_id), set by its admins: a session ends
 * `lifetime_seconds` after its creation and `idle_timeout_seconds` after its last recorded
 * activity; either absent means no such limit.
 */
const sessionPolicySchema = new Schema(
  {
    _id: { type: String, required: true },
    lifetime_seconds: { type: Number },
    idle_timeout_seconds: { type: Number },
    updated_at: { type: Date },
  },
  { versionKey: false },
);

export interface SessionDoc {
  session_id: string;
  user_id: string;
  organization_id: string;
  status: SessionStatus;
  source: SessionSource;
  last_activity: Date;
  ended_at?: Date;
  created_at: Date;
}
export interface SessionEndDoc {
  _id: string;
  ended_at: Date;
  reason?: EndReason;
}
export interface SessionPolicyDoc {
  _id: string;
  lifetime_seconds?: number;
  idle_timeout_seconds?: number;
  updated_at?: Date;
}
export interface ConversationDoc {
  conversation_id: string;
  session_id: string;
  user_id: string;
  organization_id: string;
  created_at: Date;
}

export const Session = mongoose.model<SessionDoc>('Session', sessionSchema, 'sessions');
export const Conversation = mongoose.model<ConversationDoc>('Conversation', conversationSchema, 'conversations');
export const SessionEnd = mongoose.model<SessionEndDoc>('SessionEnd', sessionEndSchema, 'session_ends');
export const SessionPolicy = mongoose.model<SessionPolicyDoc>('SessionPolicy', sessionPolicySchema, 'session_policies');
