import { continueAsNew, patched, proxyActivities, sleep } from '@temporalio/workflow';

import type * as activities from '../activities/workflow-activities.ts';
import { PERSISTENT } from './retry.ts';

const { beginUserErasure, eraseUserPart, finishUserErasure, stopUserRuns, purgeUserRuns, takeErasurePlace } =
  proxyActivities<typeof activities>({
    startToCloseTimeout: '10 minutes',
    retry: PERSISTENT,
  });

const PATCH_PLACES = 'erasure-places';
/** About 50 minutes of waiting per run, some 2,000 history events. */
const ASKS_PER_RUN = 200;

export interface UserErasureInput {
  /** the erasure's record, `<organization_id>:<user_id>`: no personal data in the run's input */
  key: string;
}

/**
 * `user-erasure:<organization_id>:<user_id>` (docs/privacy.md). Every step is idempotent, so a
 * worker killed anywhere resumes here and finishes once: identity's first end (user gone for every
 * reader, keys revoked), the user's other runs stopped, a place among the organization's erasures
 * that delete at once, every component's part twice (the second
 * pass takes what a run in flight wrote during the first), the user's ended runs deleted from
 * Temporal (their inputs held the user's data), then identity's last end and `user.erased`.
 */
export async function userErasureWorkflow(input: UserErasureInput): Promise<void> {
  const { parts } = await beginUserErasure(input.key);
  if (!parts.length) return;
  await stopUserRuns(input.key);
  // The heavy part waits for one of the organization's places (runs started before places existed
  // replay without asking). The user is already gone for every reader, keys revoked.
  // Every waiter asks as often (no backoff that would let a newcomer overtake), and a long wait goes
  // on in a fresh run (continue-as-new) so its history stays small: every step before is idempotent.
  if (patched(PATCH_PLACES)) {
    for (let asked = 1; !(await takeErasurePlace(input.key)); asked += 1) {
      if (asked >= ASKS_PER_RUN) await continueAsNew<typeof userErasureWorkflow>(input);
      await sleep('15 seconds');
    }
  }
  for (const pass of [1, 2]) {
    for (const part of parts) await eraseUserPart({ key: input.key, part, pass });
  }
  await purgeUserRuns(input.key);
  await finishUserErasure(input.key);
}
