import { notFound, PlatformError } from '../errors';
import { newId } from '../ids';
import { Conversation, Session, type ConversationDoc, type SessionDoc, type SessionSource, type SessionStatus } from './models';

export interface SessionView {
  session_id: string;
  user_id: string;
  organization_id: string;
  metadata: {
    created_at: string;
    last_activity: string;
    status: SessionStatus;
    source: SessionSource;
    organization_id: string;
  };
}

export function viewSession(s: SessionDoc): SessionView {
  return {
    session_id: s.session_id,
    user_id: s.user_id,
    organization_id: s.organization_id,
    metadata: {
      created_at: s.created_at.toISOString(),
      last_activity: s.last_activity.toISOString(),
      status: s.status,
      source: s.source,
      organization_id: s.organization_id,
    },
  };
}

/** Initialize session: a new session and its first conversation (interface rule 1). */
export async function initializeSession(input: { user_id: string; organization_id: string; source?: SessionSource }): Promise<{ session: SessionView; conversation_id: string }> {
  const now = new Date();
  const session = await Session.create({
    session_id: newId('ses'),
    user_id: input.user_id,
    organization_id: input.organization_id,
    source: input.source ?? 'web',
    last_activity: now,
  });
  const conversation = await Conversation.create({
    conversation_id: newId('conv'),
    session_id: session.session_id,
    user_id: input.user_id,
    organization_id: input.organization_id,
  });
  return { session: viewSession(session.toObject()), conversation_id: conversation.conversation_id };
}

/**
 * A new conversation in the named session, or, when none is named, in the user's most recently
 * active session that has not ended (a new session is opened when there is none).
 */
export async function newConversation(input: { user_id: string; organization_id: string; session_id?: string }): Promise<{ conversation_id: string; session_id: string }> {
  let session: SessionDoc | null;
  if (input.session_id) {
    session = await Session.findOne({ session_id: input.session_id, organization_id: input.organization_id, user_id: input.user_id }).lean<SessionDoc>();
    if (!session) throw notFound(`Session not found: ${input.session_id}`);
    if (session.status === 'ended') throw new PlatformError(409, `Session has ended: ${input.session_id}`);
  } else {
    session = await Session.findOne({ organization_id: input.organization_id, user_id: input.user_id, status: { $ne: 'ended' } })
      .sort({ last_activity: -1 })
      .lean<SessionDoc>();
    if (!session) {
      const created = await initializeSession({ user_id: input.user_id, organization_id: input.organization_id });
      return { conversation_id: created.conversation_id, session_id: created.session.session_id };
    }
  }
  const conversation = await Conversation.create({
    conversation_id: newId('conv'),
    session_id: session.session_id,
    user_id: input.user_id,
    organization_id: input.organization_id,
  });
  await Session.updateOne({ session_id: session.session_id }, { $set: { last_activity: new Date() } });
  return { conversation_id: conversation.conversation_id, session_id: session.session_id };
}

/** Valid when the conversation is the user's, in the organization, and its session has not ended. */
export async function verifySession(input: { user_id: string; organization_id: string; conversation_id: string }): Promise<{ valid: boolean; session_id?: string; status?: SessionStatus }> {
  const conversation = await Conversation.findOne({ conversation_id: input.conversation_id, organization_id: input.organization_id, user_id: input.user_id }).lean<ConversationDoc>();
  if (!conversation) return { valid: false };
  const session = await Session.findOneAndUpdate(
    { session_id: conversation.session_id, status: { $ne: 'ended' } },
    { $set: { last_activity: new Date() } },
    { new: true },
  ).lean<SessionDoc>();
  if (!session) return { valid: false, session_id: conversation.session_id, status: 'ended' };
  return { valid: true, session_id: session.session_id, status: session.status };
}

export async function getSession(organization_id: string, session_id: string): Promise<SessionView> {
  const session = await Session.findOne({ session_id, organization_id }).lean<SessionDoc>();
  if (!session) throw notFound(`Session not found: ${session_id}`);
  return viewSession(session);
}

/** Status changes: active ⇄ paused, either → ended; ended is final. */
export async function setSessionStatus(organization_id: string, session_id: string, status: SessionStatus): Promise<SessionView> {
  const current = await Session.findOne({ session_id, organization_id }).lean<SessionDoc>();
  if (!current) throw notFound(`Session not found: ${session_id}`);
  if (current.status === 'ended' && status !== 'ended') throw new PlatformError(409, 'An ended session cannot be reopened');
  const updated = await Session.findOneAndUpdate({ session_id }, { $set: { status, last_activity: new Date() } }, { new: true }).lean<SessionDoc>();
  return viewSession(updated!);
}


export async function deleteConversation(organization_id: string, conversation_id: string, user_id: string): Promise<boolean> {
  const res = await Conversation.deleteOne({ conversation_id, organization_id, user_id });
  return (res.deletedCount ?? 0) > 0;
}
