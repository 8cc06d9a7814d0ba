import { notFound, PlatformError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { ENDED_LISTED_DAYS, type EndReason, type SessionSource, type SessionStatus } from './constants.ts';
import { ACTIVITY_WRITE_MS, endsBy, pastLimit, policyOf } from './policy.ts';
import {
  conversationDoc,
  deleteConversationDoc,
  endedAmong,
  endsOf,
  hasEnded,
  insertConversation,
  insertSession,
  openSessionIds,
  recentOpenSessions,
  recordEnd,
  recordEnds,
  restoreEnded,
  type SessionDoc,
  sessionDoc,
  touchActivity,
  updateSession,
  userSessionsPage,
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
 * Records activity on a session that has not ended (at most once per ACTIVITY_WRITE_MS: most uses
 * write nothing); null when it has ended, also when its organization's limits end it now. The end
 * record is read after the write, so an end that landed first is seen even where the write itself,
 * racing it, put the old status back on the document (store.ts).
 */
async function touch(session: SessionDoc): Promise<SessionDoc | null> {
  if (session.status === 'ended') return null;
  const now = new Date();
  const past = pastLimit(session, await policyOf(session.organization_id), now.getTime());
  if (past) {
    await recordEnds([session.session_id], past.at, past.reason);
    return null;
  }
  await touchActivity(session.session_id, now, ACTIVITY_WRITE_MS);
  if (await hasEnded(session.session_id)) {
    await restoreEnded(session.session_id);
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
    if (!(await touch(session))) throw new PlatformError('conflict', `Session has ended: ${input.session_id}`);
  } else {
    session = await latestOpenSession(input.organization_id, input.user_id);
    if (!session || !(await touch(session))) {
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
  const doc = await sessionDoc(input.organization_id, conversation.session_id);
  const session = doc && (await touch(doc));
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
    // Ended before: ending again changes nothing but the document's status (a racing write may have revived it).
    const first = await recordEnd(session_id, now, 'ended');
    const updated = await updateSession(
      session_id,
      first ? { status: 'ended', last_activity: now, ended_at: now } : { status: 'ended' },
      false,
    );
    return viewSession(updated!);
  }
  if (current.status === 'ended') throw reopen();
  const past = pastLimit(current, await policyOf(organization_id), now.getTime());
  if (past) {
    await recordEnds([session_id], past.at, past.reason);
    throw reopen();
  }
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

/** A session as its user's list shows it. */
export interface ListedSession {
  session_id: string;
  status: SessionStatus;
  source: SessionSource;
  created_at: string;
  last_activity: string;
  ended_at: string | null;
  end_reason: EndReason | null;
  /** when the organization's limits end it if nothing else does (null: no limit, or ended) */
  ends_at: string | null;
}

/**
 * The user's sessions, most recently active first: the open ones and those ended in the last
 * ENDED_LISTED_DAYS. A session found past its organization's limits is ended here (as a use of it
 * would), so the list never shows as open a session that would not verify.
 */
export async function listUserSessions(
  organization_id: string,
  user_id: string,
  page: number,
  limit: number,
): Promise<{ sessions: ListedSession[]; total: number }> {
  const since = new Date(Date.now() - ENDED_LISTED_DAYS * 86_400_000);
  const { sessions, total } = await userSessionsPage(organization_id, user_id, since, (page - 1) * limit, limit);
  return { sessions: await listed(organization_id, sessions), total };
}

async function listed(organization_id: string, sessions: SessionDoc[]): Promise<ListedSession[]> {
  const policy = await policyOf(organization_id);
  const ends = await endsOf(sessions.map((s) => s.session_id));
  const now = Date.now();
  const out: ListedSession[] = [];
  for (const s of sessions) {
    let end = ends.get(s.session_id);
    const past = end ? undefined : pastLimit(s, policy, now);
    if (past) {
      await recordEnds([s.session_id], past.at, past.reason);
      end = (await endsOf([s.session_id])).get(s.session_id);
    }
    const by = end ? undefined : endsBy(s, policy);
    out.push({
      session_id: s.session_id,
      status: end ? 'ended' : s.status,
      source: s.source,
      created_at: s.created_at.toISOString(),
      last_activity: s.last_activity.toISOString(),
      ended_at: end ? end.ended_at.toISOString() : null,
      end_reason: end ? (end.reason ?? 'ended') : null,
      ends_at: by ? by.at.toISOString() : null,
    });
  }
  return out;
}

/**
 * Ends one session of the organization (of `user_id` when given: a basic key's own); another's, or
 * an unknown one, is 404 and nothing changes. Ending an ended session answers it as it is.
 */
export async function endSession(
  organization_id: string,
  session_id: string,
  user_id?: string,
): Promise<{ session: ListedSession; already_ended: boolean }> {
  const doc = await sessionDoc(organization_id, session_id, user_id);
  if (!doc) throw notFound(`Session not found: ${session_id}`);
  const now = new Date();
  const first = await recordEnd(session_id, now, 'ended');
  if (first) await updateSession(session_id, { status: 'ended', ended_at: now }, false);
  else await restoreEnded(session_id);
  const fresh = (await sessionDoc(organization_id, session_id))!;
  const [session] = await listed(organization_id, [fresh]);
  return { session, already_ended: !first };
}

/**
 * Ends every session of the user but `current_session_id` (the caller's own, which must be the
 * user's and open: 404 otherwise, 409 when it has ended, and then nothing changes).
 */
export async function endOtherSessions(
  organization_id: string,
  user_id: string,
  current_session_id: string,
): Promise<{ current_session_id: string; ended: number }> {
  const current = await sessionDoc(organization_id, current_session_id, user_id);
  if (!current) throw notFound(`Session not found: ${current_session_id}`);
  const ended = await endedAmong([current_session_id]);
  if (current.status === 'ended' || ended.size)
    throw new PlatformError('conflict', `The current session has ended: ${current_session_id}`);
  const others = (await openSessionIds(organization_id, user_id)).filter((id) => id !== current_session_id);
  const already = await endedAmong(others);
  const ending = others.filter((id) => !already.has(id));
  for (let i = 0; i < ending.length; i += 500) await recordEnds(ending.slice(i, i + 500), new Date(), 'ended');
  for (const id of already) await restoreEnded(id);
  return { current_session_id, ended: ending.length };
}
