/** The support component's surface: what the edge, the workflows and other components may use. */
export { transcribeStoredAudio } from './audio.ts';
export { changeCurated, createCurated, deleteCurated, listCurated, MAX_CURATED } from './curated.ts';
export { claimHandoffFor, closeHandoffFor, listHandoffs, MAX_HANDOFF_REPLIES, replyToHandoff } from './handoffs.ts';
export { supportTask } from './scheduled.ts';
export type { SupportAnswer } from './support.ts';
export {
  answerQuestion,
  createArticle,
  deleteArticle,
  judgedTarget,
  listArticles,
  requireConversation,
} from './support.ts';
export { supportUserData } from './user-data.ts';
