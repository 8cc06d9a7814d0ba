/** The feedback component's surface: what the edge, the workflows and other components may use. */
export type { StartAnalysis } from './feedback.ts';
export { analyseFeedback, configureFeedback, feedbackStats, submitFeedback } from './feedback.ts';
export { feedbackTask } from './scheduled.ts';
export { feedbackUserData } from './user-data.ts';
