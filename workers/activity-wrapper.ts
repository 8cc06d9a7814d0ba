import { ApplicationFailure } from '@temporalio/common';
import { PlatformError } from '../activities/errors';
import { PLATFORM_FAILURE_TYPE } from '../workflows/failures';

type AnyFn = (...args: never[]) => Promise<unknown>;

/**
 * Wraps activity functions so a PlatformError becomes an ApplicationFailure the edge can map back:
 * client errors (4xx) are non-retryable, server-side ones keep Temporal's retries.
 */
export function wrapActivities<T extends Record<string, AnyFn>>(activities: T): T {
  const wrapped: Record<string, AnyFn> = {};
  for (const [name, fn] of Object.entries(activities)) {
    wrapped[name] = async (...args: never[]) => {
      try {
        return await fn(...args);
      } catch (err) {
        if (err instanceof PlatformError) {
          throw ApplicationFailure.create({
            type: PLATFORM_FAILURE_TYPE,
            message: err.message,
            nonRetryable: err.status < 500,
            details: [{ status: err.status, field: err.field ?? null }],
          });
        }
        throw err;
      }
    };
  }
  return wrapped as T;
}
