/**
 * `Idempotency-Key` records of the upload routes (see edge/idempotency.ts). A key lives
 * IDEMPOTENCY_KEY_HOURS from its first use: retried uploads come within minutes, and the record
 * keeps the first answer, so a retry is answered even after Temporal's namespace retention has
 * dropped the run. Older records are replaced on next use and deleted by the hourly retention run.
 */
import { isDuplicateKey, PlatformError } from '../errors';
import { IdempotencyKey, type IdempotencyKeyDoc, type IdempotencyState } from './models';

export const IDEMPOTENCY_KEY_HOURS = 24;
const LIFETIME_MS = IDEMPOTENCY_KEY_HOURS * 3_600_000;

export interface IdempotencyClaim {
  organization_id: string;
  user_id: string;
  route: string;
  key: string;
  request_sha256: string;
  /** the id a run started by this request works on, used only if this request is the first */
  resource_id: string;
}

export interface IdempotencyRecord {
  id: string;
  /** this request made the record: nobody else can have started its run */
  created: boolean;
  request_sha256: string;
  resource_id: string;
  state: IdempotencyState;
  result: unknown;
  refusal: { status: number; detail: string } | null;
}

const recordId = (c: Pick<IdempotencyClaim, 'organization_id' | 'user_id' | 'route' | 'key'>) => [c.organization_id, c.user_id, c.route, c.key].map(encodeURIComponent).join(':');

function viewOf(doc: Pick<IdempotencyKeyDoc, '_id' | 'request_sha256' | 'resource_id' | 'state' | 'result_json' | 'refusal_status' | 'refusal_detail'>, created: boolean): IdempotencyRecord {
  return {
    id: doc._id,
    created,
    request_sha256: doc.request_sha256,
    resource_id: doc.resource_id,
    state: doc.state,
    result: doc.result_json === null ? null : JSON.parse(doc.result_json),
    refusal: doc.refusal_status === null ? null : { status: doc.refusal_status, detail: doc.refusal_detail ?? '' },
  };
}

/** Inserts the key's record, or answers the record an earlier request with this key made. */
export async function claimIdempotencyKey(input: IdempotencyClaim): Promise<IdempotencyRecord> {
  const _id = recordId(input);
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const fresh = { _id, ...input, state: 'running' as const, result_json: null, refusal_status: null, refusal_detail: null };
    try {
      await IdempotencyKey.create(fresh);
      return viewOf(fresh, true);
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    const held = await IdempotencyKey.findById(_id).lean<IdempotencyKeyDoc>();
    if (!held) continue; // deleted by retention meanwhile
    if (Date.now() - new Date(held.created_at).getTime() <= LIFETIME_MS) return viewOf(held, false);
    // Expired: forget it, unless another request has just done so and claimed it again.
    await IdempotencyKey.deleteOne({ _id, created_at: held.created_at });
  }
  throw new PlatformError(409, 'Idempotency-Key: this key is being reused concurrently; retry the request', 'Idempotency-Key');
}

/** Records how the key's run ended: its answer, or the refusal (4xx) every retry gets too. */
export async function settleIdempotencyKey(input: { id: string; result?: unknown; refusal?: { status: number; detail: string } }): Promise<void> {
  const $set = input.refusal
    ? { state: 'refused', refusal_status: input.refusal.status, refusal_detail: input.refusal.detail }
    : { state: 'succeeded', result_json: JSON.stringify(input.result ?? null) };
  // Only the first outcome counts: concurrent duplicates settle with the same run's answer.
  await IdempotencyKey.updateOne({ _id: input.id, state: 'running' }, { $set });
}

/** Retention: deletes the records older than IDEMPOTENCY_KEY_HOURS. */
export async function purgeIdempotencyKeys(): Promise<{ deleted: number }> {
  const res = await IdempotencyKey.deleteMany({ created_at: { $lt: new Date(Date.now() - LIFETIME_MS) } });
  return { deleted: res.deletedCount ?? 0 };
}
