import { notFound, PlatformError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import type { SessionSource, SessionStatus } from './constants.ts';
import {
  conversationDoc,
  deleteConversationDoc,
  endedAmong,
  hasEnded,
  insertConversation,
  insertSession,
  recentOpenSessions,
  recordEnd,
  restoreEnded,
  type SessionDoc,
  sessionDoc,
  updateSession,
} from './store.ts';

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

function viewSession(s: SessionDoc): SessionView {
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
export async function initializeSession(input: {
  user_id: string;
  organization_id: string;
  source?: SessionSource;
}): Promise<{ session: SessionView; conversation_id: string }> {
  const now = new Date();
  const session = await insertSession({
    session_id: newId('ses'),
    user_id: input.user_id,
    organization_id: input.organization_id,
    source: input.source ?? 'web',
    last_activity: now,
  });
  const conversation = await insertConversation({
    conversation_id: newId('conv'),
    session_id: session.session_id,
    user_id: input.user_id,
    organization_id: input.organization_id,
  });
  return { session: viewSession(session), conversation_id: conversation.conversation_id };
}

/**
 * Records activity on a session that has not ended; false when it has. The end record is read
 * after the write, so an end that landed first is seen even where the write itself, racing it,
 * put the old status back on the document (store.ts).
 */
async function touch(session_id: string): Promise<SessionDoc | null> {
  const session = await updateSession(session_id, { last_activity: new Date() }, true);
  if (!session) return null;
  if (await hasEnded(session_id)) {
    await restoreEnded(session_id);
    return null;
  }
  return session;
}

/** The user's most recently active session that has not ended, if any. */
async function latestOpenSession(organization_id: string, user_id: string): Promise<SessionDoc | null> {
  // Documents a racing write revived are skipped (and repaired); a few rounds find the open one.
  for (let round = 0; round < 3; round += 1) {
    const candidates = await recentOpenSessions(organization_id, user_id, 5);
    const ended = await endedAmong(candidates.map((c) => c.session_id));
    const open = candidates.find((c) => !ended.has(c.session_id));
    for (const id of ended) await restoreEnded(id);
    if (open || candidates.length < 5) return open ?? null;
  }
  return null;
}

/**
 * A new conversation in the named session, or, when none is named, in the user's most recently
 * active session that has not ended (a new session is opened when there is none).
 */
export async function newConversation(input: {
  user_id: string;
  organization_id: string;
  session_id?: string;
}): Promise<{ conversation_id: string; session_id: string }> {
  let session: SessionDoc | null;
  if (input.session_id) {
    session = await sessionDoc(input.organization_id, input.session_id, input.user_id);
    if (!session) throw notFound(`Session not found: ${input.session_id}`);
    if (session.status === 'ended' || !(await touch(session.session_id)))
      throw new PlatformError('conflict', `Session has ended: ${input.session_id}`);
  } else {
    session = await latestOpenSession(input.organization_id, input.user_id);
    if (!session || !(await touch(session.session_id))) {
      const created = await initializeSession({ user_id: input.user_id, organization_id: input.organization_id });
      return { conversation_id: created.conversation_id, session_id: created.session.session_id };
    }
  }
  const conversation = await insertConversation({
    conversation_id: newId('conv'),
    session_id: session.session_id,
    user_id: input.user_id,
    organization_id: input.organization_id,
  });
  return { conversation_id: conversation.conversation_id, session_id: session.session_id };
}

/** Valid when the conversation is the user's, in the organization, and its session has not ended. */
export async function verifySession(input: {
  user_id: string;
  organization_id: string;
  conversation_id: string;
}): Promise<{ valid: boolean; session_id?: string; status?: SessionStatus }> {
  const conversation = await conversationDoc(input.organization_id, input.user_id, input.conversation_id);
  if (!conversation) return { valid: false };
  const session = await touch(conversation.session_id);
  if (!session) return { valid: false, session_id: conversation.session_id, status: 'ended' };
  return { valid: true, session_id: session.session_id, status: session.status };
}

export async function getSession(organization_id: string, session_id: string): Promise<SessionView> {
  const session = await sessionDoc(organization_id, session_id);
  if (!session) throw notFound(`Session not found: ${session_id}`);
  return viewSession(session);
}

const reopen = () => new PlatformError('conflict', 'An ended session cannot be reopened');

/**
 * Status changes: active ⇄ paused, either → ended; ended is final. Ending inserts the end record
 * first (store.ts); a pause or resume checks it after writing, so one racing the end answers 409
 * and leaves the session ended.
 */
export async function setSessionStatus(
  organization_id: string,
  session_id: string,
  status: SessionStatus,
): Promise<SessionView> {
  const current = await sessionDoc(organization_id, session_id);
  if (!current) throw notFound(`Session not found: ${session_id}`);
  const now = new Date();
  if (status === 'ended') {
    await recordEnd(session_id, now); // ended before: ending again changes nothing
    const updated = await updateSession(session_id, { status: 'ended', last_activity: now }, false);
    return viewSession(updated!);
  }
  if (current.status === 'ended') throw reopen();
  const updated = await updateSession(session_id, { status, last_activity: now }, true);
  if (!updated) throw reopen();
  if (await hasEnded(session_id)) {
    await restoreEnded(session_id);
    throw reopen();
  }
  return viewSession(updated);
}

export async function deleteConversation(
  organization_id: string,
  conversation_id: string,
  user_id: string,
): Promise<boolean> {
  return deleteConversationDoc(organization_id, user_id, conversation_id);
}
