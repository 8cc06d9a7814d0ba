import { ApplicationFailure } from '@temporalio/common';

import type { ErrorKind } from '../activities/core/errors.ts';

/** PlatformErrors cross Temporal as ApplicationFailures of this type (see workers/activity-wrapper). */
export const PLATFORM_FAILURE_TYPE = 'PlatformError';

/** The HTTP status a PlatformError failure carries in its details (absent: not a PlatformError). */
function platformStatus(failure: ApplicationFailure): number | undefined {
  if (failure.type !== PLATFORM_FAILURE_TYPE) return undefined;
  const status = (failure.details?.[0] as { status?: unknown } | undefined)?.status;
  return typeof status === 'number' ? status : undefined;
}

/**
 * True when a step failed because of the client's input (a 4xx): no point retrying, and what the
 * client sent may be dropped. A server-side failure (5xx, or any other error) is not the client's
 * doing: what it sent is kept. Walks the cause chain: activity and local-activity failures wrap
 * the application failure differently.
 */
export function isClientFailure(err: unknown): boolean {
  let cur: unknown = err;
  for (let depth = 0; cur && depth < 6; depth += 1) {
    if (cur instanceof ApplicationFailure && cur.type === PLATFORM_FAILURE_TYPE) {
      const status = platformStatus(cur);
      return status !== undefined && status >= 400 && status < 500;
    }
    cur = (cur as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * True when a step asks the client to send its request again later: busy, with a Retry-After
 * (the PDF reader is full). What the client sent need not be kept: its retry sends it anew.
 */
export function asksToResend(err: unknown): boolean {
  let cur: unknown = err;
  for (let depth = 0; cur && depth < 6; depth += 1) {
    if (cur instanceof ApplicationFailure && cur.type === PLATFORM_FAILURE_TYPE) {
      const info = cur.details?.[0] as { status?: number; headers?: Record<string, string> | null } | undefined;
      return info?.status === 503 && Boolean(info.headers?.['Retry-After']);
    }
    cur = (cur as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * The refusals a workflow raises itself, as the worker's wrapper would carry a PlatformError of
 * that kind (details `{status, field}`, the format recorded histories hold): workflow code names the
 * kind; this is the one place on the workflow side that knows its status.
 */
const REFUSAL_STATUS = { malformed: 400, conflict: 409 } as const satisfies Partial<Record<ErrorKind, number>>;

export function refusal(kind: keyof typeof REFUSAL_STATUS, message: string, field?: string): ApplicationFailure {
  const details = field === undefined ? { status: REFUSAL_STATUS[kind] } : { status: REFUSAL_STATUS[kind], field };
  return ApplicationFailure.create({ type: PLATFORM_FAILURE_TYPE, message, nonRetryable: true, details: [details] });
}
