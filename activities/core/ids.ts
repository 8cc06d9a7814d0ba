import { randomBytes } from 'node:crypto';

// Random bytes are drawn 4 KiB at a time: one randomBytes call per id was 4-5% of a cached key
// check's CPU (a request makes several ids: its own, an entry's, an audit intent's).
const POOL = 4096;
let pool = randomBytes(POOL);
let used = 0;

/** `n` fresh random bytes (n <= 64) as the chosen text encoding. */
export function randomText(n: number, encoding: 'hex' | 'base64url'): string {
  if (used + n > POOL) {
    pool = randomBytes(POOL);
    used = 0;
  }
  used += n;
  return pool.toString(encoding, used - n, used);
}

/** Prefixed random ids: `usr_…`, `ses_…`, `conv_…`; 96 bits of randomness, URL-safe. */
export function newId(prefix: string, bytes = 12): string {
  return `${prefix}_${randomText(bytes, 'base64url')}`;
}
