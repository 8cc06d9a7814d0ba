import type { RetryPolicy } from '@temporalio/common';

/**
 * The retry presets of every workflow's activities, in one place. None of them lists
 * `nonRetryableErrorTypes`: the activity wrapper (workers/activity-wrapper.ts) marks a client
 * error (4xx) non-retryable on the failure itself, so a server-side error (5xx: a busy ledger, a
 * provider's outage) keeps the preset's retries while a refusal is never retried.
 */

/** A step the caller waits for over HTTP: a few quick attempts, then the caller gets the error. */
export const INTERACTIVE: RetryPolicy = {
  initialInterval: '500 ms',
  backoffCoefficient: 2,
  maximumInterval: '10 s',
  maximumAttempts: 8,
};

/** A step nobody waits for over HTTP: keep trying for several minutes before giving up. */
export const BACKGROUND: RetryPolicy = {
  initialInterval: '1 s',
  backoffCoefficient: 2,
  maximumInterval: '1 minute',
  maximumAttempts: 20,
};

/** A step that must not run twice (metered, or bounded by its own budget). */
export const ONCE: RetryPolicy = { maximumAttempts: 1 };

/** A step that must finish however long the store is away (an erasure): backs off to 5 minutes, never gives up. */
export const PERSISTENT: RetryPolicy = { initialInterval: '1 s', backoffCoefficient: 2, maximumInterval: '5 minutes' };
