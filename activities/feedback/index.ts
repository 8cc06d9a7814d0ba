/** The feedback component's surface: what the edge, the workflows and other components may use. */
export { analyseFeedback, configureFeedback, feedbackStats, submitFeedback } from './feedback';
export type { StartAnalysis } from './feedback';
export { feedbackTask } from './scheduled';
export { feedbackUserData } from './user-data';
