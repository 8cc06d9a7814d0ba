import mongoose, { Schema } from 'mongoose';

export const TIERS = ['free', 'business', 'enterprise'] as const;
export type Tier = (typeof TIERS)[number];

/** basic < admin < system_admin: a key holds its highest permission and everything below it. */
export const PERMISSIONS = ['basic', 'admin', 'system_admin'] as const;
export type Permission = (typeof PERMISSIONS)[number];

const organizationSchema = new Schema(
  {
    organization_id: { type: String, required: true, unique: true },
    name: { type: String, required: true },
    tier: { type: String, enum: TIERS, required: true },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: 'updated_at' }, versionKey: false },
);

const userSchema = new Schema(
  {
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
    /** the _id of the key's api_key_slots document while the key is active */
    slot: { type: String },
    /** refused from then on; set at creation only (a rotation's grace lives in api_key_rotations) */
    expires_at: { type: Date },
    /** the key this one replaced by rotation */
    rotated_from: { type: String },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: false }, versionKey: false },
);
apiKeySchema.index({ organization_id: 1, user_id: 1 });

/**
 * When each key was last used, apart from the key itself: FerretDB 1.x applies an update as a
 * read-modify-write of the whole document, so a usage write racing a revocation of the same
 * document could undo the revocation. Separate documents never race.
 */
const apiKeyUsageSchema = new Schema(
  {
    key_id: { type: String, required: true, unique: true },
    last_used: { type: Date, required: true },
  },
  { versionKey: false },
);

/**
 * One document per active key, `<organization>|<user>|<n>` with n below MAX_KEYS_PER_USER: the
 * unique _id caps a user's active keys even under concurrent creations (an insert guarded by a
 * unique key is the one thing FerretDB 1.x keeps exact). Revocation deletes the slot.
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
/** What most operations need to know of a user. */
export type UserRef = Pick<UserDoc, 'user_id' | 'idp_id' | 'organization_id'>;

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

export const Organization = mongoose.model<OrganizationDoc>('Organization', organizationSchema, 'organizations');
export const User = mongoose.model<UserDoc>('User', userSchema, 'users');
export const ApiKey = mongoose.model<ApiKeyDoc>('ApiKey', apiKeySchema, 'api_keys');
export const ApiKeyUsage = mongoose.model<{ key_id: string; last_used: Date }>('ApiKeyUsage', apiKeyUsageSchema, 'api_key_usage');
export const ApiKeySlot = mongoose.model<ApiKeySlotDoc>('ApiKeySlot', apiKeySlotSchema, 'api_key_slots');
export const ApiKeyRotation = mongoose.model<ApiKeyRotationDoc>('ApiKeyRotation', apiKeyRotationSchema, 'api_key_rotations');
