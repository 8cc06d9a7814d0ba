/**
 * Rotation: a new key for the same user with the old key's permissions, rate limit, expiry (within
 * the calling key's own, as for any new key), name, meta and credits (the same credits, spent by
 * both keys while the old one is in its grace); each key keeps its own usage.
 *
 * Every key that still authenticates holds a place under MAX_KEYS_PER_USER, the old key through
 * its grace included: else rotating with a long grace and then revoking the successor would free
 * a place while the old key keeps working, one more working key (and per-key budget) each round.
 * So the successor takes a place that stops being used at that moment, or a free one:
 * - with no grace, the old key's own place (the old key is refused at once): never fails at the cap;
 * - when the old key is itself a successor, its predecessor's place (rotating a successor ends
 *   its predecessor's grace at once, so a user never holds more than one key in grace per chain);
 * - else a free place, 409 naming the cap when there is none.
 * A place is taken before the successor is written and given back if the write fails, so
 * concurrent creations and rotations never exceed the cap. The old key's place frees when its
 * grace ends (key-management.ts releases the places of keys that stopped working).
 */
import { createHash } from 'node:crypto';

import { noteChange } from '../core/audit-note.ts';
import { conflict, isDuplicateKey } from '../core/errors.ts';
import { endOf, forgetKey, insertKey, type IssuedKey, type Principal } from './api-keys.ts';
import { findKey, inheritedExpiry, inheritedRateLimit, requireRank, takePlace, usableCount } from './key-management.ts';
import { type ApiKeyDoc, endGrace, freeSlot, insertRotation, keysOfUser, moveSlot, rotationOf } from './store.ts';

/** The longest grace a rotation may give the old key. */
export const MAX_GRACE_SECONDS = 7 * 24 * 3600;

/** The successor's key_id follows from the old one's, so the unique key_id lets one rotation win. */
const successorId = (key_id: string) =>
  `key_${createHash('sha256').update(`rotated:${key_id}`).digest('base64url').slice(0, 16)}`;

export interface Rotated {
  issued: IssuedKey;
  previous: { key_id: string; status: 'expiring' | 'expired'; expires_at: string };
}

/** A place taken for the successor, and how to give it back should the successor not be written. */
interface Place {
  slot: string;
  undo: () => Promise<unknown>;
}

/**
 * The place of `handing` (a key that stops working with this rotation) when it still holds it,
 * else a free one. Moving it first leaves `handing` working without a place only until this
 * rotation ends its grace, a few writes later.
 */
async function placeFor(
  user: Pick<ApiKeyDoc, 'organization_id' | 'user_id'>,
  key_id: string,
  handing: Pick<ApiKeyDoc, 'key_id' | 'slot'> | undefined,
  docs: ApiKeyDoc[],
): Promise<Place> {
  const from = handing?.slot ? { slot: handing.slot, key_id: handing.key_id } : undefined;
  if (from && (await moveSlot(from.slot, from.key_id, key_id)))
    return { slot: from.slot, undo: () => moveSlot(from.slot, key_id, from.key_id) };
  const why = 'the rotated key keeps its place through its grace: rotate with grace_seconds 0, or revoke a key first';
  // `handing` stops working with this rotation either way: it is not counted.
  const slot = await takePlace(user, key_id, await usableCount(docs.filter((d) => d.key_id !== handing?.key_id)), why);
  return { slot, undo: () => freeSlot(slot, key_id) };
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
  const grace_until = new Date(Math.min(now + opts.grace_seconds * 1000, end ?? Infinity));
  const inGrace = grace_until.getTime() > now;
  const predecessor = old.rotated_from ? docs.find((d) => d.key_id === old.rotated_from) : undefined;

  const key_id = successorId(old.key_id);
  const place = await placeFor(old, key_id, inGrace ? predecessor : old, docs);
  let issued: IssuedKey;
  try {
    issued = await insertKey(old, old.permissions, {
      key_id,
      slot: place.slot,
      created_by: actor.key_id,
      rate_limit_per_minute: inheritedRateLimit(actor.rate_limit_per_minute, old.rate_limit_per_minute),
      expires_at: inheritedExpiry(actor.expires_at, opts.expires_at ?? old.expires_at),
      rotated_from: old.key_id,
      // The successor is the same key to its admins: its name, meta and credits (shared, not copied).
      name: old.name,
      meta: old.meta,
      credits_id: old.credits_id,
    });
  } catch (err) {
    await place.undo().catch(() => false);
    if (isDuplicateKey(err)) throw conflict('API key was already rotated');
    throw err;
  }
  await insertRotation({
    _id: old.key_id,
    key_id,
    hash: old.hash,
    grace_until,
    created_at: new Date(now),
    changed_at: new Date(now),
  });
  noteChange('rotated_to', null, key_id);
  noteChange('status', 'active', inGrace ? 'expiring' : 'expired');
  forgetKey(old.hash);
  if (predecessor) {
    await endGrace(predecessor.key_id, new Date(now));
    forgetKey(predecessor.hash);
    // Its place, unless handed on above (freeSlot changes nothing for a place it no longer holds).
    if (predecessor.slot) await freeSlot(predecessor.slot, predecessor.key_id);
  }
  return {
    issued,
    previous: { key_id: old.key_id, status: inGrace ? 'expiring' : 'expired', expires_at: grace_until.toISOString() },
  };
}
