import { proxyActivities } from '@temporalio/workflow';
import type * as activities from '../activities/workflow-activities';
import { PLATFORM_FAILURE_TYPE } from './failures';

const { analyseFeedback } = proxyActivities<typeof activities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 s', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 20, nonRetryableErrorTypes: [PLATFORM_FAILURE_TYPE] },
});

/** `feedback-analysis:<feedback id>`: sentiment and categories, written to the feedback record. */
export async function feedbackAnalysisWorkflow(input: { feedback_id: string }) {
  return analyseFeedback(input.feedback_id);
}
