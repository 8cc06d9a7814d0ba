import { proxyActivities } from '@temporalio/workflow';

import type { ExpiryRun } from '../activities/loyalty/index.ts';
import type * as activities from '../activities/workflow-activities.ts';
import { BACKGROUND } from './retry.ts';

// One run may write many expiry entries; a retry writes none twice (each is one ledger operation).
const { expireLapsedPoints } = proxyActivities<typeof activities>({ startToCloseTimeout: '1 hour', retry: BACKGROUND });

/**
 * Run daily by the Schedule `loyalty:maintenance:<task queue>`: writes the `expiry` entries of
 * the credits that lapsed since the previous run. Balances never count lapsed points even
 * before this run: it brings the ledger's balance in line with them.
 */
export async function loyaltyMaintenanceWorkflow(): Promise<ExpiryRun> {
  return expireLapsedPoints({});
}
