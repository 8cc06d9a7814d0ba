import { proxyActivities } from '@temporalio/workflow';

import type { EmailRequest, SentEmail } from '../activities/email/index.ts';
import type * as activities from '../activities/workflow-activities.ts';
import { BACKGROUND, INTERACTIVE } from './retry.ts';

const { composeEmail } = proxyActivities<typeof activities>({ startToCloseTimeout: '30 seconds', retry: INTERACTIVE });
// A mail server that is down or refusing for a while is retried for about a quarter of an hour.
const { sendEmail } = proxyActivities<typeof activities>({ startToCloseTimeout: '1 minute', retry: BACKGROUND });

/** `email:<org>:<key hash>`: compose, then send once for the idempotency key. */
export async function emailWorkflow(req: EmailRequest): Promise<SentEmail> {
  const content = await composeEmail(req);
  return sendEmail({ req, content });
}
