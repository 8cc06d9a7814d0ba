import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { Cache } from '../core/db/index.ts';
import { isDuplicateKey } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { type Permission, PERMISSIONS, type UserRef } from './constants.ts';
import { flushKeyRequests } from './key-usage.ts';
import { ensureDefaultOrganization } from './organizations.ts';
import { identitySettings } from './settings.ts';
import {
  type ApiKeyDoc,
  type ApiKeyRotationDoc,
  insertKeyDoc,
  keyByHash,
  lastUsedOf,
  rotationOf,
  userRateLimit,
  writeLastUses,
} from './store.ts';
import { resolveOrCreateUser } from './users.ts';

/** What an authenticated request carries through the edge. */
export interface Principal {
  key_id: string;
  user_id: string;
  idp_id: string;
  organization_id: string;
  permissions: Permission[];
  /** 0 basic, 1 admin, 2 system_admin */
  level: number;
  rate_limit_per_minute?: number;
  /** the user's limit, shared by all of the user's keys */
  user_rate_limit_per_minute?: number;
  /** epoch ms from which the key is refused: its own expiry, or the end of its rotation's grace */
  expires_at?: number;
  /** the key's credits (credits.ts) when it has some: each request spends one */
  credits_id?: string;
}

/** Why a presented key is refused; verify_api_key tells no more than this. */
type KeyRefusal = 'not_found' | 'revoked' | 'expired';

export const levelOf = (permissions: readonly string[]): number =>
  Math.max(0, ...permissions.map((p) => PERMISSIONS.indexOf(p as Permission)));

export const hashKey = (key: string): string => createHash('sha256').update(key).digest('hex');

/** `pk_` + 32 random bytes (256 bits) in base64url. */
export const generateSecret = (): string => `pk_${randomBytes(32).toString('base64url')}`;

export const maskKey = (prefix: string): string => `pk_${prefix}…`;

const KEY_SHAPE = /^pk_[A-Za-z0-9_-]{20,200}$/;

/** When a key stops being accepted (epoch ms): its expiry or its rotation's grace; undefined: never. */
export function endOf(
  doc: Pick<ApiKeyDoc, 'expires_at'>,
  rotation?: Pick<ApiKeyRotationDoc, 'grace_until'> | null,
): number | undefined {
  const ends = [doc.expires_at, rotation?.grace_until]
    .filter((d): d is Date => d instanceof Date)
    .map((d) => d.getTime());
  return ends.length ? Math.min(...ends) : undefined;
}

/**
 * Why a key no longer authenticates at `now`, undefined while it does: revoked, expired, or
 * `rotated` past its rotation's grace. The one definition of a usable key: a user's places under
 * MAX_KEYS_PER_USER are held by these (key-management.ts), a scheduled run takes its rights from
 * these (scheduler/rights.ts), and authentication below refuses every other key.
 */
export function unusableBecause(
  doc: Pick<ApiKeyDoc, 'status' | 'expires_at'>,
  rotation: Pick<ApiKeyRotationDoc, 'grace_until'> | null | undefined,
  now: number,
): 'revoked' | 'expired' | 'rotated' | undefined {
  if (doc.status !== 'active') return 'revoked';
  if (doc.expires_at && doc.expires_at.getTime() <= now) return 'expired';
  if (rotation && rotation.grace_until.getTime() <= now) return 'rotated';
  return undefined;
}

export const usable = (
  doc: Pick<ApiKeyDoc, 'status' | 'expires_at'>,
  rotation: Pick<ApiKeyRotationDoc, 'grace_until'> | null | undefined,
  now: number,
): boolean => unusableBecause(doc, rotation, now) === undefined;

function principalOf(
  doc: ApiKeyDoc,
  rotation: ApiKeyRotationDoc | null,
  user_rate_limit_per_minute: number | undefined,
): Principal {
  return {
    key_id: doc.key_id,
    user_id: doc.user_id,
    idp_id: doc.idp_id,
    organization_id: doc.organization_id,
    permissions: doc.permissions,
    level: levelOf(doc.permissions),
    rate_limit_per_minute: doc.rate_limit_per_minute ?? undefined,
    user_rate_limit_per_minute,
    expires_at: endOf(doc, rotation),
    credits_id: doc.credits_id ?? undefined,
  };
}

/**
 * Last uses, kept in memory and written in batches: a key check writes nothing itself. Pending
 * uses (the latest per key) are written in one command USAGE_FLUSH_MS after the first of them, at
 * once when USAGE_BATCH keys are pending, and at shutdown (stopRevocationWatcher). Listing a key
 * (lastUses) sees this process's pending uses at once (those being written too: the database may
 * not have them yet), another process's within USAGE_FLUSH_MS.
 * A failed batch is merged back and retried with the next one.
 */
const USAGE_FLUSH_MS = 1000;
const USAGE_BATCH = 1000;
const USAGE_KEPT_MAX = 100_000;
let pendingUses = new Map<string, Date>();
// Batches taken but not yet written: neither pending nor in the database, still this process's to tell.
const unwritten = new Set<Map<string, Date>>();
let flushTimer: NodeJS.Timeout | undefined;
let flushing: Promise<void> = Promise.resolve();

function noteUse(key_id: string, at: number): void {
  pendingUses.set(key_id, new Date(at));
  if (pendingUses.size >= USAGE_BATCH) void flushKeyUsage();
  else flushTimer ??= setTimeout(() => void flushKeyUsage(), USAGE_FLUSH_MS).unref();
}

/** Writes the pending last uses now (one command); resolves once they are written or put back. */
export function flushKeyUsage(): Promise<void> {
  clearTimeout(flushTimer);
  flushTimer = undefined;
  const batch = pendingUses;
  pendingUses = new Map();
  unwritten.add(batch);
  // One batch at a time, in order: a later batch carries later (or no older) uses.
  flushing = flushing.then(async () => {
    if (!batch.size) return void unwritten.delete(batch);
    try {
      await writeLastUses(batch);
    } catch {
      // The database is unreachable: keep the uses for the next batch, up to a bound (they only inform).
      for (const [key_id, at] of batch)
        if (pendingUses.size < USAGE_KEPT_MAX && !(pendingUses.get(key_id)! >= at)) pendingUses.set(key_id, at);
      flushTimer ??= setTimeout(() => void flushKeyUsage(), USAGE_FLUSH_MS).unref();
    } finally {
      unwritten.delete(batch);
    }
  });
  return flushing;
}

/** When each key was last used: as written, or later by this process and not written yet. */
export async function lastUses(key_ids: string[]): Promise<Map<string, Date>> {
  // Taken before the read: a batch written meanwhile is then in the database or in these.
  const mine = [...unwritten, pendingUses];
  const out = await lastUsedOf(key_ids);
  for (const key_id of key_ids) {
    for (const at of mine.map((m) => m.get(key_id))) if (at && !(out.get(key_id)! >= at)) out.set(key_id, at);
  }
  return out;
}

/**
 * How long a change made by another process (an edge replica) takes to be seen here: a key
 * revoked or rotated there, or its user's shared limit changed there, is refused (or limited) by
 * every process within this time, since a verified key is kept per process, by hash, for no
 * longer. Revocation, rotation and limit changes made by this process drop the entry at once.
 * The cache exists because every request presents a key: re-reading it (three indexed reads:
 * the key, its rotation, its user's limit) once a second per key in use instead of on every
 * request (measured on the embedded server, 5,000 users, busy 2 cores: 11-33 ms uncached, 0.05 ms
 * cached). A key's expiry (its own or its rotation's grace) travels with the entry and is checked
 * on every request.
 */
export const REVOCATION_POLL_MS = 1000;
const keyCache = new Cache<string, Principal>({ max: 100_000, ttlMs: REVOCATION_POLL_MS });

/** Drops this process's cached keys and writes its pending last uses and usage counts (at shutdown, and between tests). */
export async function stopRevocationWatcher(): Promise<void> {
  keyCache.clear();
  reading.clear();
  await Promise.all([flushKeyUsage(), flushKeyRequests()]);
}

/**
 * Hashes refused by the database (unknown, revoked or expired), remembered with the reason for
 * 30 s so a key presented again and again costs one read, not one per request (distinct guesses
 * are limited per address at the edge). None of the reasons ever goes away but `not_found`: a key
 * is never presented before it exists, and issuing one clears its hash here.
 */
const refusedKeys = new Cache<string, KeyRefusal>({ max: 10_000, ttlMs: 30_000 });

function rememberRefused(hash: string, reason: KeyRefusal): KeyRefusal {
  refusedKeys.set(hash, reason);
  return reason;
}

/** Drops a key from this process's caches (revoked or rotated here, or just issued). */
export function forgetKey(hash: string): void {
  keyCache.delete(hash);
  refusedKeys.delete(hash);
  reading.delete(hash); // a read begun before the change caches nothing
}

/** Drops the cached keys of a user whose shared limit changed here. */
export function forgetUserKeys(user_id: string): void {
  keyCache.deleteWhere((p) => p.user_id === user_id);
  reading.clear(); // reads in flight may carry the old limit: they cache nothing
}

/** A cached principal, or `expired` once its time has come. */
function live(hash: string, principal: Principal, now: number): Principal | KeyRefusal {
  if (principal.expires_at === undefined || principal.expires_at > now) return principal;
  keyCache.delete(hash);
  return rememberRefused(hash, 'expired');
}

/** The principal of a key this process has verified recently, without reading the database. */
function cached(secret: string, now: number): Principal | null {
  if (!KEY_SHAPE.test(secret)) return null;
  const hash = hashKey(secret);
  const hit = keyCache.get(hash);
  if (!hit) return null;
  const out = live(hash, hit, now);
  return typeof out === 'string' ? null : out;
}

/**
 * Reads in flight per hash: when a key's entry lapses under load, the requests presenting it at
 * that moment share one read instead of each sending three (50 connections on one key sent ~150
 * reads a second).
 */
const reading = new Map<string, Promise<Principal | KeyRefusal>>();

async function lookup(secret: string): Promise<Principal | KeyRefusal> {
  if (!KEY_SHAPE.test(secret)) return 'not_found';
  const hash = hashKey(secret);
  const now = Date.now();
  const hit = keyCache.get(hash);
  if (hit) return live(hash, hit, now);
  const known = refusedKeys.get(hash);
  if (known) return known;
  let pending = reading.get(hash);
  if (!pending) {
    const mine: Promise<Principal | KeyRefusal> = read(hash, () => reading.get(hash) === mine).finally(() => {
      if (reading.get(hash) === mine) reading.delete(hash);
    });
    pending = mine;
    reading.set(hash, pending);
  }
  return pending;
}

/** Reads a key; `current` is false once forgetKey ran meanwhile, and then nothing is cached. */
async function read(hash: string, current: () => boolean): Promise<Principal | KeyRefusal> {
  const doc = await keyByHash(hash);
  if (!doc || doc.status !== 'active') {
    keyCache.delete(hash);
    const reason = doc ? 'revoked' : 'not_found';
    return current() ? rememberRefused(hash, reason) : reason;
  }
  const [rotation, limit] = await Promise.all([
    rotationOf(doc.key_id),
    userRateLimit(doc.organization_id, doc.user_id),
  ]);
  const principal = principalOf(doc, rotation, limit);
  if (current()) keyCache.set(hash, principal);
  return live(hash, principal, Date.now());
}

/**
 * Authenticates a presented key (see REVOCATION_POLL_MS for how soon a change is seen). With
 * `cachedOnly` only keys this process verified recently are accepted, without any read: the edge
 * answers that way to an address that has failed too often.
 */
export async function authenticateKey(secret: string, opts: { cachedOnly?: boolean } = {}): Promise<Principal | null> {
  const now = Date.now();
  const found = opts.cachedOnly ? cached(secret, now) : await lookup(secret);
  if (!found || typeof found === 'string') return null;
  noteUse(found.key_id, now);
  return found;
}

export type VerifyAnswer =
  | { valid: true; user_id: string; idp_id: string; organization_id: string; permissions: Permission[] }
  | { valid: false; reason: KeyRefusal | 'forbidden' | 'rate_limited' };

/**
 * verify_api_key: a refused key says only why (unknown, revoked, expired); a working key is
 * `forbidden` when it lacks `permission`, `rate_limited` when `spent` says its budget (or its
 * user's) is used up for this minute. Verifying records the key's use but spends no budget.
 */
export async function verifyApiKey(
  secret: string,
  opts: { permission?: Permission; spent?: (p: Principal) => boolean } = {},
): Promise<VerifyAnswer> {
  const found = await lookup(secret);
  if (typeof found === 'string') return { valid: false, reason: found };
  noteUse(found.key_id, Date.now());
  if (opts.permission && PERMISSIONS.indexOf(opts.permission) > found.level)
    return { valid: false, reason: 'forbidden' };
  if (opts.spent?.(found)) return { valid: false, reason: 'rate_limited' };
  return {
    valid: true,
    user_id: found.user_id,
    idp_id: found.idp_id,
    organization_id: found.organization_id,
    permissions: found.permissions,
  };
}

export interface IssuedKey {
  api_key: string;
  key_id: string;
  metadata: {
    created_at: string;
    permissions: Permission[];
    key_id: string;
    user_id: string;
    idp_id: string;
    organization_id: string;
    expires_at: string | null;
  };
}

/** Stores a key; callers decide who may issue it (key-management.ts, the bootstrap below). */
export async function insertKey(
  user: UserRef,
  permissions: Permission[],
  opts: {
    key_id?: string;
    slot?: string;
    created_by?: string;
    rate_limit_per_minute?: number;
    secret?: string;
    expires_at?: Date;
    rotated_from?: string;
    /** a rotation's successor carries these on (rotation.ts) */
    name?: string;
    meta?: Record<string, unknown>;
    credits_id?: string;
  },
): Promise<IssuedKey> {
  const secret = opts.secret ?? generateSecret();
  const hash = hashKey(secret);
  const doc = await insertKeyDoc({
    key_id: opts.key_id ?? newId('key'),
    hash,
    prefix: secret.slice(3, 7),
    user_id: user.user_id,
    idp_id: user.idp_id,
    organization_id: user.organization_id,
    permissions,
    created_by: opts.created_by,
    rate_limit_per_minute: opts.rate_limit_per_minute,
    slot: opts.slot,
    expires_at: opts.expires_at,
    rotated_from: opts.rotated_from,
    name: opts.name,
    meta: opts.meta,
    credits_id: opts.credits_id,
  });
  forgetKey(hash);
  return {
    api_key: secret,
    key_id: doc.key_id,
    metadata: {
      created_at: doc.created_at.toISOString(),
      permissions,
      key_id: doc.key_id,
      user_id: user.user_id,
      idp_id: user.idp_id,
      organization_id: user.organization_id,
      expires_at: opts.expires_at?.toISOString() ?? null,
    },
  };
}

/**
 * The bootstrap system-admin key of the default organization: PLATFORM_ADMIN_KEY when given,
 * else the key in DATA_DIR/admin-key.txt, else a new one written there (mode 0600).
 */
export async function ensureBootstrapAdminKey(): Promise<{ source: 'env' | 'file' | 'generated'; file?: string }> {
  const cfg = identitySettings();
  await ensureDefaultOrganization();
  const file = path.join(cfg.dataDir, 'admin-key.txt');
  let secret = cfg.PLATFORM_ADMIN_KEY;
  let source: 'env' | 'file' | 'generated' = 'env';
  if (!secret) {
    if (fs.existsSync(file)) {
      secret = fs.readFileSync(file, 'utf8').trim();
      source = 'file';
    } else {
      fs.mkdirSync(cfg.dataDir, { recursive: true });
      try {
        secret = generateSecret();
        fs.writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
        source = 'generated';
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        secret = fs.readFileSync(file, 'utf8').trim(); // another edge process wrote it first
        source = 'file';
      }
    }
  }
  if (!KEY_SHAPE.test(secret))
    throw new Error('PLATFORM_ADMIN_KEY must look like pk_ followed by at least 20 URL-safe characters');
  const existing = await keyByHash(hashKey(secret));
  if (!existing) {
    const admin = await resolveOrCreateUser(cfg.DEFAULT_ORGANIZATION_ID, 'platform-admin');
    try {
      await insertKey(admin, ['system_admin'], { secret, created_by: 'bootstrap' });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
  }
  return { source, file: source === 'env' ? undefined : file };
}
