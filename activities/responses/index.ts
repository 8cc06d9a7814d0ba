/** The responses component's surface: what the edge, the workflows and other components may use. */
export { deleteConversationResponses, listNormalizedResponses, purgeNormalizedResponses, storeNormalizedResponse } from './normalized';
export { userResponses } from './store';
export { responsesUserData } from './user-data';
