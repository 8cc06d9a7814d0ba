/**
 * Identity's part of a user's export and erasure (docs/privacy.md). The erasure has two ends: it
 * begins here (the user disappears for every reader, every key is revoked; then, once the once-only
 * facts are gathered, the person's marker is written and the idp_id freed for a new user) before any other component erases, and ends here (the user's document is deleted and
 * its keys keep only their ids, for the audit trail) after all of them.
 */
import type { ExportPart, OnceFacts, UserScope } from '../core/user-data.ts';
import { forgetKey, lastUses } from './api-keys.ts';
import { slotOwner } from './key-management.ts';
import { rememberErasedAccount } from './returning.ts';
import {
  deleteKeySatellites,
  deleteSlotsOf,
  deleteUserDoc,
  freeIdp,
  freeSlot,
  keysOfUser,
  markKeyRevoked,
  markUserErasing,
  pruneErasedUsers,
  recordErasedUser,
  tombstoneKeysOf,
  usageDaysOf,
  userDocForErasure,
} from './store.ts';
import { forgetUserRef, isTombstone } from './users.ts';

const iso = (d: Date | undefined | null) => (d ? new Date(d).toISOString() : null);

/** The user's profile and keys (never a key's hash or secret: its id, prefix and state). */
export async function exportIdentity({ organization_id, user_id }: UserScope): Promise<ExportPart> {
  const user = await userDocForErasure(organization_id, user_id);
  const keys = await keysOfUser(organization_id, user_id);
  const used = await lastUses(keys.map((k) => k.key_id));
  const usage = (await Promise.all(keys.map((k) => usageDaysOf(k.key_id, '0000-00-00')))).flat();
  return {
    data: {
      user: user
        ? [
            {
              user_id: user.user_id,
              idp_id: user.idp_id,
              organization_id,
              email: user.email ?? null,
              display_name: user.display_name ?? null,
              user_rate_limit_per_minute: user.user_rate_limit_per_minute ?? null,
              created_at: iso(user.created_at),
              updated_at: iso(user.updated_at),
            },
          ]
        : [],
      api_keys: keys.map((k) => ({
        key_id: k.key_id,
        key: `pk_${k.prefix}…`,
        permissions: k.permissions,
        status: k.status,
        created_at: iso(k.created_at),
        revoked_at: iso(k.revoked_at),
        expires_at: iso(k.expires_at),
        last_used: iso(used.get(k.key_id)),
        name: k.name ?? null,
        meta: k.meta ?? null,
      })),
      api_key_usage_days: usage.map((d) => ({
        key_id: d.key_id,
        day: d.day,
        success: d.success ?? 0,
        client_error: d.client_error ?? 0,
        forbidden: d.forbidden ?? 0,
        rate_limited: d.rate_limited ?? 0,
        no_credits: d.no_credits ?? 0,
        server_error: d.server_error ?? 0,
      })),
    },
    files: [],
  };
}

/** The first end: gone for readers, idp_id freed, keys revoked. Safe to repeat. */
export async function beginIdentityErasure(
  { organization_id, user_id }: UserScope,
  tombstone: string,
): Promise<{ keys_revoked: number }> {
  // Gone for every reader; the idp_id stays held until the marker is written (releaseIdp).
  await markUserErasing(organization_id, user_id, tombstone);
  forgetUserRef(organization_id, user_id);
  await recordErasedUser(organization_id, user_id);
  let keys_revoked = 0;
  for (const key of await keysOfUser(organization_id, user_id, { active: true })) {
    if (await markKeyRevoked(key)) keys_revoked += 1;
    forgetKey(key.hash);
    if (key.slot) await freeSlot(key.slot, key.key_id);
  }
  return { keys_revoked };
}

/**
 * After the first end and the once-only facts gathered (privacy/erasures.ts): the person's marker
 * written with them, then the idp_id freed, in that order, so a new account made with the idp_id
 * always finds the marker. Safe to repeat: the marker keys the facts by the erasure.
 */
export async function releaseIdp(
  { organization_id, user_id, idp_id }: UserScope,
  tombstone: string,
  erasure: string,
  facts: Record<string, OnceFacts>,
): Promise<void> {
  const user = await userDocForErasure(organization_id, user_id);
  if (!user) return;
  if (!isTombstone(idp_id)) await rememberErasedAccount(user, idp_id, erasure, facts);
  await freeIdp(organization_id, user_id, tombstone);
  forgetUserRef(organization_id, user_id);
}

/** Whether the user's idp_id is still held (the first end's marker not written yet). */
export async function idpHeld(organization_id: string, user_id: string): Promise<boolean> {
  const user = await userDocForErasure(organization_id, user_id);
  return !!user && !isTombstone(user.idp_id);
}

/** The last end: the user's document deleted, its keys tombstoned, every process told. Safe to repeat. */
export async function finishIdentityErasure(
  { organization_id, user_id }: UserScope,
  tombstone: string,
): Promise<{ user_deleted: number; keys_tombstoned: number }> {
  // Keys revoked meanwhile are revoked again (an admin may have acted between the two ends).
  for (const key of await keysOfUser(organization_id, user_id, { active: true })) {
    await markKeyRevoked(key);
    forgetKey(key.hash);
  }
  await deleteSlotsOf(slotOwner(organization_id, user_id));
  // Before the tombstone, which drops the credits reference: the usage days and credits of the keys.
  const all = await keysOfUser(organization_id, user_id, { fields: ['key_id', 'credits_id'] });
  await deleteKeySatellites(
    all.map((k) => k.key_id),
    all.flatMap((k) => (k.credits_id ? [k.credits_id] : [])),
  );
  const keys_tombstoned = await tombstoneKeysOf(organization_id, user_id, tombstone);
  const user_deleted = await deleteUserDoc(organization_id, user_id);
  forgetUserRef(organization_id, user_id);
  const now = new Date();
  await recordErasedUser(organization_id, user_id, now);
  await pruneErasedUsers(new Date(now.getTime() - 86_400_000));
  return { user_deleted, keys_tombstoned };
}
