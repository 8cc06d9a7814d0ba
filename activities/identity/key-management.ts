/**
 * Issuing, listing and revoking a user's keys (rotation: rotation.ts). Three rules keep a key
 * from reaching further than it holds:
 * - nobody acts on the keys of a user holding more rights than the calling key (an organization
 *   admin cannot list, revoke or add keys of a system_admin user, so the bootstrap key cannot be
 *   locked out from inside an organization);
 * - a user holds at most MAX_KEYS_PER_USER keys that still authenticate (a rotated key in its
 *   grace included: otherwise rotating with a long grace and revoking the successor would add a
 *   working key, with its own budget, on every round);
 * - a new key carries at most its creator's permissions and rate limit, and expires no later
 *   than its creator.
 */
import { noteChange } from '../core/audit-note.ts';
import { forbidden, notFound, PlatformError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import {
  endOf,
  forgetKey,
  hashKey,
  insertKey,
  type IssuedKey,
  lastUses,
  levelOf,
  maskKey,
  type Principal,
  unusableBecause,
  usable,
} from './api-keys.ts';
import { type Permission, PERMISSIONS, type UserRef } from './constants.ts';
import { type CreditsView, creditsView } from './credits.ts';
import { identitySettings } from './settings.ts';
import {
  type ApiKeyDoc,
  type ApiKeySlotDoc,
  countOrgKeys,
  creditsOf,
  erasingTombstones,
  freeSlot,
  keyById,
  keysOfUser,
  keyStates,
  markKeyRevoked,
  type OrgKeyMatch,
  orgKeysPage,
  rotationOf,
  rotationsOf,
  slotOwner,
  slotsOf,
  takeKeySlot,
  usersHolding,
} from './store.ts';

export { slotOwner };

/** A slot whose key was never written is taken as abandoned after this long (a crashed creation). */
const ABANDONED_SLOT_MS = 60_000;

/** Expired and revoked keys still count: a user's rights are what its keys were given. */
export function requireRank(actor: Principal, keys: Pick<ApiKeyDoc, 'permissions' | 'status'>[]): void {
  const held = Math.max(0, ...keys.filter((k) => k.status === 'active').map((k) => levelOf(k.permissions)));
  if (held > actor.level)
    throw forbidden(`Cannot act on the keys of a user holding more rights (${PERMISSIONS[held]}) than the calling key`);
}

/** requireRank for acts on a user rather than on one of its keys (its shared rate limit). */
export async function requireRankOver(actor: Principal, organization_id: string, user_id: string): Promise<void> {
  requireRank(actor, await keysOfUser(organization_id, user_id, { active: true, fields: ['permissions', 'status'] }));
}

/**
 * The level a user acts with through `key_id`: that key's while it is usable (api-keys.ts
 * `usable`: not revoked, expired or past its rotation's grace) and the user's, else the highest
 * of the user's usable keys (its successor after a rotation); -1 when the user holds none. The
 * named key and its rotation are read together; the user's keys only when it is not usable.
 */
export async function currentKeyLevel(organization_id: string, user_id: string, key_id?: string): Promise<number> {
  if (key_id) {
    const [key, rotation] = await Promise.all([keyById(key_id), rotationOf(key_id)]);
    if (key && key.organization_id === organization_id && key.user_id === user_id && usable(key, rotation, Date.now()))
      return levelOf(key.permissions);
  }
  const keys = await keysOfUser(organization_id, user_id, {
    active: true,
    fields: ['key_id', 'permissions', 'status', 'expires_at'],
  });
  const rotations = await rotationsOf(keys.map((k) => k.key_id));
  const now = Date.now();
  return Math.max(
    -1,
    ...keys.filter((k) => usable(k, rotations.get(k.key_id), now)).map((k) => levelOf(k.permissions)),
  );
}

/** Why the user's key `key_id` no longer authenticates (`gone`: not the user's), undefined while it does. */
export async function whyUnusable(
  organization_id: string,
  user_id: string,
  key_id: string,
): Promise<'revoked' | 'expired' | 'rotated' | 'gone' | undefined> {
  const [key, rotation] = await Promise.all([keyById(key_id), rotationOf(key_id)]);
  if (!key || key.organization_id !== organization_id || key.user_id !== user_id) return 'gone';
  return unusableBecause(key, rotation, Date.now());
}

const overCap = (cap: number, why = 'revoke one before creating another') =>
  new PlatformError('conflict', `A user may hold at most ${cap} active API keys (MAX_KEYS_PER_USER); ${why}`);

/**
 * Frees slots whose key no longer holds a place: a key that stopped working (revoked, expired,
 * past its rotation's grace), a place its key does not name (a rotation that lost to a concurrent
 * one of the same key), or left behind by a process that stopped between its writes (the slot
 * taken but the key never written). None of these states ever goes back. Returns how many.
 */
async function releaseStaleSlots(slots: readonly ApiKeySlotDoc[]): Promise<number> {
  const ids = slots.map((s) => s.key_id);
  const [byId, rotations] = await Promise.all([keyStates(ids), rotationsOf(ids)]);
  const now = Date.now();
  let freed = 0;
  for (const s of slots) {
    const key = byId.get(s.key_id);
    const stale = key
      ? !usable(key, rotations.get(s.key_id), now) || (key.slot !== undefined && key.slot !== s._id)
      : s.created_at.getTime() < now - ABANDONED_SLOT_MS;
    if (stale && (await freeSlot(s._id, s.key_id))) freed += 1;
  }
  return freed;
}

/** How many of these keys of one user still authenticate. */
export async function usableCount(keys: Pick<ApiKeyDoc, 'key_id' | 'status' | 'expires_at'>[]): Promise<number> {
  const active = keys.filter((k) => k.status === 'active');
  const rotations = await rotationsOf(active.map((k) => k.key_id));
  const now = Date.now();
  return active.filter((k) => usable(k, rotations.get(k.key_id), now)).length;
}

/**
 * A free place under the cap for `key_id` (the slot's `_id`), taken before the key is written, or
 * 409 naming the cap. `holding`: how many of the user's keys are usable now, which also covers
 * keys issued before slots existed; the slots are what holds under concurrency.
 */
export async function takePlace(
  user: Pick<UserRef, 'organization_id' | 'user_id'>,
  key_id: string,
  holding: number,
  why?: string,
): Promise<string> {
  const cap = identitySettings().MAX_KEYS_PER_USER;
  if (holding >= cap) throw overCap(cap, why);
  const owner = slotOwner(user.organization_id, user.user_id);
  const slots = await slotsOf(owner);
  let slot = await takeKeySlot(owner, key_id, cap, slots);
  if (!slot && (await releaseStaleSlots(slots)) > 0) slot = await takeKeySlot(owner, key_id, cap, await slotsOf(owner));
  if (!slot) throw overCap(cap, why);
  return slot;
}

/** The creator's limit bounds the new key's: a limited key cannot mint an unlimited one. */
export function inheritedRateLimit(creator?: number, requested?: number): number | undefined {
  if (creator === undefined) return requested;
  return requested === undefined ? creator : Math.min(creator, requested);
}

/** Likewise the creator's expiry (epoch ms): a key cannot outlive the key that made it. */
export function inheritedExpiry(creator?: number, requested?: Date): Date | undefined {
  if (creator === undefined) return requested;
  return requested === undefined || requested.getTime() > creator ? new Date(creator) : requested;
}

export interface IssueOptions {
  rate_limit_per_minute?: number;
  expires_at?: Date;
}

export async function issueApiKey(
  creator: Principal,
  user: UserRef,
  permissions: Permission[],
  opts: IssueOptions = {},
): Promise<IssuedKey> {
  const unique = [...new Set(permissions)];
  const beyond = unique.filter((p) => PERMISSIONS.indexOf(p) > creator.level);
  if (beyond.length) throw forbidden(`Cannot grant permissions the calling key does not hold: ${beyond.join(', ')}`);
  const active = await keysOfUser(user.organization_id, user.user_id, {
    active: true,
    fields: ['key_id', 'permissions', 'status', 'expires_at'],
  });
  requireRank(creator, active);
  const key_id = newId('key');
  const slot = await takePlace(user, key_id, await usableCount(active));
  try {
    return await insertKey(user, unique, {
      key_id,
      slot,
      created_by: creator.key_id,
      rate_limit_per_minute: inheritedRateLimit(creator.rate_limit_per_minute, opts.rate_limit_per_minute),
      expires_at: inheritedExpiry(creator.expires_at, opts.expires_at),
      // A metered key below admin cannot mint its way out of its credits: its keys spend its pool.
      credits_id: creator.level < PERMISSIONS.indexOf('admin') ? creator.credits_id : undefined,
    });
  } catch (err) {
    await freeSlot(slot, key_id).catch(() => false);
    throw err;
  }
}

type KeyState = 'active' | 'expiring' | 'revoked' | 'expired';

export interface ListedKey {
  key: string;
  key_id: string;
  created_at: string;
  last_used: string | null;
  permissions: Permission[];
  /** expiring: rotated, still accepted until expires_at (its grace) */
  status: KeyState;
  /** accepted now (active or expiring) */
  active: boolean;
  expires_at: string | null;
  rotated_to: string | null;
  rotated_from: string | null;
  name: string | null;
  meta: Record<string, unknown> | null;
  credits: CreditsView | null;
}

export async function listApiKeys(actor: Principal, organization_id: string, user_id: string): Promise<ListedKey[]> {
  const docs = await keysOfUser(organization_id, user_id);
  requireRank(actor, docs);
  return viewKeys(docs);
}

/** Keys as lists show them: masked, with their state now, last use, rotation and credits (never a secret or hash). */
async function viewKeys(docs: ApiKeyDoc[]): Promise<ListedKey[]> {
  const ids = docs.map((d) => d.key_id);
  const [lastUsed, rotations, credits] = await Promise.all([
    lastUses(ids),
    rotationsOf(ids),
    creditsOf(docs.flatMap((d) => (d.credits_id ? [d.credits_id] : []))),
  ]);
  const now = Date.now();
  return docs.map((d) => {
    const c = d.credits_id ? credits.get(d.credits_id) : undefined;
    const rotation = rotations.get(d.key_id);
    const end = endOf(d, rotation);
    const status: KeyState =
      d.status === 'revoked'
        ? 'revoked'
        : end !== undefined && end <= now
          ? 'expired'
          : rotation
            ? 'expiring'
            : 'active';
    return {
      key: maskKey(d.prefix),
      key_id: d.key_id,
      created_at: d.created_at.toISOString(),
      last_used: lastUsed.get(d.key_id)?.toISOString() ?? null,
      permissions: d.permissions,
      status,
      active: usable(d, rotation, now),
      expires_at: end === undefined ? null : new Date(end).toISOString(),
      rotated_to: rotation?.key_id ?? null,
      rotated_from: d.rotated_from ?? null,
      name: d.name ?? null,
      meta: d.meta ?? null,
      credits: c ? creditsView(c, new Date(now)) : null,
    };
  });
}

export interface OrgListedKey extends ListedKey {
  user_id: string;
  idp_id: string;
}

/**
 * GET /api/keys: the organization's keys, newest first, masked as in a user's list, each naming
 * its user (an erased user's keys keep only the tombstone, `del_…`). `status` filters on the
 * stored state: `revoked`, or `active` (not revoked: listed as active, expiring or expired).
 * Keys of users holding more rights than the caller are left out (one user named: 403, as
 * listing that user's keys).
 */
export async function listOrganizationKeys(
  actor: Principal,
  organization_id: string,
  filter: { user_id?: string; status?: 'active' | 'revoked' },
  page: number,
  limit: number,
): Promise<{ api_keys: OrgListedKey[]; page: number; limit: number; total: number; has_more: boolean }> {
  const match: OrgKeyMatch = { status: filter.status, user_id: filter.user_id };
  if (filter.user_id) await requireRankOver(actor, organization_id, filter.user_id);
  else match.not_users = await usersHolding(organization_id, PERMISSIONS.slice(actor.level + 1));
  const [docs, total] = await Promise.all([
    orgKeysPage(organization_id, match, (page - 1) * limit, limit),
    countOrgKeys(organization_id, match),
  ]);
  const [views, erasing] = await Promise.all([
    viewKeys(docs),
    erasingTombstones(organization_id, [...new Set(docs.map((d) => d.user_id))]),
  ]);
  // A user being erased is already gone for every reader: their keys are listed as the erasure
  // leaves them (under the tombstone, without an admin's name or meta), not under their idp_id.
  return {
    api_keys: views.map((v, i) => {
      const tombstone = erasing.get(docs[i].user_id);
      return tombstone
        ? { ...v, name: null, meta: null, user_id: tombstone, idp_id: tombstone }
        : { ...v, user_id: docs[i].user_id, idp_id: docs[i].idp_id };
    }),
    page,
    limit,
    total,
    has_more: page * limit < total,
  };
}

/** The named key among the user's keys: by full key or by key_id. */
export function findKey(docs: ApiKeyDoc[], keyOrId: string): ApiKeyDoc {
  const hash = keyOrId.startsWith('pk_') ? hashKey(keyOrId) : undefined;
  const doc = docs.find((d) => (hash ? d.hash === hash : d.key_id === keyOrId));
  if (!doc) throw notFound('API key not found for this user');
  return doc;
}

/** Revokes by full key or by key_id; the key must belong to the named user. Idempotent. */
export async function revokeApiKey(
  actor: Principal,
  organization_id: string,
  user_id: string,
  keyOrId: string,
): Promise<{ key_id: string; already: boolean }> {
  const docs = await keysOfUser(organization_id, user_id);
  requireRank(actor, docs);
  const doc = findKey(docs, keyOrId);
  if (doc.status === 'revoked') {
    forgetKey(doc.hash);
    return { key_id: doc.key_id, already: true };
  }
  if (await markKeyRevoked(doc)) noteChange('status', 'active', 'revoked');
  forgetKey(doc.hash);
  if (doc.slot) await freeSlot(doc.slot, doc.key_id);
  return { key_id: doc.key_id, already: false };
}
