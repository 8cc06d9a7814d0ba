/** The sessions component's surface: what the edge, the workflows and other components may use. */
export { getSessionPolicy, setSessionPolicy } from './policy.ts';
export {
  deleteConversation,
  endOtherSessions,
  endSession,
  getSession,
  initializeSession,
  listUserSessions,
  newConversation,
  setSessionStatus,
  verifySession,
} from './sessions.ts';
export { sessionsUserData } from './user-data.ts';
