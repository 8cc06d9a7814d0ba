/** Feedback values the edge validates against, kept apart from the schema so it imports no model. */
export const FEEDBACK_TYPES = ['general', 'bug', 'feature_request', 'complaint', 'praise'] as const;
export type FeedbackType = (typeof FEEDBACK_TYPES)[number];
