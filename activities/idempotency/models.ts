/** The schema of `Idempotency-Key` records, imported by store.ts alone. */
import mongoose, { Schema } from 'mongoose';

/**
 * One `Idempotency-Key` of one user on one upload route: the request it was first used with
 * (SHA-256), the id of the run it started, and that run's first answer once known. The primary
 * key makes the first request win; a concurrent duplicate reads the winner's record.
 */
const idempotencyKeySchema = new Schema(
  {
    /** `<organization>:<user>:<route>:<key>`, each part URI-encoded so no part can borrow a `:` */
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    user_id: { type: String, required: true },
    route: { type: String, required: true },
    key: { type: String, required: true },
    request_sha256: { type: String, required: true },
    /** the media or scan id the run works on: its workflow id is derived from it */
    resource_id: { type: String, required: true },
    state: { type: String, required: true, enum: ['running', 'succeeded', 'refused'] },
    /** the first answer as JSON text: results carry free-form keys (store.ts) */
    result_json: { type: String, default: null },
    refusal_status: { type: Number, default: null },
    refusal_detail: { type: String, default: null },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: 'updated_at' }, versionKey: false },
);
// Retention deletes by age (a TTL index is not available on both servers).
idempotencyKeySchema.index({ created_at: 1 });

export type IdempotencyState = 'running' | 'succeeded' | 'refused';

export interface IdempotencyKeyDoc {
  _id: string;
  organization_id: string;
  user_id: string;
  route: string;
  key: string;
  request_sha256: string;
  resource_id: string;
  state: IdempotencyState;
  result_json: string | null;
  refusal_status: number | null;
  refusal_detail: string | null;
  created_at: Date;
  updated_at: Date;
}

export const IdempotencyKey = mongoose.model<IdempotencyKeyDoc>(
  'IdempotencyKey',
  idempotencyKeySchema,
  'idempotency_keys',
);
