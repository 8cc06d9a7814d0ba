/**
 * Rotation: a new key for the same user with the old key's permissions, rate limit and expiry
 * (within the calling key's own, as for any new key). It takes the old key's place under
 * MAX_KEYS_PER_USER, so a rotation never fails at the cap; the old key stays accepted for its
 * grace, then is refused as expired.
 *
 * Rotating a key that is itself a successor ends its predecessor's grace at once: a user never
 * holds more than one key living out a grace per place, however often it rotates.
 */
import { createHash } from 'node:crypto';
import { conflict, isDuplicateKey } from '../errors';
import { endOf, forgetKey, insertKey, type IssuedKey, type Principal } from './api-keys';
import { findKey, inheritedExpiry, inheritedRateLimit, requireRank } from './key-management';
import { endGrace, insertRotation, keysOfUser, moveSlot, rotationOf } from './store';

/** The longest grace a rotation may give the old key. */
export const MAX_GRACE_SECONDS = 7 * 24 * 3600;

/** The successor's key_id follows from the old one's, so the unique key_id lets one rotation win. */
const successorId = (key_id: string) => `key_${createHash('sha256').update(`rotated:${key_id}`).digest('base64url').slice(0, 16)}`;

export interface Rotated {
  issued: IssuedKey;
  previous: { key_id: string; status: 'expiring' | 'expired'; expires_at: string };
}

export async function rotateApiKey(
  actor: Principal,
  organization_id: string,
  user_id: string,
  keyOrId: string,
  opts: { grace_seconds: number; expires_at?: Date },
): Promise<Rotated> {
  const docs = await keysOfUser(organization_id, user_id);
  requireRank(actor, docs);
  const old = findKey(docs, keyOrId);
  const done = await rotationOf(old.key_id);
  if (old.status === 'revoked') throw conflict('API key is revoked; only an active key can be rotated');
  if (done) throw conflict(`API key was already rotated (to ${done.key_id})`);
  const now = Date.now();
  const end = endOf(old);
  if (end !== undefined && end <= now) throw conflict('API key has expired; only an active key can be rotated');

  const key_id = successorId(old.key_id);
  let issued: IssuedKey;
  try {
    issued = await insertKey(old, old.permissions, {
      key_id,
      slot: old.slot,
      created_by: actor.key_id,
      rate_limit_per_minute: inheritedRateLimit(actor.rate_limit_per_minute, old.rate_limit_per_minute),
      expires_at: inheritedExpiry(actor.expires_at, opts.expires_at ?? old.expires_at),
      rotated_from: old.key_id,
    });
  } catch (err) {
    if (isDuplicateKey(err)) throw conflict('API key was already rotated');
    throw err;
  }
  // The place passes to the new key before the old one enters its grace. Should the slot be gone
  // (the old key revoked meanwhile), the new key is still counted by the cap's count of keys.
  if (old.slot) await moveSlot(old.slot, old.key_id, key_id);
  const grace_until = new Date(Math.min(now + opts.grace_seconds * 1000, end ?? Infinity));
  await insertRotation({ _id: old.key_id, key_id, hash: old.hash, grace_until, created_at: new Date(now), changed_at: new Date(now) });
  forgetKey(old.hash);
  const predecessor = old.rotated_from ? docs.find((d) => d.key_id === old.rotated_from) : undefined;
  if (predecessor) {
    await endGrace(predecessor.key_id, new Date(now));
    forgetKey(predecessor.hash);
  }
  return {
    issued,
    previous: { key_id: old.key_id, status: grace_until.getTime() > now ? 'expiring' : 'expired', expires_at: grace_until.toISOString() },
  };
}
