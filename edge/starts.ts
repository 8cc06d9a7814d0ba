/**
 * Workflow starts that components need but cannot make themselves (they hold no Temporal client):
 * the composition root hands these in (workers/root.ts), loaded on first use so processes that
 * never call them never load the edge's client.
 */
import type { StartAnalysis } from '../activities/feedback';
import { feedbackAnalysisWorkflow } from '../workflows/feedback';
import { platformSearchAttributes } from '../workflows/search-attributes';
import { taskQueue, temporal } from './temporal';

/** `feedback-analysis:<id>`: analyses a stored feedback in the background. */
export const startFeedbackAnalysis: StartAnalysis = async ({ feedback_id, organization_id, user_id }) => {
  const client = await temporal();
  await client.workflow.start(feedbackAnalysisWorkflow, {
    taskQueue: taskQueue(),
    workflowId: `feedback-analysis:${feedback_id}`,
    args: [{ feedback_id }],
    typedSearchAttributes: platformSearchAttributes(organization_id, user_id, 'feedback'),
  });
};
