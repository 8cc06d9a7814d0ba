/**
 * What the edge needs to know of a failed run, read from Temporal's failures here, in the runs
 * room, so the edge imports no Temporal package: whether an error is a run's failure at all, the
 * PlatformError a step raised (the activity wrapper's ApplicationFailure, found along the cause
 * chain), and whether the run was refused (the client's doing) rather than failed.
 */
import { WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure, TemporalFailure } from '@temporalio/common';

import { PlatformError } from '../../activities/core/errors.ts';
import { PLATFORM_FAILURE_TYPE } from '../../workflows/failures.ts';

/** A run's failure, an Update's, or a Temporal failure itself. */
export function isWorkflowFailure(err: unknown): boolean {
  return (
    err instanceof WorkflowFailedError || err instanceof WorkflowUpdateFailedError || err instanceof TemporalFailure
  );
}

/** The platform's failures along the cause chain, outermost first. */
function* platformFailures(err: unknown): Generator<ApplicationFailure> {
  let cur: unknown = err;
  for (let depth = 0; cur && depth < 8; depth += 1) {
    if (cur instanceof ApplicationFailure && cur.type === PLATFORM_FAILURE_TYPE) yield cur;
    cur = (cur as { cause?: unknown }).cause;
  }
}

/**
 * The PlatformError a step of the run raised, if any: its details hold `{status, field, headers}`
 * (workers/activity-wrapper.ts, and every history recorded so far); no status: a server error.
 */
export function platformFailureOf(err: unknown): PlatformError | undefined {
  for (const failure of platformFailures(err)) {
    const info = (failure.details?.[0] ?? {}) as {
      status?: number;
      field?: string | null;
      headers?: Record<string, string> | null;
    };
    return new PlatformError(info.status ?? 500, failure.message, info.field ?? undefined, info.headers ?? undefined);
  }
  return undefined;
}

/** The run was refused (a non-retryable platform failure: the client's input), not failed. */
export function isRefusedRun(err: unknown): boolean {
  for (const failure of platformFailures(err)) if (failure.nonRetryable) return true;
  return false;
}
