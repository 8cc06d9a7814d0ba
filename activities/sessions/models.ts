import mongoose, { Schema } from 'mongoose';

export const SESSION_STATUSES = ['active', 'paused', 'ended'] as const;
export const SESSION_SOURCES = ['web', 'mobile', 'api'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];
export type SessionSource = (typeof SESSION_SOURCES)[number];

const sessionSchema = new Schema(
  {
    session_id: { type: String, required: true, unique: true },
    user_id: { type: String, required: true },
    organization_id: { type: String, required: true },
    status: { type: String, enum: SESSION_STATUSES, default: 'active' },
    source: { type: String, enum: SESSION_SOURCES, default: 'web' },
    last_activity: { type: Date, required: true },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: false }, versionKey: false },
);
sessionSchema.index({ organization_id: 1, user_id: 1, last_activity: -1 });

const conversationSchema = new Schema(
  {
    conversation_id: { type: String, required: true, unique: true },
    session_id: { type: String, required: true },
    user_id: { type: String, required: true },
    organization_id: { type: String, required: true },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: false }, versionKey: false },
);
conversationSchema.index({ session_id: 1 });

/**
 * That a session ended, kept apart from the session: FerretDB 1.x applies an update as a
 * read-modify-write of the whole document, so a `last_activity` write (or a pause) racing the end
 * could write the old status back. An insert under the session's id is never undone; whatever
 * the session document says, a session with this record has ended.
 */
const sessionEndSchema = new Schema(
  {
    _id: { type: String, required: true },
    ended_at: { type: Date, required: true },
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
  created_at: Date;
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
export const SessionEnd = mongoose.model<{ _id: string; ended_at: Date }>('SessionEnd', sessionEndSchema, 'session_ends');
