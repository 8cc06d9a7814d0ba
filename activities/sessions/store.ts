/**
 * Sessions' data: sessions, their conversations and the records of sessions that ended. The only
 * file that reads or writes sessions' models. Every read is by an indexed field (models.ts); that
 * a session ended is a record of its own, trusted over the session's document (docs/storage.md,
 * "Sessions").
 */
import { insertOnce } from '../core/db/index.ts';
import {
  Conversation,
  type ConversationDoc,
  Session,
  type SessionDoc,
  SessionEnd,
  type SessionSource,
  type SessionStatus,
} from './models.ts';

export type { ConversationDoc, SessionDoc };

export async function insertSession(doc: {
  session_id: string;
  user_id: string;
  organization_id: string;
  source: SessionSource;
  last_activity: Date;
}): Promise<SessionDoc> {
  return (await Session.create(doc)).toObject();
}

export async function insertConversation(doc: Omit<ConversationDoc, 'created_at'>): Promise<ConversationDoc> {
  return (await Conversation.create(doc)).toObject();
}

/** The session in the organization (and the user's, when `user_id` is given). */
export async function sessionDoc(
  organization_id: string,
  session_id: string,
  user_id?: string,
): Promise<SessionDoc | null> {
  return Session.findOne({ session_id, organization_id, ...(user_id ? { user_id } : {}) }).lean<SessionDoc>();
}

export async function conversationDoc(
  organization_id: string,
  user_id: string,
  conversation_id: string,
): Promise<ConversationDoc | null> {
  return Conversation.findOne({ conversation_id, organization_id, user_id }).lean<ConversationDoc>();
}

export async function hasEnded(session_id: string): Promise<boolean> {
  return (await SessionEnd.exists({ _id: session_id })) !== null;
}

/** The ids among `session_ids` that have ended. */
export async function endedAmong(session_ids: string[]): Promise<Set<string>> {
  if (!session_ids.length) return new Set();
  return new Set(
    (await SessionEnd.find({ _id: { $in: session_ids } }, { _id: 1 }).lean<{ _id: string }[]>()).map((e) => e._id),
  );
}

/** Records the end once; false when it had ended before. */
export async function recordEnd(session_id: string, at: Date): Promise<boolean> {
  return insertOnce(SessionEnd, { _id: session_id, ended_at: at });
}

/** Sets fields of a session; with `unlessEnded`, only while its document does not say ended. */
export async function updateSession(
  session_id: string,
  set: { status?: SessionStatus; last_activity?: Date },
  unlessEnded: boolean,
): Promise<SessionDoc | null> {
  const filter = { session_id, ...(unlessEnded ? { status: { $ne: 'ended' } } : {}) };
  return Session.findOneAndUpdate(filter, { $set: set }, { new: true }).lean<SessionDoc>();
}

/** Puts `ended` back on a session document that a racing write revived (the end record decides anyway). */
export async function restoreEnded(session_id: string): Promise<void> {
  await Session.updateOne({ session_id }, { $set: { status: 'ended' } }).catch(() => {});
}

/** The user's most recently active sessions whose document does not say ended (the (organization, user, last_activity) index). */
export async function recentOpenSessions(
  organization_id: string,
  user_id: string,
  limit: number,
): Promise<SessionDoc[]> {
  return Session.find({ organization_id, user_id, status: { $ne: 'ended' } })
    .sort({ last_activity: -1 })
    .limit(limit)
    .lean<SessionDoc[]>();
}

export async function deleteConversationDoc(
  organization_id: string,
  user_id: string,
  conversation_id: string,
): Promise<boolean> {
  const res = await Conversation.deleteOne({ conversation_id, organization_id, user_id });
  return (res.deletedCount ?? 0) > 0;
}

// ---- a user's data (export and erasure)

/** Every session and conversation of the user (the (organization, user, last_activity) index; conversations by user). */
export async function userSessionData(
  organization_id: string,
  user_id: string,
): Promise<{ sessions: SessionDoc[]; conversations: ConversationDoc[]; ended: Set<string> }> {
  const sessions = await Session.find({ organization_id, user_id }, { _id: 0 }).lean<SessionDoc[]>();
  const conversations = await Conversation.find({ organization_id, user_id }, { _id: 0 }).lean<ConversationDoc[]>();
  return { sessions, conversations, ended: await endedAmong(sessions.map((s) => s.session_id)) };
}

/** Deletes the user's sessions, their end records and conversations; counts what went. */
export async function deleteUserSessions(
  organization_id: string,
  user_id: string,
): Promise<{ sessions: number; conversations: number }> {
  const ids = (
    await Session.find({ organization_id, user_id }, { session_id: 1 }).lean<{ session_id: string }[]>()
  ).map((s) => s.session_id);
  const conversations = (await Conversation.deleteMany({ organization_id, user_id })).deletedCount ?? 0;
  if (ids.length) await SessionEnd.deleteMany({ _id: { $in: ids } });
  const sessions = (await Session.deleteMany({ organization_id, user_id })).deletedCount ?? 0;
  return { sessions, conversations };
}
