import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { config } from '../config';
import { forbidden, notFound } from '../errors';
import { newId } from '../ids';
import { ApiKey, PERMISSIONS, type ApiKeyDoc, type Permission, type UserDoc } from './models';
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

// last_used is written at most once a second per key on ordinary requests, off the request path;
// verify_api_key always writes it before answering.
const lastWrite = new Map<string, number>();
function touch(key_id: string): void {
  const now = Date.now();
  if ((lastWrite.get(key_id) ?? 0) > now - 1000) return;
  lastWrite.set(key_id, now);
  if (lastWrite.size > 50_000) lastWrite.clear();
  ApiKey.updateOne({ key_id }, { $set: { last_used: new Date(now) } }).catch(() => lastWrite.delete(key_id));
}

/**
 * Authenticates a presented key. Every call reads the key's current status, so a revocation is
 * effective on the very next request, whichever edge process serves it.
 */
export async function authenticateKey(secret: string): Promise<Principal | null> {
  if (!KEY_SHAPE.test(secret)) return null;
  const doc = await ApiKey.findOne({ hash: hashKey(secret), status: 'active' }).lean<ApiKeyDoc>();
  if (!doc) return null;
  touch(doc.key_id);
  return principalOf(doc);
}

export async function verifyApiKey(secret: string): Promise<{ valid: boolean; user_id?: string; organization_id?: string; permissions?: Permission[] }> {
  if (!KEY_SHAPE.test(secret)) return { valid: false };
  const doc = await ApiKey.findOneAndUpdate(
    { hash: hashKey(secret), status: 'active' },
    { $set: { last_used: new Date() } },
    { new: true },
  ).lean<ApiKeyDoc>();
  if (!doc) return { valid: false };
  return { valid: true, user_id: doc.user_id, organization_id: doc.organization_id, permissions: doc.permissions };
}

export interface IssuedKey {
  api_key: string;
  key_id: string;
  metadata: { created_at: string; permissions: Permission[]; key_id: string; user_id: string; organization_id: string };
}

async function insertKey(user: Pick<UserDoc, 'user_id' | 'idp_id' | 'organization_id'>, permissions: Permission[], opts: { created_by?: string; rate_limit_per_minute?: number; secret?: string }): Promise<IssuedKey> {
  const secret = opts.secret ?? generateSecret();
  const doc = await ApiKey.create({
    key_id: newId('key'),
    hash: hashKey(secret),
    prefix: secret.slice(3, 7),
    user_id: user.user_id,
    idp_id: user.idp_id,
    organization_id: user.organization_id,
    permissions,
    created_by: opts.created_by,
    rate_limit_per_minute: opts.rate_limit_per_minute,
  });
  return {
    api_key: secret,
    key_id: doc.key_id,
    metadata: {
      created_at: doc.created_at.toISOString(),
      permissions,
      key_id: doc.key_id,
      user_id: user.user_id,
      organization_id: user.organization_id,
    },
  };
}

/** A key may only carry permissions its creator holds (CONTRACT.md "Identity"). */
export async function issueApiKey(creator: Principal, user: UserDoc, permissions: Permission[], rate_limit_per_minute?: number): Promise<IssuedKey> {
  const unique = [...new Set(permissions)];
  const beyond = unique.filter((p) => PERMISSIONS.indexOf(p) > creator.level);
  if (beyond.length) throw forbidden(`Cannot grant permissions the calling key does not hold: ${beyond.join(', ')}`);
  return insertKey(user, unique, { created_by: creator.key_id, rate_limit_per_minute });
}

export interface ListedKey {
  key: string;
  key_id: string;
  created_at: string;
  last_used: string | null;
  permissions: Permission[];
  status: 'active' | 'revoked';
  active: boolean;
}

export async function listApiKeys(organization_id: string, user_id: string): Promise<ListedKey[]> {
  const docs = await ApiKey.find({ organization_id, user_id }).sort({ created_at: -1 }).lean<ApiKeyDoc[]>();
  return docs.map((d) => ({
    key: maskKey(d.prefix),
    key_id: d.key_id,
    created_at: d.created_at.toISOString(),
    last_used: d.last_used ? d.last_used.toISOString() : null,
    permissions: d.permissions,
    status: d.status,
    active: d.status === 'active',
  }));
}

/** Revokes by full key or by key_id; the key must belong to the named user. Idempotent. */
export async function revokeApiKey(organization_id: string, user_id: string, keyOrId: string): Promise<{ key_id: string; already: boolean }> {
  const filter = keyOrId.startsWith('pk_') ? { hash: hashKey(keyOrId) } : { key_id: keyOrId };
  const doc = await ApiKey.findOne({ ...filter, organization_id, user_id }).lean<ApiKeyDoc>();
  if (!doc) throw notFound('API key not found for this user');
  if (doc.status === 'revoked') return { key_id: doc.key_id, already: true };
  await ApiKey.updateOne({ key_id: doc.key_id, status: 'active' }, { $set: { status: 'revoked', revoked_at: new Date() } });
  return { key_id: doc.key_id, already: false };
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
      secret = generateSecret();
      fs.mkdirSync(cfg.dataDir, { recursive: true });
      fs.writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
      source = 'generated';
    }
  }
  if (!KEY_SHAPE.test(secret)) throw new Error('PLATFORM_ADMIN_KEY must look like pk_ followed by at least 20 URL-safe characters');
  const existing = await ApiKey.findOne({ hash: hashKey(secret) }).lean<ApiKeyDoc>();
  if (!existing) {
    const admin = await resolveOrCreateUser(cfg.DEFAULT_ORGANIZATION_ID, 'platform-admin');
    try {
      await insertKey(admin, ['system_admin'], { secret, created_by: 'bootstrap' });
    } catch (err) {
      if ((err as { code?: number }).code !== 11000) throw err;
    }
  }
  return { source, file: source === 'env' ? undefined : file };
}
