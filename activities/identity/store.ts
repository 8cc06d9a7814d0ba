/**
 * Identity's data: organizations, users, API keys and what hangs off a key (its last use, its
 * place under the per-user cap, its rotation). The only file that reads or writes identity's
 * models; everything else, other components included, calls these functions. Every read is by an
 * indexed field (models.ts). Why the key's satellites live apart, and the per-process caches in
 * front of this store: docs/storage.md, "Identity".
 */
import { insertOnce, markedOnce } from '../core/db/index.ts';
import { isDuplicateKey } from '../core/errors.ts';
import type { KeyOutcome } from './constants.ts';
import {
  ApiKey,
  ApiKeyCredits,
  type ApiKeyCreditsDoc,
  type ApiKeyDoc,
  ApiKeyRotation,
  type ApiKeyRotationDoc,
  ApiKeySlot,
  type ApiKeySlotDoc,
  ApiKeyUsage,
  ApiKeyUsageDay,
  type ApiKeyUsageDayDoc,
  ErasedPerson,
  type ErasedPersonDoc,
  ErasedUser,
  Organization,
  type OrganizationDoc,
  type Tier,
  User,
  type UserDoc,
} from './models.ts';

export type {
  ApiKeyCreditsDoc,
  ApiKeyDoc,
  ApiKeyRotationDoc,
  ApiKeySlotDoc,
  ApiKeyUsageDayDoc,
  OrganizationDoc,
  UserDoc,
};

// ---- organizations

export async function organizationDoc(organization_id: string): Promise<OrganizationDoc | null> {
  return Organization.findOne({ organization_id }).lean<OrganizationDoc>();
}

/** Throws the duplicate-key error when the id is taken. */
export async function insertOrganization(doc: {
  organization_id: string;
  name: string;
  tier: Tier;
}): Promise<OrganizationDoc> {
  return (await Organization.create(doc)).toObject();
}

/** Creates the organization unless it exists (concurrent starters included). */
export async function insertOrganizationOnce(doc: {
  organization_id: string;
  name: string;
  tier: Tier;
}): Promise<void> {
  if (await organizationDoc(doc.organization_id)) return;
  await insertOnce(Organization, doc);
}

export async function patchOrganization(
  organization_id: string,
  patch: { name?: string; tier?: Tier },
): Promise<OrganizationDoc | null> {
  return Organization.findOneAndUpdate({ organization_id }, { $set: patch }, { new: true }).lean<OrganizationDoc>();
}

// ---- users

export async function userById(organization_id: string, user_id: string): Promise<UserDoc | null> {
  return User.findOne({ user_id, organization_id }).lean<UserDoc>();
}

/** The user's shared rate limit (read with each key check). */
export async function userRateLimit(organization_id: string, user_id: string): Promise<number | undefined> {
  const u = await User.findOne({ user_id, organization_id }, { user_rate_limit_per_minute: 1 }).lean<
    Pick<UserDoc, 'user_rate_limit_per_minute'>
  >();
  return u?.user_rate_limit_per_minute ?? undefined;
}

/** By the unique (organization_id, idp_id) index. */
export async function userByIdp(organization_id: string, idp_id: string): Promise<UserDoc | null> {
  return User.findOne({ organization_id, idp_id }).lean<UserDoc>();
}

/**
 * Inserts a user; when (organization, idp_id) is taken (a concurrent creator), answers the
 * existing user instead, `created: false`.
 */
export async function insertUser(
  doc: Omit<UserDoc, 'created_at' | 'updated_at'>,
): Promise<{ user: UserDoc; created: boolean }> {
  try {
    return { user: (await User.create({ ...doc, ...emailLower(doc.email) })).toObject(), created: true };
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    const winner = await userByIdp(doc.organization_id, doc.idp_id);
    if (!winner) throw err;
    return { user: winner, created: false };
  }
}

export async function patchUser(
  user_id: string,
  set: Record<string, string | number>,
  unset: Record<string, 1> = {},
): Promise<UserDoc | null> {
  // The lower-cased email travels with the email: set, changed and removed together.
  const $set = typeof set.email === 'string' ? { ...set, ...emailLower(set.email) } : set;
  const $unset = unset.email ? { ...unset, email_lower: 1 } : unset;
  const update = {
    ...(Object.keys($set).length ? { $set } : {}),
    ...(Object.keys($unset).length ? { $unset } : {}),
  };
  return User.findOneAndUpdate({ user_id }, update, { new: true }).lean<UserDoc>();
}

const emailLower = (email: string | undefined) => (email === undefined ? {} : { email_lower: email.toLowerCase() });

// ---- the member list (GET /api/users)

/**
 * Which members a page lists: all of them (newest first), one by its platform user_id, those
 * whose idp_id starts with `prefix` (by idp_id), or those whose lower-cased email starts with
 * `prefix` and whose idp_id does not start with `idp_prefix` (by email: the ones an idp_id search
 * with the same text has not listed). Users being erased are never members.
 */
export type MemberMatch =
  { all: true } | { user_id: string } | { idp_prefix: string } | { email_prefix: string; idp_prefix: string };

/** Everything that starts with `prefix`, as a range: an index answers it on both servers (a regex it would not). */
const startsWith = (prefix: string) => ({ $gte: prefix, $lt: `${prefix}\u{10FFFF}` });

function memberQuery(organization_id: string, m: MemberMatch): { filter: object; sort: Record<string, 1 | -1> } {
  const base = { organization_id, erasing: null };
  if ('user_id' in m) return { filter: { ...base, user_id: m.user_id }, sort: { created_at: -1 } };
  if ('email_prefix' in m)
    return {
      filter: {
        organization_id,
        email_lower: startsWith(m.email_prefix),
        erasing: null,
        idp_id: { $not: startsWith(m.idp_prefix) },
      },
      sort: { email_lower: 1 },
    };
  if ('idp_prefix' in m)
    return { filter: { organization_id, idp_id: startsWith(m.idp_prefix), erasing: null }, sort: { idp_id: 1 } };
  return { filter: base, sort: { created_at: -1 } };
}

/**
 * A page of the organization's members: all of them on the (organization_id, erasing, created_at)
 * index, by user_id on its unique index, by idp_id prefix on the unique (organization_id, idp_id)
 * one, by email prefix on (organization_id, email_lower); each sorted by its index.
 */
export async function membersPage(
  organization_id: string,
  match: MemberMatch,
  skip: number,
  limit: number,
): Promise<UserDoc[]> {
  if (limit <= 0) return [];
  if ('email_prefix' in match) await emailsLowered();
  const { filter, sort } = memberQuery(organization_id, match);
  return User.find(filter).sort(sort).skip(skip).limit(limit).lean<UserDoc[]>();
}

export async function countMembers(organization_id: string, match: MemberMatch): Promise<number> {
  if ('email_prefix' in match) await emailsLowered();
  return User.countDocuments(memberQuery(organization_id, match).filter);
}

/**
 * Users written before `email_lower` existed get it once per database (its marker), a batch at a
 * time, before the first email search; every write of the store has set it since.
 */
async function lowerOldEmails(): Promise<boolean> {
  // One pass in _id order, a batch at a time: each batch reads on from the last, never the whole
  // collection again (a user changed meanwhile was written with email_lower).
  let after: unknown = null;
  for (;;) {
    const docs: { _id: unknown; email: string }[] = await User.find(
      { ...(after === null ? {} : { _id: { $gt: after } }), email: { $type: 'string' }, email_lower: null },
      { _id: 1, email: 1 },
    )
      .sort({ _id: 1 })
      .limit(500)
      .lean<{ _id: unknown; email: string }[]>();
    if (!docs.length) return true;
    await User.bulkWrite(
      docs.map((d) => ({
        updateOne: { filter: { _id: d._id, email: d.email }, update: { $set: { email_lower: d.email.toLowerCase() } } },
      })),
      { ordered: false },
    );
    after = docs[docs.length - 1]._id;
  }
}

let lowered: Promise<boolean> | undefined;
function emailsLowered(): Promise<boolean> {
  if (!lowered) {
    lowered = markedOnce('users:email_lower', lowerOldEmails);
    lowered.catch(() => (lowered = undefined));
  }
  return lowered;
}

// ---- API keys

export async function keyByHash(hash: string): Promise<ApiKeyDoc | null> {
  return ApiKey.findOne({ hash }).lean<ApiKeyDoc>();
}

export async function insertKeyDoc(doc: Omit<ApiKeyDoc, 'created_at' | 'status' | 'revoked_at'>): Promise<ApiKeyDoc> {
  return (await ApiKey.create(doc)).toObject();
}

export async function keyById(key_id: string): Promise<ApiKeyDoc | null> {
  return ApiKey.findOne({ key_id }).lean<ApiKeyDoc>();
}

type KeyFields = keyof ApiKeyDoc;

/** A user's keys, newest first (the (organization_id, user_id, created_at) index); `active` only the active ones. */
export async function keysOfUser<K extends KeyFields = KeyFields>(
  organization_id: string,
  user_id: string,
  opts: { active?: boolean; fields?: K[] } = {},
): Promise<Pick<ApiKeyDoc, K>[]> {
  const projection = opts.fields ? Object.fromEntries(opts.fields.map((f) => [f, 1])) : undefined;
  const filter = { organization_id, user_id, ...(opts.active ? { status: 'active' } : {}) };
  return ApiKey.find(filter, projection).sort({ created_at: -1 }).lean<Pick<ApiKeyDoc, K>[]>();
}

/** Which of the organization's keys a page lists (GET /api/keys): by stored status, one user's, or none of `not_users`'. */
export interface OrgKeyMatch {
  status?: ApiKeyDoc['status'];
  user_id?: string;
  not_users?: string[];
}

function orgKeyFilter(organization_id: string, m: OrgKeyMatch): object {
  return {
    organization_id,
    ...(m.status ? { status: m.status } : {}),
    ...(m.user_id ? { user_id: m.user_id } : m.not_users?.length ? { user_id: { $nin: m.not_users } } : {}),
  };
}

/**
 * A page of the organization's keys, newest first: on (organization_id, created_at), with a status
 * on (organization_id, status, created_at), one user's on (organization_id, user_id, created_at).
 */
export async function orgKeysPage(
  organization_id: string,
  match: OrgKeyMatch,
  skip: number,
  limit: number,
): Promise<ApiKeyDoc[]> {
  return ApiKey.find(orgKeyFilter(organization_id, match))
    .sort({ created_at: -1 })
    .skip(skip)
    .limit(limit)
    .lean<ApiKeyDoc[]>();
}

export async function countOrgKeys(organization_id: string, match: OrgKeyMatch): Promise<number> {
  return ApiKey.countDocuments(orgKeyFilter(organization_id, match));
}

/** The users of the organization holding an active key with one of `permissions` (the (organization_id, permissions) index). */
export async function usersHolding(organization_id: string, permissions: readonly string[]): Promise<string[]> {
  if (!permissions.length) return [];
  const keys = await ApiKey.find(
    { organization_id, permissions: { $in: permissions }, status: 'active' },
    { user_id: 1 },
  ).lean<Pick<ApiKeyDoc, 'user_id'>[]>();
  return [...new Set(keys.map((k) => k.user_id))];
}

/** Revokes an active key (an atomic conditional update); false when it was not active. */
export async function markKeyRevoked(doc: Pick<ApiKeyDoc, 'hash' | 'key_id'>, at = new Date()): Promise<boolean> {
  const res = await ApiKey.updateOne(
    { hash: doc.hash, key_id: doc.key_id, status: 'active' },
    { $set: { status: 'revoked', revoked_at: at } },
  );
  return res.modifiedCount > 0;
}

/** When each key was last used (as written: see writeLastUses). */
export async function lastUsedOf(key_ids: string[]): Promise<Map<string, Date>> {
  if (!key_ids.length) return new Map();
  const docs = await ApiKeyUsage.find({ key_id: { $in: key_ids } }, { key_id: 1, last_used: 1 }).lean<
    { key_id: string; last_used: Date }[]
  >();
  return new Map(docs.map((u) => [u.key_id, u.last_used]));
}

const isDuplicate = (code: unknown) => code === 11000;

/**
 * Records last uses, in one command: each key's `last_used` only moves forward (`$max`), so
 * batches of several processes, or a late one, never set it back. A key's usage document is
 * created under `_id` = key_id; one written before usage was keyed that way (an ObjectId `_id`,
 * refused as a duplicate key_id) and a creation racing another process's are updated by key_id.
 */
export async function writeLastUses(uses: ReadonlyMap<string, Date>): Promise<void> {
  if (!uses.size) return;
  const op = (key_id: string, filter: object, upsert: boolean) => ({
    updateOne: { filter, update: { $max: { last_used: uses.get(key_id)! }, $setOnInsert: { key_id } }, upsert },
  });
  const ids = [...uses.keys()];
  let again: string[] = [];
  try {
    await ApiKeyUsage.bulkWrite(
      ids.map((id) => op(id, { _id: id }, true)),
      { ordered: false },
    );
  } catch (err) {
    const errors = (err as { writeErrors?: { index: number; code?: number; err?: { code?: number } }[] }).writeErrors;
    if (!errors?.length || errors.some((e) => !isDuplicate(e.code ?? e.err?.code))) throw err;
    again = errors.map((e) => ids[e.index]);
  }
  if (again.length)
    await ApiKeyUsage.bulkWrite(
      again.map((id) => op(id, { key_id: id }, false)),
      { ordered: false },
    );
}

/** Sets and removes a key's name, meta and credits reference (never its state: creation and revocation write that). */
export async function setKeyProfile(
  key_id: string,
  set: Partial<Pick<ApiKeyDoc, 'name' | 'meta' | 'credits_id'>>,
  unset: ('name' | 'meta' | 'credits_id')[],
): Promise<ApiKeyDoc | null> {
  const update = {
    ...(Object.keys(set).length ? { $set: set } : {}),
    ...(unset.length ? { $unset: Object.fromEntries(unset.map((f) => [f, 1])) } : {}),
  };
  if (!Object.keys(update).length) return keyById(key_id);
  return ApiKey.findOneAndUpdate({ key_id }, update, { new: true }).lean<ApiKeyDoc>();
}

// ---- credits

export async function creditsOf(ids: string[]): Promise<Map<string, ApiKeyCreditsDoc>> {
  if (!ids.length) return new Map();
  const docs = await ApiKeyCredits.find({ _id: { $in: [...new Set(ids)] } }).lean<ApiKeyCreditsDoc[]>();
  return new Map(docs.map((d) => [d._id, d]));
}

export async function creditsDoc(id: string): Promise<ApiKeyCreditsDoc | null> {
  return ApiKeyCredits.findById(id).lean<ApiKeyCreditsDoc>();
}

/** Sets a key's credits whole (an admin's change): the count, the refill and the refill clock. */
export async function writeCredits(doc: ApiKeyCreditsDoc): Promise<ApiKeyCreditsDoc> {
  await ApiKeyCredits.replaceOne({ _id: doc._id }, doc, { upsert: true });
  return doc;
}

export async function deleteCredits(id: string): Promise<void> {
  await ApiKeyCredits.deleteOne({ _id: id });
}

/**
 * Spends one credit when one is left and no refill is due (refilled since the current day's or
 * month's start): one conditional decrement, so concurrent requests never spend more than there
 * is. Answers what remains, or null when nothing was spent (none left, a refill due, or no credits).
 */
export async function decrementCredit(id: string, dayStart: Date, monthStart: Date): Promise<number | null> {
  const doc = await ApiKeyCredits.findOneAndUpdate(
    {
      _id: id,
      remaining: { $gte: 1 },
      $or: [
        { refill_interval: { $exists: false } },
        { refill_interval: 'daily', refilled_at: { $gte: dayStart } },
        { refill_interval: 'monthly', refilled_at: { $gte: monthStart } },
      ],
    },
    { $inc: { remaining: -1 } },
    { new: true }, // no projection: the embedded server refuses one on findAndModify
  ).lean<ApiKeyCreditsDoc>();
  return doc ? doc.remaining : null;
}

/**
 * The refill due and this request's credit in one write, won by one request of those that found
 * the refill due (the condition on the last refill's time): false for the others, which spend
 * from the refilled credits instead.
 */
export async function refillAndSpend(id: string, lastRefill: Date, remaining: number, now: Date): Promise<boolean> {
  const res = await ApiKeyCredits.updateOne(
    { _id: id, refilled_at: lastRefill },
    { $set: { remaining, refilled_at: now } },
  );
  return res.modifiedCount > 0;
}

// ---- usage by day and outcome

/** Adds counts to each key's day (`$inc` upserts, one command): several processes' additions all land. */
export async function addUsageDays(
  rows: { key_id: string; organization_id: string; day: string; counts: Partial<Record<KeyOutcome, number>> }[],
): Promise<void> {
  if (!rows.length) return;
  await ApiKeyUsageDay.bulkWrite(
    rows.map((r) => ({
      updateOne: {
        filter: { _id: `${r.key_id}|${r.day}` },
        update: { $inc: r.counts, $setOnInsert: { key_id: r.key_id, organization_id: r.organization_id, day: r.day } },
        upsert: true,
      },
    })),
    { ordered: false },
  );
}

/** A key's days from `fromDay` (YYYY-MM-DD, inclusive), by the (key_id, day) index. */
export async function usageDaysOf(key_id: string, fromDay: string): Promise<ApiKeyUsageDayDoc[]> {
  return ApiKeyUsageDay.find({ key_id, day: { $gte: fromDay } })
    .sort({ day: 1 })
    .lean<ApiKeyUsageDayDoc[]>();
}

/** An erased user's keys' usage days and credits. */
export async function deleteKeySatellites(key_ids: string[], credits_ids: string[]): Promise<void> {
  if (key_ids.length) await ApiKeyUsageDay.deleteMany({ key_id: { $in: key_ids } });
  if (credits_ids.length) await ApiKeyCredits.deleteMany({ _id: { $in: credits_ids } });
}

// ---- rotations

/** The rotations of the given keys, by old key_id. */
export async function rotationsOf(key_ids: string[]): Promise<Map<string, ApiKeyRotationDoc>> {
  if (!key_ids.length) return new Map();
  const docs = await ApiKeyRotation.find({ _id: { $in: [...new Set(key_ids)] } }).lean<ApiKeyRotationDoc[]>();
  return new Map(docs.map((d) => [d._id, d]));
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
  await ApiKeyRotation.updateOne(
    { _id: old_key_id, grace_until: { $gt: now } },
    { $set: { grace_until: now, changed_at: now } },
  );
}

// ---- slots: a user's places under MAX_KEYS_PER_USER

export const slotOwner = (organization_id: string, user_id: string) => `${organization_id}|${user_id}`;
const slotId = (owner: string, n: number) => `${owner}|${n}`;

/** The owner's places (the owner index). */
export async function slotsOf(owner: string): Promise<ApiKeySlotDoc[]> {
  return ApiKeySlot.find({ owner }).lean<ApiKeySlotDoc[]>();
}

/**
 * A place for `key_id` among the owner's first `cap` that `taken` (slotsOf, just read) left
 * free, or null when there was none or concurrent takers won each: every place is an insert under
 * its unique `_id`, so two takers never share one and the cap holds under any concurrency. The
 * free places are tried in random order, so concurrent takers seldom try the same one.
 */
export async function takeKeySlot(
  owner: string,
  key_id: string,
  cap: number,
  taken: readonly ApiKeySlotDoc[],
): Promise<string | null> {
  const held = new Set(taken.map((s) => s._id));
  const free = Array.from({ length: cap }, (_, n) => slotId(owner, n)).filter((id) => !held.has(id));
  for (let i = free.length - 1; i > 0; i -= 1) {
    const j = Math.floor(Math.random() * (i + 1));
    [free[i], free[j]] = [free[j], free[i]];
  }
  for (const _id of free) if (await insertOnce(ApiKeySlot, { _id, key_id, owner, created_at: new Date() })) return _id;
  return null;
}

/** Frees the place if `key_id` still holds it; true when it did. */
export async function freeSlot(slot: string, key_id: string): Promise<boolean> {
  return ((await ApiKeySlot.deleteOne({ _id: slot, key_id })).deletedCount ?? 0) > 0;
}

/** Hands the place from one key to another; true when `from_key_id` held it (and now `to_key_id` does). */
export async function moveSlot(slot: string, from_key_id: string, to_key_id: string): Promise<boolean> {
  return (
    (await ApiKeySlot.updateOne({ _id: slot, key_id: from_key_id }, { $set: { key_id: to_key_id } })).modifiedCount > 0
  );
}

/** The state (status, expiry, slot) of the given keys, by key_id. */
export async function keyStates(
  key_ids: string[],
): Promise<Map<string, Pick<ApiKeyDoc, 'key_id' | 'status' | 'expires_at' | 'slot'>>> {
  if (!key_ids.length) return new Map();
  const keys = await ApiKey.find({ key_id: { $in: key_ids } }, { key_id: 1, status: 1, expires_at: 1, slot: 1 }).lean<
    Pick<ApiKeyDoc, 'key_id' | 'status' | 'expires_at' | 'slot'>[]
  >();
  return new Map(keys.map((k) => [k.key_id, k]));
}

// ---- a user's erasure (erasure.ts)

/** The user's document even while it is being erased (every other read hides such a user). */
export async function userDocForErasure(organization_id: string, user_id: string): Promise<UserDoc | null> {
  return User.findOne({ user_id, organization_id }).lean<UserDoc>();
}

/** The tombstones of those of `user_ids` being erased (their keys are not yet tombstoned). */
export async function erasingTombstones(organization_id: string, user_ids: string[]): Promise<Map<string, string>> {
  if (!user_ids.length) return new Map();
  const rows = await User.find(
    { organization_id, user_id: { $in: user_ids }, erasing: { $type: 'string' } },
    { _id: 0, user_id: 1, erasing: 1 },
  ).lean<{ user_id: string; erasing: string }[]>();
  return new Map(rows.map((r) => [r.user_id, r.erasing]));
}

/** Marks the user as being erased: gone for every reader. Its idp_id is still held; a second call changes nothing. */
export async function markUserErasing(organization_id: string, user_id: string, tombstone: string): Promise<void> {
  await User.updateOne(
    { user_id, organization_id, erasing: { $in: [null, tombstone] } },
    { $set: { erasing: tombstone }, $unset: { email: 1, email_lower: 1, display_name: 1 } },
  );
}

/** Frees the idp_id of a user being erased for a new user (it becomes the tombstone); a second call changes nothing. */
export async function freeIdp(organization_id: string, user_id: string, tombstone: string): Promise<void> {
  await User.updateOne({ user_id, organization_id, erasing: tombstone }, { $set: { idp_id: tombstone } });
}

export async function deleteUserDoc(organization_id: string, user_id: string): Promise<number> {
  return (await User.deleteOne({ user_id, organization_id })).deletedCount ?? 0;
}

/** The user's keys keep their ids (the audit trail names them) with the person replaced by the tombstone. */
export async function tombstoneKeysOf(organization_id: string, user_id: string, tombstone: string): Promise<number> {
  // A key's name and meta are an admin's words about the person: they go with the person.
  const res = await ApiKey.updateMany(
    { organization_id, user_id },
    { $set: { user_id: tombstone, idp_id: tombstone }, $unset: { name: 1, meta: 1, credits_id: 1 } },
  );
  return res.modifiedCount;
}

export async function deleteSlotsOf(owner: string): Promise<number> {
  return (await ApiKeySlot.deleteMany({ owner })).deletedCount ?? 0;
}

export async function recordErasedUser(organization_id: string, user_id: string, at = new Date()): Promise<void> {
  await ErasedUser.updateOne({ _id: `${organization_id}|${user_id}` }, { $set: { at } }, { upsert: true });
}

/** Users erased since `since` (a small collection: a day of erasures). */
export async function erasedUsersSince(since: Date): Promise<{ organization_id: string; user_id: string }[]> {
  const docs = await ErasedUser.find({ at: { $gte: since } }).lean<{ _id: string }[]>();
  return docs.map((d) => {
    const i = d._id.lastIndexOf('|');
    return { organization_id: d._id.slice(0, i), user_id: d._id.slice(i + 1) };
  });
}

export async function pruneErasedUsers(before: Date): Promise<void> {
  await ErasedUser.deleteMany({ at: { $lt: before } });
}

// ---- erased people (once-only rules across an erasure: docs/privacy.md)

export const erasedPerson = (marker: string) => ErasedPerson.findById(marker).lean<ErasedPersonDoc>();

/**
 * Adds one erasure's facts to the person's marker, created on first use. Keyed by the erasure: the
 * filter skips a marker that has it already, and the upsert's insert then collides on `_id` (a
 * repeat, nothing to add).
 */
export async function rememberErasedPerson(
  marker: string,
  organization_id: string,
  erasure: string,
  joined_at: Date,
  facts: Record<string, unknown>,
): Promise<void> {
  try {
    await ErasedPerson.updateOne(
      { _id: marker, 'erasures.erasure': { $ne: erasure } },
      {
        $push: { erasures: { erasure, facts } },
        $min: { first_joined_at: joined_at },
        $setOnInsert: { organization_id },
      },
      { upsert: true },
    );
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
  }
}

/** Flags a new account as a returning person's, found after it was inserted. */
export async function markReturning(user_id: string): Promise<UserDoc | null> {
  return User.findOneAndUpdate({ user_id }, { $set: { returning: true } }, { new: true }).lean<UserDoc>();
}
