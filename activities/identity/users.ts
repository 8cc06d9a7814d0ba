import { isDuplicateKey, notFound } from '../errors';
import { newId } from '../ids';
import { findOrganization } from './organizations';
import { User, type UserDoc, type UserRef } from './models';

export interface UserView {
  user_id: string;
  idp_id: string;
  organization_id: string;
  email: string | null;
  display_name: string | null;
  /** requests a minute shared by all of the user's keys; null: none beyond each key's own */
  user_rate_limit_per_minute: number | null;
  created_at: string;
  updated_at: string;
}

export function viewUser(u: UserDoc): UserView {
  return {
    user_id: u.user_id,
    idp_id: u.idp_id,
    organization_id: u.organization_id,
    email: u.email ?? null,
    display_name: u.display_name ?? null,
    user_rate_limit_per_minute: u.user_rate_limit_per_minute ?? null,
    created_at: u.created_at.toISOString(),
    updated_at: u.updated_at.toISOString(),
  };
}

/**
 * A user's ids never change and users are never deleted, so a resolved reference is remembered
 * per process (FerretDB 1.x answers field queries by scanning the collection).
 */
const refs = new Map<string, UserRef>();
const refKey = (organization_id: string, ref: string) => `${organization_id}\u0000${ref}`;
function remember(u: UserRef): void {
  if (refs.size > 200_000) refs.clear();
  const ref: UserRef = { user_id: u.user_id, idp_id: u.idp_id, organization_id: u.organization_id };
  refs.set(refKey(u.organization_id, u.user_id), ref);
  refs.set(refKey(u.organization_id, u.idp_id), ref);
}

/** Looks a reference up in the organization: first as a platform user_id, then as an idp_id. */
export async function findUser(organization_id: string, ref: string): Promise<UserDoc | null> {
  const byId = await User.findOne({ organization_id, user_id: ref }).lean<UserDoc>();
  const user = byId ?? (await User.findOne({ organization_id, idp_id: ref }).lean<UserDoc>());
  if (user) remember(user);
  return user;
}

/** findUser for callers that need only the ids: answered from memory when seen before. */
export async function findUserRef(organization_id: string, ref: string): Promise<UserRef | null> {
  return refs.get(refKey(organization_id, ref)) ?? findUser(organization_id, ref);
}

async function requireOrganization(organization_id: string): Promise<void> {
  if (!(await findOrganization(organization_id))) throw notFound(`Organization not found: ${organization_id}`);
}

/** `usr_…` names a platform user_id: such a reference is never taken as a new user's idp_id. */
export const isPlatformUserId = (ref: string): boolean => ref.startsWith('usr_');

/**
 * Resolves a user reference, creating the user with the reference as its idp_id when unknown.
 * An unknown `usr_…` is 404: it names a user of some organization (perhaps another one), and
 * creating it here would make a user whose idp_id is someone else's id. Safe under concurrency:
 * the (organization, idp_id) index is unique.
 */
export async function resolveOrCreateUser(
  organization_id: string,
  ref: string,
  extra: { email?: string; display_name?: string } = {},
): Promise<UserDoc> {
  const found = await findUser(organization_id, ref);
  if (found) return found;
  if (isPlatformUserId(ref)) throw notFound(`User not found: ${ref}`);
  await requireOrganization(organization_id);
  try {
    const doc = (await User.create({ user_id: newId('usr'), organization_id, idp_id: ref, ...extra })).toObject();
    remember(doc);
    return doc;
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    const winner = await User.findOne({ organization_id, idp_id: ref }).lean<UserDoc>();
    if (!winner) throw err;
    remember(winner);
    return winner;
  }
}

/** resolveOrCreateUser for callers that need only the ids. */
export async function resolveOrCreateUserRef(organization_id: string, ref: string): Promise<UserRef> {
  return refs.get(refKey(organization_id, ref)) ?? resolveOrCreateUser(organization_id, ref);
}

/** POST /api/users: idempotent on idp_id; a repeat fills in fields that were missing. */
export async function upsertUser(input: { organization_id: string; idp_id: string; email?: string; display_name?: string }): Promise<{ user: UserView; created: boolean }> {
  const existing = await User.findOne({ organization_id: input.organization_id, idp_id: input.idp_id }).lean<UserDoc>();
  if (existing) {
    const patch: Record<string, string> = {};
    if (input.email !== undefined) patch.email = input.email;
    if (input.display_name !== undefined) patch.display_name = input.display_name;
    const updated = Object.keys(patch).length
      ? await User.findOneAndUpdate({ user_id: existing.user_id }, { $set: patch }, { new: true }).lean<UserDoc>()
      : existing;
    return { user: viewUser(updated ?? existing), created: false };
  }
  const user = await resolveOrCreateUser(input.organization_id, input.idp_id, { email: input.email, display_name: input.display_name });
  return { user: viewUser(user), created: true };
}

export async function getUser(organization_id: string, ref: string): Promise<UserView> {
  const user = await findUser(organization_id, ref);
  if (!user) throw notFound(`User not found: ${ref}`);
  return viewUser(user);
}

export async function updateUser(
  organization_id: string,
  ref: string,
  patch: { email?: string | null; display_name?: string | null; user_rate_limit_per_minute?: number | null },
): Promise<UserView> {
  const user = await findUser(organization_id, ref);
  if (!user) throw notFound(`User not found: ${ref}`);
  const set: Record<string, string | number> = {};
  const unset: Record<string, 1> = {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) continue;
    if (v === null) unset[k] = 1;
    else set[k] = v;
  }
  const updated = await User.findOneAndUpdate({ user_id: user.user_id }, { $set: set, ...(Object.keys(unset).length ? { $unset: unset } : {}) }, { new: true }).lean<UserDoc>();
  return viewUser(updated!);
}
