/**
 * Identity's schemas, imported by store.ts alone. Each hot lookup is by `_id`, taken from the
 * field it looks up (idFrom): an organization by organization_id, a user by user_id, a key by its
 * hash, a key's last use by key_id; a user by (organization, idp_id) through its link document.
 */
import mongoose, { Schema } from 'mongoose';
import { firstFree, idFrom, onlyDuplicates, readSlots } from '../db';
import { PERMISSIONS, TIERS, type Permission, type Tier, type UserRef } from './constants';

export { PERMISSIONS, TIERS, type Permission, type Tier, type UserRef };

const organizationSchema = new Schema(
  {
    _id: idFrom('organization_id'),
    organization_id: { type: String, required: true, unique: true },
    name: { type: String, required: true },
    tier: { type: String, enum: TIERS, required: true },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: 'updated_at' }, versionKey: false },
);

const userSchema = new Schema(
  {
    _id: idFrom('user_id'),
    user_id: { type: String, required: true, unique: true },
    organization_id: { type: String, required: true },
    idp_id: { type: String, required: true },
    email: { type: String },
    display_name: { type: String },
    /** requests a minute shared by all of the user's keys (set by an admin); unset: none */
    user_rate_limit_per_minute: { type: Number },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: 'updated_at' }, versionKey: false },
);
userSchema.index({ organization_id: 1, idp_id: 1 }, { unique: true });

const apiKeySchema = new Schema(
  {
    _id: idFrom('hash'),
    key_id: { type: String, required: true, unique: true },
    /** sha256 of the full key; the key itself is never stored */
    hash: { type: String, required: true, unique: true },
    /** first characters after `pk_`, shown masked in lists */
    prefix: { type: String, required: true },
    user_id: { type: String, required: true },
    idp_id: { type: String, required: true },
    organization_id: { type: String, required: true },
    permissions: { type: [String], required: true },
    status: { type: String, enum: ['active', 'revoked'], default: 'active' },
    created_by: { type: String },
    rate_limit_per_minute: { type: Number },
    revoked_at: { type: Date },
    /** the _id of the key's api_key_slots document while the key is usable (its grace included) */
    slot: { type: String },
    /** refused from then on; set at creation only (a rotation's grace lives in api_key_rotations) */
    expires_at: { type: Date },
    /** the key this one replaced by rotation */
    rotated_from: { type: String },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: false }, versionKey: false },
);
apiKeySchema.index({ organization_id: 1, user_id: 1, created_at: -1 });

/**
 * When each key was last used, apart from the key itself: the embedded server applies an update
 * as a read-modify-write of the whole document, so a usage write racing a revocation of the same
 * document could undo the revocation. Separate documents never race.
 */
const apiKeyUsageSchema = new Schema(
  {
    _id: idFrom('key_id'),
    key_id: { type: String, required: true, unique: true },
    last_used: { type: Date, required: true },
  },
  { versionKey: false },
);

/**
 * One document per usable key (a rotated key in its grace included), `<organization>|<user>|<n>`
 * with n below MAX_KEYS_PER_USER: the unique _id caps a user's working keys even under concurrent
 * creations and rotations (an insert guarded by a unique key stays exact on both servers).
 * Revocation deletes the slot; a key that expired or whose grace ended leaves it to be released.
 */
const apiKeySlotSchema = new Schema(
  {
    _id: { type: String, required: true },
    key_id: { type: String, required: true },
    owner: { type: String, required: true },
    created_at: { type: Date, required: true },
  },
  { versionKey: false },
);

/**
 * One document per rotated key, `_id` the old key's key_id, written once the new key exists: the
 * old key is refused after `grace_until`. Kept apart from the key's own document for the same
 * reason as the usage: an update racing a revocation could undo it. `changed_at` tells the edge
 * processes' caches to drop `hash` (at the rotation, and when a later rotation ends the grace early).
 */
const apiKeyRotationSchema = new Schema(
  {
    _id: { type: String, required: true },
    /** the new key's key_id */
    key_id: { type: String, required: true },
    /** the old key's hash */
    hash: { type: String, required: true },
    grace_until: { type: Date, required: true },
    created_at: { type: Date, required: true },
    changed_at: { type: Date, required: true },
  },
  { versionKey: false },
);

export interface OrganizationDoc {
  organization_id: string;
  name: string;
  tier: Tier;
  created_at: Date;
  updated_at: Date;
}
export interface UserDoc {
  user_id: string;
  organization_id: string;
  idp_id: string;
  email?: string;
  display_name?: string;
  user_rate_limit_per_minute?: number;
  created_at: Date;
  updated_at: Date;
}

export interface ApiKeyDoc {
  key_id: string;
  hash: string;
  prefix: string;
  user_id: string;
  idp_id: string;
  organization_id: string;
  permissions: Permission[];
  status: 'active' | 'revoked';
  created_by?: string;
  rate_limit_per_minute?: number;
  revoked_at?: Date;
  slot?: string;
  expires_at?: Date;
  rotated_from?: string;
  created_at: Date;
}
export interface ApiKeyRotationDoc {
  _id: string;
  key_id: string;
  hash: string;
  grace_until: Date;
  created_at: Date;
  changed_at: Date;
}
export interface ApiKeySlotDoc {
  _id: string;
  key_id: string;
  /** `<organization>|<user>` */
  owner: string;
  created_at: Date;
}

/**
 * `<organization>|<idp_id>` → user_id: the lookup of a user by the identity provider's id as an
 * `_id` read. Written after every insert of a user (create and insertMany alike, by the hooks
 * below); the unique (organization_id, idp_id) index of users stays the judge of who was first.
 */
const userIdpSchema = new Schema(
  {
    _id: { type: String, required: true },
    user_id: { type: String, required: true },
  },
  { versionKey: false },
);
export interface UserIdpDoc {
  _id: string;
  user_id: string;
}
export const idpKey = (organization_id: string, idp_id: string) => `${organization_id}|${idp_id}`;
export const UserIdp = mongoose.model<UserIdpDoc>('UserIdp', userIdpSchema, 'user_idps');
const linksOf = (docs: UserRef[]) => docs.map((u) => ({ _id: idpKey(u.organization_id, u.idp_id), user_id: u.user_id }));
async function link(docs: UserRef[]): Promise<void> {
  await UserIdp.insertMany(linksOf(docs), { ordered: false }).catch(onlyDuplicates);
}
userSchema.post('save', async function (doc: UserRef) {
  await link([doc]);
});
userSchema.post('insertMany', async function (docs: UserRef[]) {
  await link(docs);
});

/**
 * key_id → the key's hash (its `_id`): a key named by its id (a scheduled event's saver, a slot's
 * holder) read by `_id`. Written after every insert of a key, by the hooks below.
 */
const apiKeyIdSchema = new Schema(
  {
    _id: { type: String, required: true },
    hash: { type: String, required: true },
  },
  { versionKey: false },
);
export const ApiKeyId = mongoose.model<{ _id: string; hash: string }>('ApiKeyId', apiKeyIdSchema, 'api_key_ids');
async function linkKeys(docs: Pick<ApiKeyDoc, 'key_id' | 'hash'>[]): Promise<void> {
  await ApiKeyId.insertMany(docs.map((k) => ({ _id: k.key_id, hash: k.hash })), { ordered: false }).catch(onlyDuplicates);
}

/**
 * `<organization>|<user>#<n>` → the hash of the user's n-th key (n dense from 0, in creation
 * order): a user's keys are listed by reading these by `_id`, 32 at a time, then the keys by
 * `_id`. Each number is taken by an insert under its `_id`, so concurrent creations for one user
 * never share one and leave no gap. Written after every insert of a key, by the hooks below.
 */
const apiKeyOwnerSchema = new Schema(
  {
    _id: { type: String, required: true },
    hash: { type: String, required: true },
  },
  { versionKey: false },
);
export const ApiKeyOwner = mongoose.model<{ _id: string; hash: string }>('ApiKeyOwner', apiKeyOwnerSchema, 'api_key_owners');
const ownerKeyId = (organization_id: string, user_id: string, n: number) => `${organization_id}|${user_id}#${n}`;
const OWNER_BATCH = 32;

/** The user's listed keys in number order, read by `_id` (OWNER_BATCH numbers a read). */
export const ownedKeys = (organization_id: string, user_id: string) => readSlots<{ _id: string; hash: string }>(ApiKeyOwner, (n) => ownerKeyId(organization_id, user_id, n), OWNER_BATCH);

async function listKey(k: Pick<ApiKeyDoc, 'organization_id' | 'user_id' | 'hash'>, from: number): Promise<void> {
  for (let n = from; ; n += 1) {
    try {
      await ApiKeyOwner.create({ _id: ownerKeyId(k.organization_id, k.user_id, n), hash: k.hash });
      return;
    } catch (err) {
      onlyDuplicates(err as { code?: number });
    }
  }
}

/** Lists new keys under their users: a user's first keys in one batch insert, the rest one by one. */
async function listKeys(docs: Pick<ApiKeyDoc, 'organization_id' | 'user_id' | 'hash'>[]): Promise<void> {
  type Listed = Pick<ApiKeyDoc, 'organization_id' | 'user_id' | 'hash'>;
  const first = new Map<string, Listed>();
  const rest: Listed[] = [];
  for (const k of docs) {
    const id = ownerKeyId(k.organization_id, k.user_id, 0);
    if (first.has(id)) rest.push(k);
    else first.set(id, k);
  }
  const owners = [...first.keys()];
  const later: Listed[] = [];
  for (let i = 0; i < owners.length; i += 1000) {
    // Users without any listed key (the common case for a batch of new users) take number 0 at once.
    const chunk = owners.slice(i, i + 1000);
    await ApiKeyOwner.insertMany(chunk.map((id) => ({ _id: id, hash: first.get(id)!.hash })), { ordered: false }).catch(onlyDuplicates);
    const stored = new Map((await ApiKeyOwner.find({ _id: { $in: chunk } }).lean<{ _id: string; hash: string }[]>()).map((d) => [d._id, d.hash]));
    for (const id of chunk) if (stored.get(id) !== first.get(id)!.hash) later.push(first.get(id)!);
  }
  for (const k of [...later, ...rest]) await listKey(k, firstFree(await ownedKeys(k.organization_id, k.user_id)));
}

apiKeySchema.post('save', async function (doc: ApiKeyDoc) {
  await linkKeys([doc]);
  await listKeys([doc]);
});
apiKeySchema.post('insertMany', async function (docs: ApiKeyDoc[]) {
  await linkKeys(docs);
  await listKeys(docs);
});

export const Organization = mongoose.model<OrganizationDoc>('Organization', organizationSchema, 'organizations');
export const User = mongoose.model<UserDoc>('User', userSchema, 'users');
export const ApiKey = mongoose.model<ApiKeyDoc>('ApiKey', apiKeySchema, 'api_keys');
export const ApiKeyUsage = mongoose.model<{ key_id: string; last_used: Date }>('ApiKeyUsage', apiKeyUsageSchema, 'api_key_usage');
export const ApiKeySlot = mongoose.model<ApiKeySlotDoc>('ApiKeySlot', apiKeySlotSchema, 'api_key_slots');
export const ApiKeyRotation = mongoose.model<ApiKeyRotationDoc>('ApiKeyRotation', apiKeyRotationSchema, 'api_key_rotations');
