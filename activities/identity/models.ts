/**
 * Identity's schemas, imported by store.ts alone. Every lookup is by a field its schema indexes
 * (an organization by organization_id, a user by user_id or (organization, idp_id), a key by hash
 * or key_id, a user's keys by (organization, user, created_at), a key's last use by key_id, a
 * user's places by owner; the member list and the organization's keys by organization first).
 * New documents take their `_id` from that field (idFrom); documents written before that have an
 * ObjectId and are found by the same queries.
 */
import mongoose, { Schema } from 'mongoose';

import { idFrom } from '../core/db/index.ts';
import {
  type KeyOutcome,
  type Permission,
  REFILL_INTERVALS,
  type RefillInterval,
  type Tier,
  TIERS,
} from './constants.ts';

export { type Tier };

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
    /** the email lower-cased, kept with it by every write of the store (store.ts): the member search's prefix match */
    email_lower: { type: String },
    display_name: { type: String },
    /** requests a minute shared by all of the user's keys (set by an admin); unset: none */
    user_rate_limit_per_minute: { type: Number },
    /** set when the user's erasure begins (the tombstone): the user is gone for every reader from then on */
    erasing: { type: String },
    /** a person erased here before (returning.ts): the once-only rules read their marker */
    returning: { type: Boolean },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: 'updated_at' }, versionKey: false },
);
userSchema.index({ organization_id: 1, idp_id: 1 }, { unique: true });
// The member list (GET /api/users): newest first without the users being erased, and a prefix of the email.
userSchema.index({ organization_id: 1, erasing: 1, created_at: -1 });
userSchema.index({ organization_id: 1, email_lower: 1 });

/**
 * Users erased lately (`_id` `<organization>|<user_id>`), read by every process once a second so
 * its cache of user references drops them (users.ts). Kept a day: a process started since then
 * never cached them.
 */
const erasedUserSchema = new Schema(
  { _id: { type: String, required: true }, at: { type: Date, required: true } },
  { versionKey: false },
);
// Every process reads the last moments' erasures once a second (users.ts): from the index, not a scan.
erasedUserSchema.index({ at: 1 });

/**
 * An erased person, kept so that once-only rewards stay once (docs/privacy.md): `_id`
 * `<organization>|<keyed hash of the idp_id>` (core/encryption.ts keyedHash: the key is outside
 * the database, so no one can be read or guessed from it), when the person first joined, and per
 * erasure of theirs (by the erasure's key) the once-only facts each component gathered.
 */
const erasedPersonSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    first_joined_at: { type: Date, required: true },
    erasures: {
      type: [{ _id: false, erasure: { type: String, required: true }, facts: { type: Schema.Types.Mixed } }],
      default: [],
    },
  },
  { versionKey: false, timestamps: { createdAt: 'created_at', updatedAt: 'updated_at' }, minimize: false },
);

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
    /** set by an admin (PATCH /api/keys/{key_id}); a rotation hands them to the successor */
    name: { type: String },
    meta: { type: Schema.Types.Mixed },
    /** the key's credits (api_key_credits `_id`) while it has some; shared with its successor by rotation */
    credits_id: { type: String },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: false }, versionKey: false },
);
apiKeySchema.index({ organization_id: 1, user_id: 1, created_at: -1 });
// The organization's keys (GET /api/keys), newest first, all or by stored status; the users holding a higher key.
apiKeySchema.index({ organization_id: 1, created_at: -1 });
apiKeySchema.index({ organization_id: 1, status: 1, created_at: -1 });
apiKeySchema.index({ organization_id: 1, permissions: 1 });

/**
 * When each key was last used, apart from the key itself: usage is written in batches a moment
 * after the requests (api-keys.ts), and a late batch must never touch the key's own document,
 * whose revocation it could otherwise race.
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
 * A key's credits (`_id`: the key_id of the key they were first set on; a rotation's successor
 * points to the same document): spent one per request by a conditional decrement, refilled to
 * `refill_amount` lazily by the first request of a new UTC day or month (credits.ts).
 */
const apiKeyCreditsSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    remaining: { type: Number, required: true },
    refill_amount: { type: Number },
    refill_interval: { type: String, enum: REFILL_INTERVALS },
    /** the last refill (or when the credits were set): the next is due at the next period's start */
    refilled_at: { type: Date, required: true },
  },
  { versionKey: false },
);

/**
 * A key's requests per UTC day and outcome (`_id` `<key_id>|<YYYY-MM-DD>`), added to by every edge
 * process with `$inc` a few seconds after the requests (key-usage.ts); read by (key_id, day).
 */
const apiKeyUsageDaySchema = new Schema(
  {
    _id: { type: String, required: true },
    key_id: { type: String, required: true },
    organization_id: { type: String, required: true },
    day: { type: String, required: true },
    success: { type: Number, default: 0 },
    client_error: { type: Number, default: 0 },
    forbidden: { type: Number, default: 0 },
    rate_limited: { type: Number, default: 0 },
    no_credits: { type: Number, default: 0 },
    server_error: { type: Number, default: 0 },
  },
  { versionKey: false },
);
apiKeyUsageDaySchema.index({ key_id: 1, day: 1 });

/**
 * One document per usable key (a rotated key in its grace included), `<organization>|<user>|<n>`
 * with n below MAX_KEYS_PER_USER: the unique _id caps a user's working keys even under concurrent
 * creations and rotations, and each place names the key holding it, so releasing the place of a
 * key that stopped working (or was never written) is one conditional delete. A user's places are
 * read by `owner` (indexed). Revocation deletes the slot; a key that expired or whose grace ended
 * leaves it to be released.
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
apiKeySlotSchema.index({ owner: 1 });

/**
 * One document per rotated key, `_id` the old key's key_id, written once the new key exists: the
 * old key is refused after `grace_until`. Kept apart from the key's own document, which only its
 * creation and its revocation write. `changed_at` tells the edge
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
  email_lower?: string;
  display_name?: string;
  user_rate_limit_per_minute?: number;
  erasing?: string;
  returning?: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface ErasedPersonDoc {
  _id: string;
  organization_id: string;
  first_joined_at: Date;
  erasures: { erasure: string; facts?: Record<string, unknown> }[];
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
  name?: string;
  meta?: Record<string, unknown>;
  credits_id?: string;
  created_at: Date;
}
export interface ApiKeyCreditsDoc {
  _id: string;
  organization_id: string;
  remaining: number;
  refill_amount?: number;
  refill_interval?: RefillInterval;
  refilled_at: Date;
}
export type ApiKeyUsageDayDoc = { _id: string; key_id: string; organization_id: string; day: string } & Record<
  KeyOutcome,
  number
>;
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

export const Organization = mongoose.model<OrganizationDoc>('Organization', organizationSchema, 'organizations');
export const User = mongoose.model<UserDoc>('User', userSchema, 'users');
export const ErasedUser = mongoose.model<{ _id: string; at: Date }>(
  'ErasedUser',
  erasedUserSchema,
  'identity_erased_users',
);
export const ErasedPerson = mongoose.model<ErasedPersonDoc>(
  'ErasedPerson',
  erasedPersonSchema,
  'identity_erased_people',
);
export const ApiKey = mongoose.model<ApiKeyDoc>('ApiKey', apiKeySchema, 'api_keys');
export const ApiKeyUsage = mongoose.model<{ key_id: string; last_used: Date }>(
  'ApiKeyUsage',
  apiKeyUsageSchema,
  'api_key_usage',
);
export const ApiKeyCredits = mongoose.model<ApiKeyCreditsDoc>('ApiKeyCredits', apiKeyCreditsSchema, 'api_key_credits');
export const ApiKeyUsageDay = mongoose.model<ApiKeyUsageDayDoc>(
  'ApiKeyUsageDay',
  apiKeyUsageDaySchema,
  'api_key_usage_days',
);
export const ApiKeySlot = mongoose.model<ApiKeySlotDoc>('ApiKeySlot', apiKeySlotSchema, 'api_key_slots');
export const ApiKeyRotation = mongoose.model<ApiKeyRotationDoc>(
  'ApiKeyRotation',
  apiKeyRotationSchema,
  'api_key_rotations',
);
