/**
 * Errors a client can cause. Activities throw these; the edge maps them to the component's error
 * shape in one place, and the worker turns them into non-retryable Temporal failures so they
 * travel through a workflow unchanged.
 */
export class PlatformError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field?: string,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'PlatformError';
  }
}

export const unauthorized = () => new PlatformError(401, 'Not authenticated');
export const forbidden = (message: string) => new PlatformError(403, message);
export const notFound = (message: string) => new PlatformError(404, message);
export const conflict = (message: string) => new PlatformError(409, message);
export const tooLarge = (message: string) => new PlatformError(413, message);
export const invalid = (field: string, message: string) => new PlatformError(422, `${field}: ${message}`, field);

export function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: number }).code === 11000;
}
