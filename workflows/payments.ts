import { proxyActivities } from '@temporalio/workflow';
import type * as activities from '../activities/workflow-activities';
import type { PaymentEventInput } from '../activities/billing/billing';
import { PLATFORM_FAILURE_TYPE } from './failures';

const { applyPaymentEvent } = proxyActivities<typeof activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 s', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 20, nonRetryableErrorTypes: [PLATFORM_FAILURE_TYPE] },
});

/** `payment:<event id>`: one run per provider event; the activity is idempotent beyond Temporal's retention too. */
export async function paymentEventWorkflow(event: PaymentEventInput) {
  return applyPaymentEvent(event);
}
