import { randomBytes } from 'node:crypto';

/** Prefixed random ids: `usr_…`, `ses_…`, `conv_…`; 96 bits of randomness, URL-safe. */
export function newId(prefix: string, bytes = 12): string {
  return `${prefix}_${randomBytes(bytes).toString('base64url')}`;
}
