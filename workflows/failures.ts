import { ActivityFailure, ApplicationFailure } from '@temporalio/common';

/** PlatformErrors cross Temporal as ApplicationFailures of this type (see workers/activity-wrapper). */
export const PLATFORM_FAILURE_TYPE = 'PlatformError';

/** True when an activity failed because of the client's input (no point retrying or compensating twice). */
export function isClientFailure(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === PLATFORM_FAILURE_TYPE;
}
