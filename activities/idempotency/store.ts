/**
 * The `Idempotency-Key` records' data; the only file that reads or writes their model. A record
 * is read and written by its `_id` (organization, user, route and key): the first request wins by
 * inserting it, and settling is an atomic conditional update (docs/storage.md, "Idempotency").
 */
import { byId, insertOnce, jsonText } from '../core/db/index.ts';
import { IdempotencyKey, type IdempotencyKeyDoc, type IdempotencyState } from './models.ts';

export type { IdempotencyState };

/** The first answer, stored as JSON text: results carry free-form keys neither server should interpret. */
const resultText = jsonText<unknown>(null);

/** A record as its readers see it: the stored answer decoded from its JSON text. */
export interface StoredClaim extends Omit<IdempotencyKeyDoc, 'result_json'> {
  result: unknown;
}

const claimOf = (d: IdempotencyKeyDoc): StoredClaim => ({
  ...d,
  result: d.result_json === null ? null : resultText.decode(d.result_json),
  created_at: new Date(d.created_at),
});

/** Inserts a running record; false when the key's record exists. */
export async function insertClaim(
  doc: Omit<StoredClaim, 'state' | 'result' | 'refusal_status' | 'refusal_detail' | 'created_at' | 'updated_at'>,
): Promise<boolean> {
  return insertOnce(IdempotencyKey, {
    ...doc,
    state: 'running',
    result_json: null,
    refusal_status: null,
    refusal_detail: null,
  });
}

export async function claimDoc(_id: string): Promise<StoredClaim | null> {
  const doc = await byId<IdempotencyKeyDoc>(IdempotencyKey, _id);
  return doc ? claimOf(doc) : null;
}

/** Deletes the record if it is still the one created at `created_at`. */
export async function dropClaim(_id: string, created_at: Date): Promise<void> {
  await IdempotencyKey.deleteOne({ _id, created_at });
}

/** The run's outcome, recorded only while the record is running (the first outcome counts): true when this call recorded it. */
export async function settleClaim(
  _id: string,
  outcome: { result: unknown } | { refusal: { status: number; detail: string } },
): Promise<boolean> {
  const $set =
    'refusal' in outcome
      ? { state: 'refused', refusal_status: outcome.refusal.status, refusal_detail: outcome.refusal.detail }
      : { state: 'succeeded', result_json: resultText.encode(outcome.result ?? null) };
  return (await IdempotencyKey.updateOne({ _id, state: 'running' }, { $set })).modifiedCount === 1;
}

/** Deletes records created before `before` (the created_at index; neither server has TTL indexes both honour). */
export async function purgeClaimsBefore(before: Date): Promise<number> {
  return (await IdempotencyKey.deleteMany({ created_at: { $lt: before } })).deletedCount ?? 0;
}

/**
 * The user's records (a user's export and erasure). The collection declares no index on the user
 * (records live IDEMPOTENCY_KEY_HOURS, then retention drops them): this filter reads it.
 */
export async function claimsOf(organization_id: string, user_id: string): Promise<StoredClaim[]> {
  const docs = await IdempotencyKey.find({ organization_id, user_id })
    .sort({ created_at: 1 })
    .lean<IdempotencyKeyDoc[]>();
  return docs.map(claimOf);
}

/** Deletes records by `_id`, 500 at a time (each batch answered from the primary key). */
export async function deleteClaims(ids: string[]): Promise<number> {
  let deleted = 0;
  for (let i = 0; i < ids.length; i += 500)
    deleted += (await IdempotencyKey.deleteMany({ _id: { $in: ids.slice(i, i + 500) } })).deletedCount ?? 0;
  return deleted;
}
