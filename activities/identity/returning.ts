/**
 * A person who joins again after their erasure (docs/privacy.md, "What an erasure never
 * reopens"). The erasure leaves a marker per organization: a keyed hash of the idp_id (no person
 * can be read or guessed from it without the configuration key, which is outside the database)
 * naming the tombstones of the person's erased accounts. A new account with that idp_id starts
 * with a zero balance and carries those tombstones (`earlier`), so the once-only rules, which
 * look at what the tombstones' kept records received, count it as the same person.
 */
import { keyedHash } from '../core/encryption.ts';
import { erasedPerson, patchEarlier, rememberErasedPerson, type UserDoc } from './store.ts';

const markerOf = (organization_id: string, idp_id: string) => `${organization_id}|${keyedHash('erased-person', `${organization_id}\u0000${idp_id}`)}`;

/** Called as the erasure begins, before the idp_id is freed: a new account made after that finds the marker. */
export async function rememberErasedAccount(user: UserDoc, idp_id: string, tombstone: string): Promise<void> {
  await rememberErasedPerson(markerOf(user.organization_id, idp_id), user.organization_id, [...(user.earlier ?? []), tombstone], user.first_joined_at ?? user.created_at);
}

export interface EarlierAccounts {
  earlier: string[];
  first_joined_at: Date;
}

/** The person's erased accounts in the organization, or null for someone never erased here. */
export async function earlierAccountsOf(organization_id: string, idp_id: string): Promise<EarlierAccounts | null> {
  const doc = await erasedPerson(markerOf(organization_id, idp_id));
  return doc ? { earlier: doc.tombstones, first_joined_at: doc.first_joined_at } : null;
}

/**
 * After a new user's insert: an erasure of the same person that began between the read before
 * the insert and the insert itself (it writes its marker before it frees the idp_id, so the
 * insert could only succeed after the marker was there) is caught by reading again.
 */
export async function settleEarlier(user: UserDoc, before: EarlierAccounts | null): Promise<UserDoc> {
  const after = await earlierAccountsOf(user.organization_id, user.idp_id);
  if (!after || after.earlier.length === (before?.earlier.length ?? 0)) return user;
  return (await patchEarlier(user.user_id, after.earlier, after.first_joined_at)) ?? user;
}
