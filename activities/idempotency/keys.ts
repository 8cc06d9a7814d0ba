/**
 * `Idempotency-Key` records of the upload routes (see edge/idempotency.ts). A key lives
 * IDEMPOTENCY_KEY_HOURS from its first use: retried uploads come within minutes, and the record
 * keeps the first answer, so a retry is answered even after Temporal's namespace retention has
 * dropped the run. Older records are replaced on next use and deleted by the hourly retention run.
 */
import { PlatformError } from '../core/errors.ts';
import {
  claimDoc,
  dropClaim,
  type IdempotencyState,
  insertClaim,
  purgeClaimsBefore,
  settleClaim,
  type StoredClaim,
} from './store.ts';

const IDEMPOTENCY_KEY_HOURS = 24;
const LIFETIME_MS = IDEMPOTENCY_KEY_HOURS * 3_600_000;

/** A request's claim on its key; `resource_id` is the id a run started by this request works on, used only if this request is the first. */
export type IdempotencyClaim = Pick<
  StoredClaim,
  'organization_id' | 'user_id' | 'route' | 'key' | 'request_sha256' | 'resource_id'
>;

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

const recordId = (c: Pick<IdempotencyClaim, 'organization_id' | 'user_id' | 'route' | 'key'>) =>
  [c.organization_id, c.user_id, c.route, c.key].map(encodeURIComponent).join(':');

function viewOf(
  doc: Pick<
    StoredClaim,
    '_id' | 'request_sha256' | 'resource_id' | 'state' | 'result' | 'refusal_status' | 'refusal_detail'
  >,
  created: boolean,
): IdempotencyRecord {
  return {
    id: doc._id,
    created,
    request_sha256: doc.request_sha256,
    resource_id: doc.resource_id,
    state: doc.state,
    result: doc.result,
    refusal: doc.refusal_status === null ? null : { status: doc.refusal_status, detail: doc.refusal_detail ?? '' },
  };
}

/** Inserts the key's record, or answers the record an earlier request with this key made. */
export async function claimIdempotencyKey(input: IdempotencyClaim): Promise<IdempotencyRecord> {
  const _id = recordId(input);
  for (let attempt = 0; attempt < 3; attempt += 1) {
    if (await insertClaim({ _id, ...input }))
      return viewOf(
        { _id, ...input, state: 'running', result: null, refusal_status: null, refusal_detail: null },
        true,
      );
    const held = await claimDoc(_id);
    if (!held) continue; // deleted by retention meanwhile
    if (Date.now() - held.created_at.getTime() <= LIFETIME_MS) return viewOf(held, false);
    // Expired: forget it, unless another request has just done so and claimed it again.
    await dropClaim(_id, held.created_at);
  }
  throw new PlatformError(
    'conflict',
    'Idempotency-Key: this key is being reused concurrently; retry the request',
    'Idempotency-Key',
  );
}

/**
 * Records how the key's run ended: its answer, or the refusal (4xx) every retry gets too. Answers
 * whether this call recorded it: only the first outcome counts, so a concurrent duplicate that
 * waited for the same run learns that another request with the key answered first.
 */
export async function settleIdempotencyKey(input: {
  id: string;
  result?: unknown;
  refusal?: { status: number; detail: string };
}): Promise<boolean> {
  return settleClaim(input.id, input.refusal ? { refusal: input.refusal } : { result: input.result });
}

/** Retention: deletes the records older than IDEMPOTENCY_KEY_HOURS. */
export async function purgeIdempotencyKeys(): Promise<{ deleted: number }> {
  return { deleted: await purgeClaimsBefore(new Date(Date.now() - LIFETIME_MS)) };
}
