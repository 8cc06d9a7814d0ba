/**
 * Identity's data: organizations, users, API keys and what hangs off a key (its last use, its
 * place under the per-user cap, its rotation). The only file that reads or writes identity's
 * models; everything else, other components included, calls these functions.
 *
 * Keyed for both database servers: the hot paths (a key check, a user by id or by the identity
 * provider's id, a key's rotation and last use, a user's keys) are reads by `_id` (models.ts
 * says which field each `_id` is taken from, and which link documents are written beside). State written by several paths lives in separate documents (last use, slots, rotations)
 * and exclusive changes are inserts under unique keys, since the embedded server neither isolates
 * updates nor has transactions (activities/db/README.md).
 *
 * Per-process caches in front of this store (all activities/db `Cache`), and how soon a change
 * made by another process is seen through them:
 * - verified keys (api-keys.ts), 1 s: every request presents a key; a key revoked or rotated
 *   elsewhere, or its user's shared limit changed elsewhere, is refused or applied everywhere
 *   within 1 s (at once in the process that made the change);
 * - refused keys, 30 s: an unknown, revoked or expired key presented again costs no read; none of
 *   these answers can turn into "valid" except an unknown key being issued, which happens in a
 *   request that clears it;
 * - user references (users.ts), no expiry: a user's ids never change and users are not deleted,
 *   so an entry is never stale; the rest of a user is always read afresh;
 * - the last-use write, at most once a second per key.
 * Per-key and per-user request windows are counted per edge (edge/rate-limit.ts), not here.
 */
import { byId, byIds, byKey, hasUnkeyedDocuments, insertOnce, keyFilter, takeSlot as takeDbSlot } from '../db';
import { isDuplicateKey } from '../errors';
import {
  ApiKey,
  ApiKeyId,
  ApiKeyRotation,
  ApiKeySlot,
  ApiKeyUsage,
  idpKey,
  Organization,
  ownedKeys,
  User,
  UserIdp,
  type ApiKeyDoc,
  type ApiKeyRotationDoc,
  type ApiKeySlotDoc,
  type OrganizationDoc,
  type Tier,
  type UserDoc,
  type UserIdpDoc,
} from './models';

export type { ApiKeyDoc, ApiKeyRotationDoc, OrganizationDoc, UserDoc };

// ---- organizations

export async function organizationDoc(organization_id: string): Promise<OrganizationDoc | null> {
  return byKey<OrganizationDoc>(Organization, 'organization_id', organization_id);
}

/** Throws the duplicate-key error when the id is taken. */
export async function insertOrganization(doc: { organization_id: string; name: string; tier: Tier }): Promise<OrganizationDoc> {
  return (await Organization.create(doc)).toObject();
}

/** Creates the organization unless it exists (concurrent starters included). */
export async function insertOrganizationOnce(doc: { organization_id: string; name: string; tier: Tier }): Promise<void> {
  if (await organizationDoc(doc.organization_id)) return;
  await insertOnce(Organization, doc);
}

export async function patchOrganization(organization_id: string, patch: { name?: string; tier?: Tier }): Promise<OrganizationDoc | null> {
  return Organization.findOneAndUpdate(await keyFilter(Organization, 'organization_id', organization_id), { $set: patch }, { new: true }).lean<OrganizationDoc>();
}

// ---- users

export async function userById(organization_id: string, user_id: string): Promise<UserDoc | null> {
  return byKey<UserDoc>(User, 'user_id', user_id, { organization_id });
}

/** The user's shared rate limit (read with each key check). */
export async function userRateLimit(organization_id: string, user_id: string): Promise<number | undefined> {
  const u = await byKey<Pick<UserDoc, 'user_rate_limit_per_minute'>>(User, 'user_id', user_id, { organization_id }, { user_rate_limit_per_minute: 1 });
  return u?.user_rate_limit_per_minute ?? undefined;
}

/** By the (organization_id, idp_id) index, writing the link document a user written before links existed lacks. */
async function userByIdpIndex(organization_id: string, idp_id: string): Promise<UserDoc | null> {
  const user = await User.findOne({ organization_id, idp_id }).lean<UserDoc>();
  if (user) await insertOnce(UserIdp, { _id: idpKey(organization_id, idp_id), user_id: user.user_id });
  return user;
}

export async function userByIdp(organization_id: string, idp_id: string): Promise<UserDoc | null> {
  const link = await UserIdp.findById(idpKey(organization_id, idp_id)).lean<UserIdpDoc>();
  if (link) return userById(organization_id, link.user_id);
  return (await hasUnkeyedDocuments(User)) ? userByIdpIndex(organization_id, idp_id) : null;
}

/**
 * Inserts a user; when (organization, idp_id) is taken (a concurrent creator, or a user whose
 * link was not written), answers the existing user instead, `created: false`.
 */
export async function insertUser(doc: Omit<UserDoc, 'created_at' | 'updated_at'>): Promise<{ user: UserDoc; created: boolean }> {
  try {
    return { user: (await User.create(doc)).toObject(), created: true };
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    const winner = await userByIdpIndex(doc.organization_id, doc.idp_id);
    if (!winner) throw err;
    return { user: winner, created: false };
  }
}

export async function patchUser(user_id: string, set: Record<string, string | number>, unset: Record<string, 1> = {}): Promise<UserDoc | null> {
  const update = { ...(Object.keys(set).length ? { $set: set } : {}), ...(Object.keys(unset).length ? { $unset: unset } : {}) };
  return User.findOneAndUpdate(await keyFilter(User, 'user_id', user_id), update, { new: true }).lean<UserDoc>();
}

// ---- API keys

export async function keyByHash(hash: string): Promise<ApiKeyDoc | null> {
  return byKey<ApiKeyDoc>(ApiKey, 'hash', hash);
}

export async function insertKeyDoc(doc: Omit<ApiKeyDoc, 'created_at' | 'status' | 'revoked_at'>): Promise<ApiKeyDoc> {
  return (await ApiKey.create(doc)).toObject();
}

/** A key by its key_id: its link document, then the key, both by `_id` (by the key_id index for keys written before links existed). */
export async function keyById(key_id: string): Promise<ApiKeyDoc | null> {
  const link = await byId<{ _id: string; hash: string }>(ApiKeyId, key_id);
  if (link) return keyByHash(link.hash);
  return (await hasUnkeyedDocuments(ApiKey)) ? ApiKey.findOne({ key_id }).lean<ApiKeyDoc>() : null;
}

type KeyFields = keyof ApiKeyDoc;

/**
 * A user's keys, newest first; `active` only the active ones. Read by `_id`: the user's numbered
 * key list (models.ts), then the keys. While keys written before that list existed remain, by the
 * (organization_id, user_id, created_at) index instead.
 */
export async function keysOfUser<K extends KeyFields = KeyFields>(organization_id: string, user_id: string, opts: { active?: boolean; fields?: K[] } = {}): Promise<Pick<ApiKeyDoc, K>[]> {
  if (await hasUnkeyedDocuments(ApiKey)) {
    const projection = opts.fields ? Object.fromEntries(opts.fields.map((f) => [f, 1])) : undefined;
    const filter = { organization_id, user_id, ...(opts.active ? { status: 'active' } : {}) };
    return ApiKey.find(filter, projection).sort({ created_at: -1 }).lean<Pick<ApiKeyDoc, K>[]>();
  }
  const hashes = (await ownedKeys(organization_id, user_id)).map((s) => s.doc.hash);
  const keys = [...(await byIds<ApiKeyDoc & { _id: string }>(ApiKey, hashes)).values()];
  return keys
    .filter((k) => k.organization_id === organization_id && k.user_id === user_id && (!opts.active || k.status === 'active'))
    .sort((a, b) => new Date(b.created_at).getTime() - new Date(a.created_at).getTime());
}

/** Revokes an active key; false when it was not active. */
export async function markKeyRevoked(doc: Pick<ApiKeyDoc, 'hash' | 'key_id'>, at = new Date()): Promise<boolean> {
  const res = await ApiKey.updateOne({ ...(await keyFilter(ApiKey, 'hash', doc.hash)), key_id: doc.key_id, status: 'active' }, { $set: { status: 'revoked', revoked_at: at } });
  return res.modifiedCount > 0;
}

/** When each key was last used. */
export async function lastUsedOf(key_ids: string[]): Promise<Map<string, Date>> {
  const docs = await byIds<{ _id: string; key_id: string; last_used: Date }>(ApiKeyUsage, key_ids);
  if ((await hasUnkeyedDocuments(ApiKeyUsage)) && docs.size < key_ids.length) {
    for (const u of await ApiKeyUsage.find({ key_id: { $in: key_ids } }).lean<{ _id: string; key_id: string; last_used: Date }[]>()) docs.set(u.key_id, u);
  }
  return new Map([...docs.values()].map((u) => [u.key_id, u.last_used]));
}

export async function writeLastUsed(key_id: string, at: Date): Promise<void> {
  try {
    await ApiKeyUsage.updateOne(await keyFilter(ApiKeyUsage, 'key_id', key_id), { $set: { last_used: at }, $setOnInsert: { key_id } }, { upsert: true });
  } catch (err) {
    if (!isDuplicateKey(err)) throw err; // another process created the row at the same moment
  }
}

// ---- rotations

/** The rotations of the given keys, by old key_id. */
export async function rotationsOf(key_ids: string[]): Promise<Map<string, ApiKeyRotationDoc>> {
  return byIds<ApiKeyRotationDoc>(ApiKeyRotation, key_ids);
}

export async function rotationOf(key_id: string): Promise<ApiKeyRotationDoc | null> {
  return ApiKeyRotation.findById(key_id).lean<ApiKeyRotationDoc>();
}

/** Records a rotation once (a second writer for the same old key changes nothing). */
export async function insertRotation(doc: ApiKeyRotationDoc): Promise<void> {
  await insertOnce(ApiKeyRotation, { ...doc });
}

/** Ends a rotation's grace now, if it has not ended. */
export async function endGrace(old_key_id: string, now: Date): Promise<void> {
  await ApiKeyRotation.updateOne({ _id: old_key_id, grace_until: { $gt: now } }, { $set: { grace_until: now, changed_at: now } });
}

// ---- slots: a user's places under MAX_KEYS_PER_USER

export const slotOwner = (organization_id: string, user_id: string) => `${organization_id}|${user_id}`;
const slotId = (owner: string, n: number) => `${owner}|${n}`;

/** The first free place of the owner for `key_id`, or null when all `cap` are taken. */
export async function takeKeySlot(owner: string, key_id: string, cap: number): Promise<string | null> {
  const slot = await takeDbSlot(ApiKeySlot, { id: (n) => slotId(owner, n), to: cap, fields: () => ({ key_id, owner, created_at: new Date() }) });
  return slot?._id ?? null;
}

/** The owner's taken places (read by their `_id`s: there are at most `cap`). */
export async function slotsOf(owner: string, cap: number): Promise<ApiKeySlotDoc[]> {
  return [...(await byIds<ApiKeySlotDoc>(ApiKeySlot, Array.from({ length: cap }, (_, n) => slotId(owner, n)))).values()];
}

/** Frees the place if `key_id` still holds it; true when it did. */
export async function freeSlot(slot: string, key_id: string): Promise<boolean> {
  return ((await ApiKeySlot.deleteOne({ _id: slot, key_id })).deletedCount ?? 0) > 0;
}

/** Hands the place from one key to another; true when `from_key_id` held it (and now `to_key_id` does). */
export async function moveSlot(slot: string, from_key_id: string, to_key_id: string): Promise<boolean> {
  return (await ApiKeySlot.updateOne({ _id: slot, key_id: from_key_id }, { $set: { key_id: to_key_id } })).modifiedCount > 0;
}

/** The state (status, expiry, slot) of the given keys, by key_id. */
export async function keyStates(key_ids: string[]): Promise<Map<string, Pick<ApiKeyDoc, 'key_id' | 'status' | 'expires_at' | 'slot'>>> {
  if (!key_ids.length) return new Map();
  const keys = await ApiKey.find({ key_id: { $in: key_ids } }, { key_id: 1, status: 1, expires_at: 1, slot: 1 }).lean<Pick<ApiKeyDoc, 'key_id' | 'status' | 'expires_at' | 'slot'>[]>();
  return new Map(keys.map((k) => [k.key_id, k]));
}
