/** The support component's surface: what the edge, the workflows and other components may use. */
export { transcribeStoredAudio } from './audio';
export { supportTask } from './scheduled';
export { answerQuestion, createArticle, deleteArticle, listArticles, requireConversation } from './support';
export type { SupportAnswer } from './support';
export { supportUserData } from './user-data';
