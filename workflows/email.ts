import { proxyActivities } from '@temporalio/workflow';
import type * as activities from '../activities/workflow-activities';
import type { EmailRequest, SentEmail } from '../activities/email/email';

const { composeEmail } = proxyActivities<typeof activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 s', backoffCoefficient: 2, maximumAttempts: 5, nonRetryableErrorTypes: ['PlatformError'] },
});
// A mail server that is down or refusing for a while is retried for about ten minutes.
const { sendEmail } = proxyActivities<typeof activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '2 s', backoffCoefficient: 2, maximumInterval: '2 minutes', maximumAttempts: 10, nonRetryableErrorTypes: ['PlatformError'] },
});

/** `email:<org>:<key hash>`: compose, then send once for the idempotency key. */
export async function emailWorkflow(req: EmailRequest): Promise<SentEmail> {
  const content = await composeEmail(req);
  return sendEmail({ req, content });
}
