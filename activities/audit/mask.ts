/**
 * What a record's `changes` may hold. The trail is kept AUDIT_RETENTION_DAYS and is not erased with
 * a person, so by default it keeps no words and no reference a person could be found by:
 *
 * - a user reference (`user_id`, `idp_id`, `user_ref`, `*_internal_id`, … at any depth) reads as
 *   the platform user id it resolves to (`usr_…`, resolved by the edge), or `[unknown user]`;
 * - contact details and names (`email`, `display_name`, `phone_number`, …) read `[personal]`;
 * - anything secret-like reads `***` (by the field's name at any depth, and values that look like
 *   keys or secrets);
 * - a free-text string reads `<text: N characters>`, unless it is known not to be personal: a value
 *   of the field's enum (the route's own schema says so), a platform id (`gft_…`, `usr_…`), a date,
 *   or a field the route declares kept (`keep`: configuration and catalogue fields);
 * - numbers, booleans and nulls are kept; field names are kept; long arrays are cut.
 *
 * A route that declares nothing is thus recorded safely: a new free-text field is a length.
 */
import { MASK, PERSONAL, textLength, UNKNOWN_USER } from './constants.ts';

const SECRET_WORDS = new Set([
  'key',
  'keys',
  'secret',
  'secrets',
  'token',
  'password',
  'passwd',
  'passphrase',
  'pin',
  'card',
  'cvc',
  'cvv',
  'authorization',
  'credential',
  'credentials',
  'apikey',
]);
// Values that are keys whatever their field is called: platform keys, webhook and provider secrets, bearer tokens.
const SECRET_VALUE = /^(pk_|sk[-_]|rk_|whsec_|bearer\s)/i;
// A person's contact details and name.
const PERSONAL_FIELDS = new Set([
  'idp_id',
  'email',
  'phone',
  'phone_number',
  'display_name',
  'account_reference',
  'recipient',
  'to_email',
]);
// Fields that name a user: `user_id`, `idp_id`, `user_ref`, `internal_user_id`, `referred_internal_id`, `caller_user_id`, …
const USER_REFERENCE = /(?:^|_)(?:user_id|user_ref|idp_id|internal_id)$/;
// The platform's generated ids (activities/core/ids.ts prefixes, and the tombstone), kept as they are.
const PLATFORM_ID =
  /^(?:usr|del|key|ses|conv|aui|call|era|evt|exp|fb|gft|hold|kb|op|org|ping|pkg|pte|rdm|ref|scan|srch|turn|txn|txt|use|we|whd|req)_[A-Za-z0-9_-]{6,64}$/;
const PLATFORM_USER = /^(?:usr|del)_[A-Za-z0-9_-]{6,64}$/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;
const MAX_TEXT = 500;
const MAX_ITEMS = 50;
const MAX_DEPTH = 8;

/** Whether a field's name says its value is secret (`api_key`, `grace_token`, `pinCode`, `card`; not `tokens`, not `key_id`). */
function isSecretName(name: string): boolean {
  const parts = name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  if (parts.length > 1 && parts[parts.length - 1] === 'id') return false; // an id names a thing, it opens nothing
  return parts.some((p) => SECRET_WORDS.has(p));
}

/** Whether a field's name says it names a user (its value is resolved to the platform's user id). */
export const isUserReferenceName = (name: string): boolean => USER_REFERENCE.test(name);

/** Whether a string is one of the platform's own ids (`usr_…`, `gft_…`): never a person's words. */
export const isPlatformId = (value: string): boolean => PLATFORM_ID.test(value);

/** Whether a field's name says its value is a person's contact detail or name. */
const isPersonalName = (name: string): boolean => PERSONAL_FIELDS.has(name);

/**
 * `value` with every secret-like part masked (objects and arrays copied, never changed in place),
 * contact details `[personal]` and long texts as their length: what a field a route declares kept
 * is recorded as.
 */
function masked(value: unknown, depth = 0): unknown {
  if (value === null || value === undefined || typeof value === 'number' || typeof value === 'boolean')
    return value ?? null;
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
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (v !== undefined)
        out[k] = isSecretName(k)
          ? MASK
          : isUserReferenceName(k)
            ? recordedUser(v, {})
            : isPersonalName(k)
              ? PERSONAL
              : masked(v, depth + 1);
    }
    return out;
  }
  return String(value);
}

/** A JSON Schema (the route's request schema, as its OpenAPI document shows it). */
export type JsonSchema = Record<string, unknown>;

/** How one route's changes are recorded (the edge builds it from the route's definition). */
export interface ChangePolicy {
  /**
   * Fields recorded as they are (secrets still masked): dotted paths from the body's top
   * (`metadata.template`, `validations.product_id`: arrays are walked through), `*` for every field.
   */
  keep?: readonly string[];
  /** the request body's JSON Schema: a value its enum or const lists is kept */
  schema?: JsonSchema;
  /** user references as the edge resolved them (raw → `usr_…`); one missing reads `[unknown user]` */
  users?: ReadonlyMap<string, string>;
}

const COMBINATIONS = ['anyOf', 'oneOf', 'allOf'] as const;
const asSchema = (s: unknown): JsonSchema | undefined =>
  s && typeof s === 'object' && !Array.isArray(s) ? (s as JsonSchema) : undefined;

/** Whether the schema lists `value` among its enum or const values (in any branch). */
function listed(schema: JsonSchema | undefined, value: unknown): boolean {
  if (!schema) return false;
  if (Array.isArray(schema.enum) && schema.enum.includes(value)) return true;
  if ('const' in schema && schema.const === value) return true;
  return COMBINATIONS.some(
    (c) => Array.isArray(schema[c]) && (schema[c] as unknown[]).some((s) => listed(asSchema(s), value)),
  );
}

/** The schema of a property (or of a map's values), looked up through anyOf/oneOf/allOf. */
function propertySchema(schema: JsonSchema | undefined, key: string): JsonSchema | undefined {
  if (!schema) return undefined;
  const direct = asSchema((schema.properties as Record<string, unknown> | undefined)?.[key]);
  if (direct) return direct;
  for (const c of COMBINATIONS) {
    if (!Array.isArray(schema[c])) continue;
    for (const s of schema[c] as unknown[]) {
      const found = propertySchema(asSchema(s), key);
      if (found) return found;
    }
  }
  return asSchema(schema.additionalProperties);
}

function itemSchema(schema: JsonSchema | undefined): JsonSchema | undefined {
  if (!schema) return undefined;
  const items = asSchema(schema.items);
  if (items) return items;
  for (const c of COMBINATIONS) {
    if (!Array.isArray(schema[c])) continue;
    for (const s of schema[c] as unknown[]) {
      const found = itemSchema(asSchema(s));
      if (found) return found;
    }
  }
  return undefined;
}

const isKept = (policy: ChangePolicy, path: string) =>
  (policy.keep ?? []).some((k) => k === '*' || path === k || path.startsWith(`${k}.`));

/** A user reference as recorded: the platform user id it resolved to, a platform user id as is, else `[unknown user]`. */
export function recordedUser(value: unknown, policy: ChangePolicy, depth = 0): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return policy.users?.get(value) ?? (PLATFORM_USER.test(value) ? value : UNKNOWN_USER);
  if (Array.isArray(value) && depth < MAX_DEPTH)
    return value.slice(0, MAX_ITEMS).map((v) => recordedUser(v, policy, depth + 1));
  return UNKNOWN_USER;
}

/** A value that no route declared kept: numbers, booleans, enum values, platform ids and dates as they are; texts as their length. */
function plain(
  value: unknown,
  path: string,
  schema: JsonSchema | undefined,
  policy: ChangePolicy,
  depth: number,
): unknown {
  if (value === null || value === undefined || typeof value === 'boolean') return value ?? null;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'string') {
    if (SECRET_VALUE.test(value.trim())) return MASK;
    if (listed(schema, value) || isPlatformId(value) || ISO_DATE.test(value)) return value;
    return textLength(value);
  }
  if (Buffer.isBuffer(value)) return `<${value.length} bytes>`;
  if (depth >= MAX_DEPTH) return '<nested>';
  if (Array.isArray(value)) {
    const items = value.slice(0, MAX_ITEMS).map((v) => plain(v, path, itemSchema(schema), policy, depth + 1));
    return value.length > MAX_ITEMS ? [...items, `<${value.length - MAX_ITEMS} more>`] : items;
  }
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (v !== undefined)
        out[k] = field(k, v, path ? `${path}.${k}` : k, propertySchema(schema, k), policy, depth + 1);
    }
    return out;
  }
  return textLength(String(value));
}

/** One field as recorded, by its name first (secret, personal, a user), then as the route declares it. */
function field(
  key: string,
  value: unknown,
  path: string,
  schema: JsonSchema | undefined,
  policy: ChangePolicy,
  depth: number,
): unknown {
  if (isSecretName(key)) return MASK;
  if (isUserReferenceName(key)) return recordedUser(value, policy);
  if (isPersonalName(key)) return PERSONAL;
  if (isKept(policy, path)) return masked(value, depth);
  return plain(value, path, schema, policy, depth);
}

/** A value of the top-level field `key` as recorded under `policy`. */
const recordedField = (key: string, value: unknown, policy: ChangePolicy = {}): unknown =>
  field(key, value, key, propertySchema(policy.schema, key), policy, 0);

export type Changes = Record<string, { from?: unknown; to?: unknown }>;

/** A request body's fields as changes (`{to}`), recorded under the route's policy; the body's organization_id is the record's own field. */
export function bodyChanges(body: unknown, policy: ChangePolicy = {}): Changes {
  const out: Changes = {};
  if (!body || typeof body !== 'object' || Array.isArray(body)) return out;
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
    if (v === undefined || k === 'organization_id') continue;
    out[k] = { to: recordedField(k, v, policy) };
  }
  return out;
}

/** Noted changes (from and to known), recorded the same way as the body's field of that name, over the body's. */
export function mergeChanges(fromBody: Changes, noted: Changes, policy: ChangePolicy = {}): Changes {
  const out: Changes = { ...fromBody };
  for (const [k, c] of Object.entries(noted)) {
    const m = (v: unknown) => recordedField(k, v, policy);
    out[k] = 'from' in c ? { from: m(c.from), to: m(c.to) } : { to: m(c.to) };
  }
  return out;
}
