import { patched, proxyActivities } from '@temporalio/workflow';

import type { ExpiryRun, TierReview } from '../activities/loyalty/index.ts';
import type * as activities from '../activities/workflow-activities.ts';
import { BACKGROUND } from './retry.ts';

// One run may write many expiry entries; a retry writes none twice (each is one ledger operation).
const { expireLapsedPoints, reviewTiers } = proxyActivities<typeof activities>({
  startToCloseTimeout: '1 hour',
  retry: BACKGROUND,
});

/**
 * Run daily by the Schedule `loyalty:maintenance:<task queue>`: writes the `expiry` entries of
 * the credits that lapsed since the previous run, then re-qualifies the members whose tier's
 * validity ended (only those: the review reads the members due, never the whole membership).
 * Balances never count lapsed points even before this run: it brings the ledger's balance in
 * line with them. The review is behind patched('tier-review'), so a run recorded before it
 * replays unchanged.
 */
export async function loyaltyMaintenanceWorkflow(): Promise<ExpiryRun & { tiers?: TierReview }> {
  const expiry = await expireLapsedPoints({});
  if (!patched('tier-review')) return expiry;
  return { ...expiry, tiers: await reviewTiers({}) };
}
