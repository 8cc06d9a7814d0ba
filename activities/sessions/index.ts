/** The sessions component's surface: what the edge, the workflows and other components may use. */
export {
  deleteConversation,
  getSession,
  initializeSession,
  newConversation,
  setSessionStatus,
  verifySession,
} from './sessions.ts';
export { sessionsUserData } from './user-data.ts';
