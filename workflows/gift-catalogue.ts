import { proxyActivities } from '@temporalio/workflow';

import type * as activities from '../activities/workflow-activities.ts';
import { BACKGROUND } from './retry.ts';

// One run reads the provider's catalogue once and applies it to each organization; a retry
// applies it again, which changes nothing already applied (each product is matched by its id).
const { syncScheduledCatalogues } = proxyActivities<typeof activities>({
  startToCloseTimeout: '30 minutes',
  retry: BACKGROUND,
});

/**
 * Run daily by the Schedule `gifts:catalogue:<task queue>`: imports the gift provider's catalogue
 * into every organization whose gift settings ask for the scheduled sync (catalogue_sync.scheduled).
 */
export async function giftCatalogueWorkflow(): Promise<{ organizations: number; failed: number }> {
  return syncScheduledCatalogues();
}
