import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { config } from '../config';
import { isDuplicateKey } from '../errors';
import { newId } from '../ids';
import { ApiKey, ApiKeyUsage, PERMISSIONS, type ApiKeyDoc, type Permission, type UserRef } from './models';
import { resolveOrCreateUser } from './users';
import { ensureDefaultOrganization } from './organizations';

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
}

export const levelOf = (permissions: readonly string[]): number =>
  Math.max(0, ...permissions.map((p) => PERMISSIONS.indexOf(p as Permission)));

export const hashKey = (key: string): string => createHash('sha256').update(key).digest('hex');

/** `pk_` + 32 random bytes (256 bits) in base64url. */
export const generateSecret = (): string => `pk_${randomBytes(32).toString('base64url')}`;

export const maskKey = (prefix: string): string => `pk_${prefix}…`;

const KEY_SHAPE = /^pk_[A-Za-z0-9_-]{20,200}$/;

function principalOf(doc: ApiKeyDoc): Principal {
  return {
    key_id: doc.key_id,
    user_id: doc.user_id,
    idp_id: doc.idp_id,
    organization_id: doc.organization_id,
    permissions: doc.permissions,
    level: levelOf(doc.permissions),
    rate_limit_per_minute: doc.rate_limit_per_minute ?? undefined,
  };
}

// last_used is written at most once a second per key: off the request path on ordinary requests,
// awaited by verify_api_key so a caller that verifies and then lists sees it.
const lastWrite = new Map<string, number>();
function lastUsedDue(key_id: string, now: number): boolean {
  if ((lastWrite.get(key_id) ?? 0) > now - 1000) return false;
  lastWrite.set(key_id, now);
  if (lastWrite.size > 50_000) lastWrite.clear();
  return true;
}
async function writeLastUsed(key_id: string, now: number): Promise<void> {
  try {
    await ApiKeyUsage.updateOne({ key_id }, { $set: { last_used: new Date(now) } }, { upsert: true });
  } catch (err) {
    if (isDuplicateKey(err)) return; // another process created the row at the same moment
    lastWrite.delete(key_id);
    throw err;
  }
}

/**
 * Active keys are cached per process, by hash, for at most KEY_CACHE_MS. Keys never change except
 * by revocation, and a revocation removes the key from this process's cache at once; other
 * processes (edge replicas) drop it when their revocation watcher next polls (every
 * REVOCATION_POLL_MS), so it is refused there within that interval.
 */
const KEY_CACHE_MS = 30_000;
export const REVOCATION_POLL_MS = 500;
const keyCache = new Map<string, { principal: Principal; expires: number }>();
let watcher: NodeJS.Timeout | undefined;
let revokedSince = new Date();

function watchRevocations(): void {
  if (watcher) return;
  revokedSince = new Date(Date.now() - 5000);
  watcher = setInterval(() => {
    ApiKey.find({ status: 'revoked', revoked_at: { $gt: revokedSince } }, { hash: 1, revoked_at: 1 })
      .lean<Pick<ApiKeyDoc, 'hash' | 'revoked_at'>[]>()
      .then((revoked) => {
        for (const r of revoked) {
          keyCache.delete(r.hash);
          // Overlap by 5 s so clock skew between processes cannot hide a revocation.
          if (r.revoked_at && r.revoked_at.getTime() - 5000 > revokedSince.getTime()) revokedSince = new Date(r.revoked_at.getTime() - 5000);
        }
      })
      .catch(() => {
        /* the next poll tries again; cache entries expire in any case */
      });
  }, REVOCATION_POLL_MS);
  watcher.unref();
}

export function stopRevocationWatcher(): void {
  if (watcher) clearInterval(watcher);
  watcher = undefined;
  keyCache.clear();
}

/**
 * Hashes that matched no active key, remembered for NEGATIVE_CACHE_MS so a key presented again and
 * again costs one read, not one per request (distinct guesses are limited per address at the
 * edge). A key is never presented before it exists, and issuing one clears its hash here.
 */
const NEGATIVE_CACHE_MS = 30_000;
const NEGATIVE_CACHE_MAX = 10_000;
const unknownKeys = new Map<string, number>();

function rememberUnknown(hash: string, now: number): void {
  unknownKeys.delete(hash);
  unknownKeys.set(hash, now + NEGATIVE_CACHE_MS);
  // Map order is insertion order: the first entry is the oldest.
  if (unknownKeys.size > NEGATIVE_CACHE_MAX) unknownKeys.delete(unknownKeys.keys().next().value!);
}

/** Drops a key from this process's caches (revoked here, or just issued). */
export function forgetKey(hash: string): void {
  keyCache.delete(hash);
  unknownKeys.delete(hash);
}

/** The principal of a key this process has verified recently, without reading the database. */
function cached(secret: string, now: number): Principal | null {
  if (!KEY_SHAPE.test(secret)) return null;
  const hit = keyCache.get(hashKey(secret));
  return hit && hit.expires > now ? hit.principal : null;
}

async function lookup(secret: string): Promise<Principal | null> {
  if (!KEY_SHAPE.test(secret)) return null;
  const hash = hashKey(secret);
  const now = Date.now();
  const hit = keyCache.get(hash);
  if (hit && hit.expires > now) return hit.principal;
  if ((unknownKeys.get(hash) ?? 0) > now) return null;
  const doc = await ApiKey.findOne({ hash, status: 'active' }).lean<ApiKeyDoc>();
  if (!doc) {
    keyCache.delete(hash);
    rememberUnknown(hash, now);
    return null;
  }
  const principal = principalOf(doc);
  if (keyCache.size > 100_000) keyCache.clear();
  keyCache.set(hash, { principal, expires: now + KEY_CACHE_MS });
  watchRevocations();
  return principal;
}

/**
 * Authenticates a presented key (see the cache note above for revocation timing). With
 * `cachedOnly` only keys this process verified recently are accepted, without any read: the edge
 * answers that way to an address that has failed too often.
 */
export async function authenticateKey(secret: string, opts: { cachedOnly?: boolean } = {}): Promise<Principal | null> {
  const now = Date.now();
  const principal = opts.cachedOnly ? cached(secret, now) : await lookup(secret);
  if (!principal) return null;
  if (lastUsedDue(principal.key_id, now)) writeLastUsed(principal.key_id, now).catch(() => {});
  return principal;
}

export async function verifyApiKey(secret: string): Promise<{ valid: boolean; user_id?: string; idp_id?: string; organization_id?: string; permissions?: Permission[] }> {
  const principal = await lookup(secret);
  if (!principal) return { valid: false };
  const now = Date.now();
  if (lastUsedDue(principal.key_id, now)) await writeLastUsed(principal.key_id, now);
  return { valid: true, user_id: principal.user_id, idp_id: principal.idp_id, organization_id: principal.organization_id, permissions: principal.permissions };
}

export interface IssuedKey {
  api_key: string;
  key_id: string;
  metadata: { created_at: string; permissions: Permission[]; key_id: string; user_id: string; idp_id: string; organization_id: string };
}

/** Stores a key; callers decide who may issue it (key-management.ts, the bootstrap below). */
export async function insertKey(
  user: UserRef,
  permissions: Permission[],
  opts: { key_id?: string; slot?: string; created_by?: string; rate_limit_per_minute?: number; secret?: string },
): Promise<IssuedKey> {
  const secret = opts.secret ?? generateSecret();
  const hash = hashKey(secret);
  const doc = await ApiKey.create({
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
    },
  };
}

/**
 * The bootstrap system-admin key of the default organization: PLATFORM_ADMIN_KEY when given,
 * else the key in DATA_DIR/admin-key.txt, else a new one written there (mode 0600).
 */
export async function ensureBootstrapAdminKey(): Promise<{ source: 'env' | 'file' | 'generated'; file?: string }> {
  const cfg = config();
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
  if (!KEY_SHAPE.test(secret)) throw new Error('PLATFORM_ADMIN_KEY must look like pk_ followed by at least 20 URL-safe characters');
  const existing = await ApiKey.findOne({ hash: hashKey(secret) }).lean<ApiKeyDoc>();
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
