/**
 * Errors a client can cause, and the platform's own refusals. A component names what went wrong,
 * a kind (`not_found`, `invalid`, `busy`, ...), never an HTTP status: the edge maps a kind to its
 * status and the component's error shape in one place (edge/errors.ts), and the worker turns it
 * into a Temporal failure that travels through a workflow unchanged (workers/activity-wrapper.ts),
 * non-retryable when it is the client's doing. One kind, one answer, wherever it is raised.
 */
export type ErrorKind =
  /** the request cannot be read: a malformed body or parameter, an unsupported file type, a bad signature */
  | 'malformed'
  /** a field's value is refused (its message starts with the field) */
  | 'invalid'
  | 'unauthenticated'
  /** not enough tokens, a declined payment */
  | 'payment_required'
  | 'forbidden'
  | 'not_found'
  /** the state of what is named forbids it: already used, ended, a limit reached */
  | 'conflict'
  /** it existed and has expired */
  | 'gone'
  | 'too_large'
  /** the body is not of the media type the route reads */
  | 'unsupported_media'
  /** too many requests from this caller: come back after Retry-After */
  | 'rate_limited'
  /** a broken invariant: a record missing that was just written */
  | 'internal'
  /** the deployment lacks a setting this needs (an engine, a provider's credentials, a key file) */
  | 'misconfigured'
  /** an optional provider this deployment has not set up: nothing of it can be done here (payments) */
  | 'not_configured'
  | 'not_implemented'
  /** a provider (model, transcription, gift provider) failed or none could answer */
  | 'upstream_failed'
  | 'upstream_timed_out'
  /** contention: the resource is held by another request; try again shortly */
  | 'busy'
  /** the platform cannot do it now (a dependency down, a budget exceeded); try again later */
  | 'unavailable';

/**
 * The one table of HTTP statuses. Read by the edge's error mapper and the worker's activity
 * wrapper (through `PlatformError.status`); components name kinds only.
 */
const STATUS_OF_KIND: Record<ErrorKind, number> = {
  malformed: 400,
  invalid: 422,
  unauthenticated: 401,
  payment_required: 402,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  gone: 410,
  too_large: 413,
  unsupported_media: 415,
  rate_limited: 429,
  internal: 500,
  misconfigured: 500,
  not_implemented: 501,
  upstream_failed: 502,
  upstream_timed_out: 504,
  // a bare 503 read back from a failure is `unavailable`: the first kind with its status
  unavailable: 503,
  busy: 503,
  not_configured: 503,
};

/** The kind a bare status stands for (the first kind of the table with that status). */
function kindOfStatus(status: number): ErrorKind {
  const found = (Object.keys(STATUS_OF_KIND) as ErrorKind[]).find((k) => STATUS_OF_KIND[k] === status);
  return found ?? (status >= 400 && status < 500 ? 'malformed' : 'internal');
}

export class PlatformError extends Error {
  readonly kind: ErrorKind;

  /**
   * `kind` names what went wrong. A status number is read only where one arrives from outside
   * the platform's code: a failure's details, a recorded refusal (and tests); it becomes the kind
   * of that status (an unknown 4xx `malformed`, anything else `internal`).
   */
  constructor(
    kind: ErrorKind | number,
    message: string,
    readonly field?: string,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'PlatformError';
    this.kind = typeof kind === 'number' ? kindOfStatus(kind) : kind;
  }

  /** The HTTP status of the kind: for the edge's mapper and the worker's wrapper. */
  get status(): number {
    return STATUS_OF_KIND[this.kind];
  }

  /** The client's doing (a 4xx): not worth retrying. Anything else is the platform's side. */
  get byClient(): boolean {
    return this.status < 500;
  }
}

export const unauthorized = () => new PlatformError('unauthenticated', 'Not authenticated');
export const forbidden = (message: string) => new PlatformError('forbidden', message);
export const notFound = (message: string) => new PlatformError('not_found', message);
export const conflict = (message: string) => new PlatformError('conflict', message);
export const tooLarge = (message: string) => new PlatformError('too_large', message);
export const invalid = (field: string, message: string) => new PlatformError('invalid', `${field}: ${message}`, field);
/** `Retry-After` tells the caller when to come back. */
export const rateLimited = (message: string, retryAfterSeconds: number) =>
  new PlatformError('rate_limited', message, undefined, { 'Retry-After': String(retryAfterSeconds) });
/** Held by another request: `Retry-After` (seconds) when the caller should try again. */
export const busy = (message: string, retryAfterSeconds?: number) =>
  new PlatformError(
    'busy',
    message,
    undefined,
    retryAfterSeconds === undefined ? undefined : { 'Retry-After': String(retryAfterSeconds) },
  );
export const upstreamFailed = (message: string) => new PlatformError('upstream_failed', message);
export const misconfigured = (message: string) => new PlatformError('misconfigured', message);

export function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: number }).code === 11000;
}
