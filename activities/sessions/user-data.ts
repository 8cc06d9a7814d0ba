/**
 * Sessions' part of a user's export and erasure (docs/privacy.md): the user's sessions (with
 * whether each ended) and conversations are exported, and deleted on erasure. An erased user's
 * keys are revoked before this runs, so no new session can start for them.
 */
import type { UserData } from '../core/user-data.ts';
import { deleteUserSessions, userSessionData } from './store.ts';

const iso = (d: Date | undefined) => (d ? new Date(d).toISOString() : null);

export const sessionsUserData: UserData = {
  async export({ organization_id, user_id }) {
    const { sessions, conversations, ended } = await userSessionData(organization_id, user_id);
    return {
      data: {
        sessions: sessions.map((s) => ({
          session_id: s.session_id,
          status: ended.has(s.session_id) ? 'ended' : s.status,
          source: s.source,
          last_activity: iso(s.last_activity),
          created_at: iso(s.created_at),
        })),
        conversations: conversations.map((c) => ({
          conversation_id: c.conversation_id,
          session_id: c.session_id,
          created_at: iso(c.created_at),
        })),
      },
      files: [],
    };
  },
  async erase({ organization_id, user_id }) {
    const { sessions, conversations } = await deleteUserSessions(organization_id, user_id);
    return { sessions_deleted: sessions, conversations_deleted: conversations };
  },
};
