/** The feedback component's surface: what the edge, the workflows and other components may use. */
export { analyseFeedback, dropFeedback, feedbackStats, storeFeedback } from './feedback';
export { feedbackTask } from './scheduled';
