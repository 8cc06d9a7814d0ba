/**
 * Normalized responses stored per conversation by every processing component (images now;
 * documents, text and support later). Free-form metadata is stored as JSON text so any keys
 * survive FerretDB 1.x, which refuses keys with `.` or `$`.
 */
import mongoose, { Schema } from 'mongoose';
import { isDuplicateKey } from '../errors';

const normalizedSchema = new Schema(
  {
    /** the producing workflow's id: a retried activity stores nothing twice */
    response_id: { type: String, required: true, unique: true },
    conversation_id: { type: String, required: true },
    user_id: { type: String, required: true },
    organization_id: { type: String, required: true },
    source: { type: String, required: true },
    message: { type: String, required: true },
    metadata_json: { type: String, required: true },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: false }, versionKey: false },
);
normalizedSchema.index({ organization_id: 1, conversation_id: 1, created_at: -1 });

export interface NormalizedDoc {
  response_id: string;
  conversation_id: string;
  user_id: string;
  organization_id: string;
  source: string;
  message: string;
  metadata_json: string;
  created_at: Date;
}

export const NormalizedResponse = mongoose.model<NormalizedDoc>('NormalizedResponse', normalizedSchema, 'normalized_responses');

export interface NormalizedInput {
  response_id: string;
  conversation_id: string;
  user_id: string;
  organization_id: string;
  source: string;
  message: string;
  metadata: Record<string, unknown>;
}

/** Idempotent on response_id: a retry answers with the first record's time. */
export async function storeNormalizedResponse(input: NormalizedInput): Promise<{ response_id: string; created: boolean; created_at: string }> {
  try {
    const doc = await NormalizedResponse.create({ ...input, metadata_json: JSON.stringify(input.metadata) });
    return { response_id: input.response_id, created: true, created_at: doc.created_at.toISOString() };
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    const first = await NormalizedResponse.findOne({ response_id: input.response_id }).lean<NormalizedDoc>();
    return { response_id: input.response_id, created: false, created_at: (first?.created_at ?? new Date()).toISOString() };
  }
}

export async function listNormalizedResponses(organization_id: string, conversation_id: string, user_id?: string) {
  const filter: Record<string, string> = { organization_id, conversation_id };
  if (user_id) filter.user_id = user_id;
  const docs = await NormalizedResponse.find(filter).sort({ created_at: -1 }).limit(100).lean<NormalizedDoc[]>();
  return docs.map((d) => ({
    response_id: d.response_id,
    source: d.source,
    message: d.message,
    metadata: JSON.parse(d.metadata_json) as Record<string, unknown>,
    created_at: d.created_at.toISOString(),
  }));
}

/** Retention (run hourly by the Temporal Schedule `retention:normalized-responses:<task queue>`). */
export async function purgeNormalizedResponses(input: { retention_days: number }): Promise<{ deleted: number; cutoff: string | null }> {
  if (!input.retention_days) return { deleted: 0, cutoff: null };
  const cutoff = new Date(Date.now() - input.retention_days * 86_400_000);
  const res = await NormalizedResponse.deleteMany({ created_at: { $lt: cutoff } });
  return { deleted: res.deletedCount ?? 0, cutoff: cutoff.toISOString() };
}

/** Deleting a conversation removes what was stored for it. */
export async function deleteConversationResponses(organization_id: string, conversation_id: string, user_id: string): Promise<number> {
  const res = await NormalizedResponse.deleteMany({ organization_id, conversation_id, user_id });
  return res.deletedCount ?? 0;
}
