/**
 * Issuing, listing and revoking a user's keys. Three rules keep a key from reaching further than
 * it holds:
 * - nobody acts on the keys of a user holding more rights than the calling key (an organization
 *   admin cannot list, revoke or add keys of a system_admin user, so the bootstrap key cannot be
 *   locked out from inside an organization);
 * - a user holds at most MAX_KEYS_PER_USER active keys;
 * - a new key carries at most its creator's permissions and its creator's rate limit.
 */
import { config } from '../config';
import { forbidden, isDuplicateKey, notFound, PlatformError } from '../errors';
import { newId } from '../ids';
import { forgetKey, hashKey, insertKey, levelOf, maskKey, type IssuedKey, type Principal } from './api-keys';
import { ApiKey, ApiKeySlot, ApiKeyUsage, PERMISSIONS, type ApiKeyDoc, type ApiKeySlotDoc, type Permission, type UserRef } from './models';

/** A slot whose key was never written is taken as abandoned after this long (a crashed creation). */
const ABANDONED_SLOT_MS = 60_000;

const slotOwner = (organization_id: string, user_id: string) => `${organization_id}|${user_id}`;

function requireRank(actor: Principal, keys: Pick<ApiKeyDoc, 'permissions' | 'status'>[]): void {
  const held = Math.max(0, ...keys.filter((k) => k.status === 'active').map((k) => levelOf(k.permissions)));
  if (held > actor.level) throw forbidden(`Cannot act on the keys of a user holding more rights (${PERMISSIONS[held]}) than the calling key`);
}

const overCap = (cap: number) =>
  new PlatformError(409, `A user may hold at most ${cap} active API keys (MAX_KEYS_PER_USER); revoke one before creating another`);

/** The first free slot of the owner, or null: the unique _id lets only one creation have each. */
async function takeSlot(owner: string, key_id: string, cap: number): Promise<string | null> {
  for (let n = 0; n < cap; n += 1) {
    const _id = `${owner}|${n}`;
    try {
      await ApiKeySlot.create({ _id, key_id, owner, created_at: new Date() });
      return _id;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
  }
  return null;
}

/**
 * Frees slots left behind by a process that stopped between its writes: the key was revoked but
 * its slot not deleted, or the slot was taken but the key never written. Returns how many.
 */
async function releaseStaleSlots(owner: string): Promise<number> {
  const slots = await ApiKeySlot.find({ owner }).lean<ApiKeySlotDoc[]>();
  const keys = await ApiKey.find({ key_id: { $in: slots.map((s) => s.key_id) } }, { key_id: 1, status: 1 }).lean<Pick<ApiKeyDoc, 'key_id' | 'status'>[]>();
  const status = new Map(keys.map((k) => [k.key_id, k.status]));
  let freed = 0;
  for (const s of slots) {
    const state = status.get(s.key_id);
    const stale = state ? state !== 'active' : s.created_at.getTime() < Date.now() - ABANDONED_SLOT_MS;
    if (stale) freed += (await ApiKeySlot.deleteOne({ _id: s._id, key_id: s.key_id })).deletedCount ?? 0;
  }
  return freed;
}

/** The creator's limit bounds the new key's: a limited key cannot mint an unlimited one. */
export function inheritedRateLimit(creator?: number, requested?: number): number | undefined {
  if (creator === undefined) return requested;
  return requested === undefined ? creator : Math.min(creator, requested);
}

export async function issueApiKey(creator: Principal, user: UserRef, permissions: Permission[], rate_limit_per_minute?: number): Promise<IssuedKey> {
  const unique = [...new Set(permissions)];
  const beyond = unique.filter((p) => PERMISSIONS.indexOf(p) > creator.level);
  if (beyond.length) throw forbidden(`Cannot grant permissions the calling key does not hold: ${beyond.join(', ')}`);
  const active = await ApiKey.find({ organization_id: user.organization_id, user_id: user.user_id, status: 'active' }, { permissions: 1, status: 1 }).lean<Pick<ApiKeyDoc, 'permissions' | 'status'>[]>();
  requireRank(creator, active);
  const cap = config().MAX_KEYS_PER_USER;
  // The count also covers keys issued before slots existed; the slots hold under concurrency.
  if (active.length >= cap) throw overCap(cap);
  const owner = slotOwner(user.organization_id, user.user_id);
  const key_id = newId('key');
  let slot = await takeSlot(owner, key_id, cap);
  if (!slot && (await releaseStaleSlots(owner)) > 0) slot = await takeSlot(owner, key_id, cap);
  if (!slot) throw overCap(cap);
  try {
    return await insertKey(user, unique, { key_id, slot, created_by: creator.key_id, rate_limit_per_minute: inheritedRateLimit(creator.rate_limit_per_minute, rate_limit_per_minute) });
  } catch (err) {
    await ApiKeySlot.deleteOne({ _id: slot, key_id }).catch(() => {});
    throw err;
  }
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

export async function listApiKeys(actor: Principal, organization_id: string, user_id: string): Promise<ListedKey[]> {
  const docs = await ApiKey.find({ organization_id, user_id }).sort({ created_at: -1 }).lean<ApiKeyDoc[]>();
  requireRank(actor, docs);
  const usage = await ApiKeyUsage.find({ key_id: { $in: docs.map((d) => d.key_id) } }).lean<{ key_id: string; last_used: Date }[]>();
  const lastUsed = new Map(usage.map((u) => [u.key_id, u.last_used]));
  return docs.map((d) => ({
    key: maskKey(d.prefix),
    key_id: d.key_id,
    created_at: d.created_at.toISOString(),
    last_used: lastUsed.get(d.key_id)?.toISOString() ?? null,
    permissions: d.permissions,
    status: d.status,
    active: d.status === 'active',
  }));
}

/** Revokes by full key or by key_id; the key must belong to the named user. Idempotent. */
export async function revokeApiKey(actor: Principal, organization_id: string, user_id: string, keyOrId: string): Promise<{ key_id: string; already: boolean }> {
  const docs = await ApiKey.find({ organization_id, user_id }).lean<ApiKeyDoc[]>();
  requireRank(actor, docs);
  const hash = keyOrId.startsWith('pk_') ? hashKey(keyOrId) : undefined;
  const doc = docs.find((d) => (hash ? d.hash === hash : d.key_id === keyOrId));
  if (!doc) throw notFound('API key not found for this user');
  if (doc.status === 'revoked') {
    forgetKey(doc.hash);
    return { key_id: doc.key_id, already: true };
  }
  await ApiKey.updateOne({ key_id: doc.key_id, status: 'active' }, { $set: { status: 'revoked', revoked_at: new Date() } });
  forgetKey(doc.hash);
  if (doc.slot) await ApiKeySlot.deleteOne({ _id: doc.slot, key_id: doc.key_id });
  return { key_id: doc.key_id, already: false };
}
