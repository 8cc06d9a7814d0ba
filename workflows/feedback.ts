import { proxyActivities } from '@temporalio/workflow';

import type * as activities from '../activities/workflow-activities.ts';
import { BACKGROUND } from './retry.ts';

const { analyseFeedback } = proxyActivities<typeof activities>({ startToCloseTimeout: '2 minutes', retry: BACKGROUND });

/** `feedback-analysis:<feedback id>`: sentiment and categories, written to the feedback record. */
export async function feedbackAnalysisWorkflow(input: { feedback_id: string }) {
  return analyseFeedback(input.feedback_id);
}
