/**
 * A person who joins again after their erasure (docs/privacy.md, "What an erasure never
 * reopens"). As an erasure begins, before the idp_id is freed, it leaves a marker per
 * organization: `_id` a keyed hash of the idp_id (no person can be read or guessed from it without
 * the configuration key, which is outside the database), holding when the person first joined and
 * the once-only facts each component gathered (counts, flags, other users' ids: never the person,
 * never a link to the erased account's kept records). A new account with that idp_id starts with
 * a zero balance and is flagged `returning`; the once-only rules read the facts back through it.
 */
import { keyedHash } from '../core/encryption.ts';
import type { OnceFacts } from '../core/user-data.ts';
import { erasedPerson, markReturning, rememberErasedPerson, type UserDoc } from './store.ts';

const markerOf = (organization_id: string, idp_id: string) =>
  `${organization_id}|${keyedHash('erased-person', `${organization_id}\u0000${idp_id}`)}`;

/**
 * Records one erasure's facts under the person's marker (created on first use). `erasure` keys the
 * record: a repeat after a crash adds nothing twice.
 */
export async function rememberErasedAccount(
  user: UserDoc,
  idp_id: string,
  erasure: string,
  facts: Record<string, OnceFacts>,
): Promise<void> {
  // The erasure is named by a keyed hash too: its key names the erased account, which the marker must not.
  await rememberErasedPerson(
    markerOf(user.organization_id, idp_id),
    user.organization_id,
    keyedHash('erased-account', erasure),
    user.created_at,
    facts,
  );
}

export interface Returning {
  /** when the person's first account here was created */
  first_joined_at: Date;
  /** one entry per erased account: each component's facts about it */
  facts: Record<string, OnceFacts>[];
}

/** The person's marker read back: when they first joined and each erased account's facts; null for someone never erased here. */
export async function returningByIdp(organization_id: string, idp_id: string): Promise<Returning | null> {
  const doc = await erasedPerson(markerOf(organization_id, idp_id));
  return doc
    ? {
        first_joined_at: doc.first_joined_at,
        facts: doc.erasures.map((e) => (e.facts ?? {}) as Record<string, OnceFacts>),
      }
    : null;
}

/** Whether a person with this idp_id was erased here before (a new account's insert sets `returning` from it). */
export const wasErased = async (organization_id: string, idp_id: string) =>
  (await returningByIdp(organization_id, idp_id)) !== null;

/**
 * After a new user's insert: an erasure of the same person that began between the read before the
 * insert and the insert itself (it writes its marker before it frees the idp_id, so the insert
 * could only succeed after the marker was there) is caught by reading again.
 */
export async function settleReturning(user: UserDoc): Promise<UserDoc> {
  if (user.returning || !(await wasErased(user.organization_id, user.idp_id))) return user;
  return (await markReturning(user.user_id)) ?? user;
}
