import { ApplicationFailure } from '@temporalio/common';

/** PlatformErrors cross Temporal as ApplicationFailures of this type (see workers/activity-wrapper). */
export const PLATFORM_FAILURE_TYPE = 'PlatformError';

/**
 * True when a step failed because of the client's input (no point retrying or compensating
 * twice). Walks the cause chain: activity and local-activity failures wrap the application
 * failure differently.
 */
export function isClientFailure(err: unknown): boolean {
  let cur: unknown = err;
  for (let depth = 0; cur && depth < 6; depth += 1) {
    if (cur instanceof ApplicationFailure && cur.type === PLATFORM_FAILURE_TYPE) return true;
    cur = (cur as { cause?: unknown }).cause;
  }
  return false;
}
