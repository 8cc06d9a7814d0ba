import { proxyActivities } from '@temporalio/workflow';

import type { PaymentEventInput } from '../activities/billing/index.ts';
import type * as activities from '../activities/workflow-activities.ts';
import { BACKGROUND } from './retry.ts';

const { applyPaymentEvent } = proxyActivities<typeof activities>({
  startToCloseTimeout: '30 seconds',
  retry: BACKGROUND,
});

/** `payment:<event id>`: one run per provider event; the activity is idempotent beyond Temporal's retention too. */
export async function paymentEventWorkflow(event: PaymentEventInput) {
  return applyPaymentEvent(event);
}
