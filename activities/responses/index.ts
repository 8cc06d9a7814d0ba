/** The responses component's surface: what the edge, the workflows and other components may use. */
export {
  deleteConversationResponses,
  listNormalizedResponses,
  purgeNormalizedResponses,
  storeNormalizedResponse,
} from './normalized.ts';
export { userResponses } from './store.ts';
export { responsesUserData } from './user-data.ts';
