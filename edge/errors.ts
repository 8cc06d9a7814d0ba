/**
 * The one place where any thrown error becomes an HTTP status and a body in the component's shape:
 * `{detail}` for most components, `{success:false, error}` for gifts and text processing.
 * Components name an error's kind; its status is the kind's (PlatformError.status, the table in
 * activities/core/errors.ts). A run's failure is read by the runs room (workers/runs/failures.ts).
 */
import { z } from 'zod';

import { PlatformError } from '../activities/core/errors.ts';
import { isWorkflowFailure, platformFailureOf } from '../workers/runs/failures.ts';

export type ErrorShape = 'detail' | 'success';

export interface MappedError {
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
}

/** Request-level problems the edge itself detects. */
export class MalformedJson extends Error {}

export function zodToPlatform(err: z.ZodError, where: 'body' | 'query' | 'path' | 'form'): PlatformError {
  const first = err.issues[0];
  const field = first?.path.length ? first.path.join('.') : where;
  const message = first?.message ?? 'invalid input';
  return new PlatformError('invalid', `${field}: ${message}`, field);
}

const STATUS_TEXT: Record<number, string> = { 404: 'Not found', 405: 'Method not allowed' };

/**
 * What a server error tells an end user (a basic key): only what it can act on (wait and retry,
 * or nothing). An unexpected error tells every caller no more than this; provider messages,
 * hosts and stacks stay in the server's log.
 */
const SERVER_TEXT: Record<number, string> = {
  500: 'Internal server error',
  501: 'This function is not available on this platform',
  502: 'An upstream service failed; try again later',
  503: 'Temporarily unavailable; try again later',
  504: 'An upstream service timed out; try again later',
};
const serverErrorText = (status: number) => SERVER_TEXT[status] ?? SERVER_TEXT[500];

/**
 * Who reads the answer: `end_user` (a basic key) gets the fixed text of every server error;
 * `operator` (an admin key, or a route without a key such as the payment provider's webhook) also
 * gets the platform's own wording of a server error it raised on purpose ("transcription engine
 * not configured", "the points ledger is busy"), which names what to fix. Those messages are
 * written for the caller and never carry a provider's or the runtime's text.
 */
export type Audience = 'end_user' | 'operator';

export function mapError(
  err: unknown,
  shape: ErrorShape,
  log: (e: unknown) => void,
  audience: Audience = 'end_user',
): MappedError {
  let status = 500;
  let message = 'Internal server error';
  let headers: Record<string, string> | undefined;
  let written = false; // a PlatformError: its message was written for the caller

  if (err instanceof PlatformError) {
    status = err.status;
    message = err.message;
    headers = err.headers;
    written = true;
  } else if (err instanceof z.ZodError) {
    const p = zodToPlatform(err, 'body');
    status = p.status;
    message = p.message;
  } else if (err instanceof MalformedJson) {
    status = 400;
    message = `Malformed JSON body: ${err.message}`;
  } else if (isWorkflowFailure(err)) {
    const p = platformFailureOf(err);
    if (p) {
      status = p.status;
      message = p.message;
      headers = p.headers;
      written = true;
    }
  } else if (
    typeof err === 'object' &&
    err !== null &&
    'statusCode' in err &&
    typeof (err as { statusCode: unknown }).statusCode === 'number'
  ) {
    // h3's own errors: unmatched route (404), wrong method (405), unreadable body (400)
    status = (err as { statusCode: number }).statusCode;
    message = STATUS_TEXT[status] ?? ((err as { statusMessage?: string }).statusMessage || 'Bad request');
  }

  // A server error says nothing about the server's insides; the log has it all.
  if (status >= 500) {
    log(err);
    if (!written || audience === 'end_user') message = serverErrorText(status);
  }
  // Gifts and text processing answer invalid input with 400, like their other refusals.
  if (shape === 'success' && status === 422) status = 400;
  const body = shape === 'success' ? { success: false, error: message } : { detail: message };
  return { status, body, headers };
}
