import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';

import { PlatformError } from '../activities/core/errors.ts';
import { PLATFORM_FAILURE_TYPE } from '../workflows/failures.ts';

type AnyFn = (...args: never[]) => Promise<unknown>;

/**
 * Heartbeats are recorded this often while an activity runs (the SDK sends them to Temporal at
 * most every 80% of the heartbeat timeout), so an activity of a killed worker times out after its
 * heartbeat timeout (workflow-interceptors.ts) instead of its whole startToCloseTimeout.
 */
const HEARTBEAT_EVERY_MS = 1000;

function heartbeating(): NodeJS.Timeout | undefined {
  let ctx: Context;
  try {
    ctx = Context.current();
  } catch {
    return undefined; // called outside a worker
  }
  if (ctx.info.isLocal) return undefined;
  const timer = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
  timer.unref();
  return timer;
}

/**
 * Wraps activity functions so a PlatformError becomes an ApplicationFailure the edge can map back:
 * the client's doing (a 4xx kind) is non-retryable, a server-side one keeps Temporal's retries.
 * The failure carries the kind's HTTP status (PlatformError.status, the one table in
 * activities/core/errors.ts) in its details, `{status, field, headers}`: the format every
 * recorded history holds, read by workflows/failures.ts and the runs room (workers/runs/failures.ts).
 */
export function wrapActivities<T extends Record<string, AnyFn>>(activities: T): T {
  const wrapped: Record<string, AnyFn> = {};
  for (const [name, fn] of Object.entries(activities)) {
    wrapped[name] = async (...args: never[]) => {
      const beat = heartbeating();
      try {
        return await fn(...args);
      } catch (err) {
        if (err instanceof PlatformError) {
          throw ApplicationFailure.create({
            type: PLATFORM_FAILURE_TYPE,
            message: err.message,
            nonRetryable: err.byClient,
            // headers such as Retry-After travel too, so a 429/503 raised in a workflow still says when to retry
            details: [{ status: err.status, field: err.field ?? null, headers: err.headers ?? null }],
          });
        }
        throw err;
      } finally {
        clearInterval(beat);
      }
    };
  }
  return wrapped as T;
}
