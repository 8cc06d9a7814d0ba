/** The support component's surface: what the edge, the workflows and other components may use. */
export { transcribeStoredAudio } from './audio.ts';
export { supportTask } from './scheduled.ts';
export type { SupportAnswer } from './support.ts';
export { answerQuestion, createArticle, deleteArticle, listArticles, requireConversation } from './support.ts';
export { supportUserData } from './user-data.ts';
