/**
 * What a record's `changes` may hold: the request's fields, with anything secret-like replaced by
 * `***` (by the field's name at any depth, and values that look like keys or secrets), long texts
 * (base64 uploads) shortened to their length, and long arrays cut.
 */
import { MASK, PERSONAL } from './constants.ts';

const SECRET_WORDS = new Set(['key', 'keys', 'secret', 'secrets', 'token', 'password', 'passwd', 'passphrase', 'pin', 'card', 'cvc', 'cvv', 'authorization', 'credential', 'credentials', 'apikey']);
// Values that are keys whatever their field is called: platform keys, webhook and provider secrets, bearer tokens.
const SECRET_VALUE = /^(pk_|sk[-_]|rk_|whsec_|bearer\s)/i;
// A person's contact details and name: kept out of the trail, which is not erased with the person.
const PERSONAL_FIELDS = new Set(['idp_id', 'email', 'phone', 'phone_number', 'display_name', 'account_reference', 'recipient', 'to_email']);
const MAX_TEXT = 500;
const MAX_ITEMS = 50;
const MAX_DEPTH = 8;

/** Whether a field's name says its value is secret (`api_key`, `grace_token`, `pinCode`, `card`; not `tokens`, not `key_id`). */
export function isSecretName(name: string): boolean {
  const parts = name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
  if (parts.length > 1 && parts[parts.length - 1] === 'id') return false; // an id names a thing, it opens nothing
  return parts.some((p) => SECRET_WORDS.has(p));
}

/** `value` with every secret-like part masked (objects and arrays copied, never changed in place). */
export function masked(value: unknown, depth = 0): unknown {
  if (value === null || value === undefined || typeof value === 'number' || typeof value === 'boolean') return value ?? null;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'string') {
    if (SECRET_VALUE.test(value.trim())) return MASK;
    const t = value.trim();
    // JSON text (a configuration sent as a string) is masked inside.
    if ((t.startsWith('{') || t.startsWith('[')) && depth < MAX_DEPTH) {
      try {
        return masked(JSON.parse(t), depth + 1);
      } catch {
        /* plain text */
      }
    }
    return value.length > MAX_TEXT ? `<${value.length} characters>` : value;
  }
  if (depth >= MAX_DEPTH) return '<nested>';
  if (Array.isArray(value)) {
    const items = value.slice(0, MAX_ITEMS).map((v) => masked(v, depth + 1));
    return value.length > MAX_ITEMS ? [...items, `<${value.length - MAX_ITEMS} more>`] : items;
  }
  if (Buffer.isBuffer(value)) return `<${value.length} bytes>`;
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) if (v !== undefined) out[k] = isSecretName(k) ? MASK : PERSONAL_FIELDS.has(k) ? PERSONAL : masked(v, depth + 1);
    return out;
  }
  return String(value);
}

export type Changes = Record<string, { from?: unknown; to?: unknown }>;

/** A request body's fields as changes (`{to}`), masked; the body's organization_id is the record's own field. */
export function bodyChanges(body: unknown): Changes {
  const out: Changes = {};
  if (!body || typeof body !== 'object' || Array.isArray(body)) return out;
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
    if (v === undefined || k === 'organization_id') continue;
    out[k] = { to: isSecretName(k) ? MASK : PERSONAL_FIELDS.has(k) ? PERSONAL : masked(v) };
  }
  return out;
}

/** Noted changes (from and to known), masked the same way, over the body's. */
export function mergeChanges(fromBody: Changes, noted: Changes): Changes {
  const out: Changes = { ...fromBody };
  for (const [k, c] of Object.entries(noted)) {
    const secret = isSecretName(k);
    const m = (v: unknown) => (secret ? MASK : PERSONAL_FIELDS.has(k) ? PERSONAL : masked(v));
    out[k] = 'from' in c ? { from: m(c.from), to: m(c.to) } : { to: m(c.to) };
  }
  return out;
}
