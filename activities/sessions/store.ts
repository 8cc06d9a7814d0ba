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
  type EndReason,
  Session,
  type SessionDoc,
  SessionEnd,
  type SessionEndDoc,
  SessionPolicy,
  type SessionPolicyDoc,
  type SessionSource,
  type SessionStatus,
} from './models.ts';

export type { ConversationDoc, SessionDoc, SessionEndDoc, SessionPolicyDoc };

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
export async function recordEnd(session_id: string, at: Date, reason: EndReason): Promise<boolean> {
  return insertOnce(SessionEnd, { _id: session_id, ended_at: at, reason });
}

/** The end records among `session_ids`, by session id. */
export async function endsOf(session_ids: string[]): Promise<Map<string, SessionEndDoc>> {
  if (!session_ids.length) return new Map();
  const docs = await SessionEnd.find({ _id: { $in: session_ids } }).lean<SessionEndDoc[]>();
  return new Map(docs.map((d) => [d._id, d]));
}

/**
 * Records activity unless a write of the last `coalesceMs` is there already: one conditional
 * update, which matches nothing (and writes nothing) for a session touched lately or ended.
 */
export async function touchActivity(session_id: string, now: Date, coalesceMs: number): Promise<boolean> {
  const res = await Session.updateOne(
    { session_id, status: { $ne: 'ended' }, last_activity: { $lt: new Date(now.getTime() - coalesceMs) } },
    { $set: { last_activity: now } },
  );
  return res.modifiedCount > 0;
}

/** Sets fields of a session; with `unlessEnded`, only while its document does not say ended. */
export async function updateSession(
  session_id: string,
  set: { status?: SessionStatus; last_activity?: Date; ended_at?: Date },
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

/**
 * A page of the user's sessions, most recently active first (the (organization, user,
 * last_activity) index): the ones not ended, and the ended ones whose end is after `endedSince`.
 */
export async function userSessionsPage(
  organization_id: string,
  user_id: string,
  endedSince: Date,
  skip: number,
  limit: number,
): Promise<{ sessions: SessionDoc[]; total: number }> {
  const filter = {
    organization_id,
    user_id,
    $or: [{ status: { $ne: 'ended' } }, { ended_at: { $gte: endedSince } }],
  };
  const [sessions, total] = await Promise.all([
    Session.find(filter).sort({ last_activity: -1 }).skip(skip).limit(limit).lean<SessionDoc[]>(),
    Session.countDocuments(filter),
  ]);
  return { sessions, total };
}

/** Ids of the user's sessions whose document does not say ended. */
export async function openSessionIds(organization_id: string, user_id: string): Promise<string[]> {
  const docs = await Session.find({ organization_id, user_id, status: { $ne: 'ended' } }, { session_id: 1 }).lean<
    { session_id: string }[]
  >();
  return docs.map((d) => d.session_id);
}

/** Ends many sessions: their end records first (one insert; those ended before keep theirs), then the documents. */
export async function recordEnds(session_ids: string[], at: Date, reason: EndReason): Promise<void> {
  if (!session_ids.length) return;
  await SessionEnd.insertMany(
    session_ids.map((_id) => ({ _id, ended_at: at, reason })),
    { ordered: false },
  ).catch((err: unknown) => {
    const errors = (err as { writeErrors?: { code?: number; err?: { code?: number } }[] }).writeErrors;
    if (!errors?.length || errors.some((e) => (e.code ?? e.err?.code) !== 11000)) throw err;
  });
  await Session.updateMany(
    { session_id: { $in: session_ids }, status: { $ne: 'ended' } },
    { $set: { status: 'ended', ended_at: at } },
  );
}

// ---- the organization's limits

export async function policyDoc(organization_id: string): Promise<SessionPolicyDoc | null> {
  return SessionPolicy.findById(organization_id).lean<SessionPolicyDoc>();
}

/** Sets (a number) or removes (null) each limit given; answers the stored policy. */
export async function writePolicy(
  organization_id: string,
  patch: { lifetime_seconds?: number | null; idle_timeout_seconds?: number | null },
): Promise<SessionPolicyDoc> {
  const set: Record<string, number> = {};
  const unset: Record<string, 1> = {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) continue;
    if (v === null) unset[k] = 1;
    else set[k] = v;
  }
  return (await SessionPolicy.findOneAndUpdate(
    { _id: organization_id },
    { $set: { ...set, updated_at: new Date() }, ...(Object.keys(unset).length ? { $unset: unset } : {}) },
    { upsert: true, new: true },
  ).lean<SessionPolicyDoc>())!;
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
