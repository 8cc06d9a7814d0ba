/**
 * The normalized responses store: the one file that reads and writes `normalized_responses`.
 * Free-form metadata is JSON text (the db codec), so any keys survive FerretDB 1.x, which refuses
 * keys with `.` or `$`. Reads are answered from the declared indexes: a conversation's page by
 * (organization_id, conversation_id, created_at), a user's documents by (organization_id,
 * user_id, source, created_at), a retry's lookup by the unique response_id, the retention sweep
 * by created_at.
 */
import mongoose, { Schema } from 'mongoose';

import { isDuplicateKey, jsonText } from '../core/db/index.ts';

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
normalizedSchema.index({ organization_id: 1, user_id: 1, source: 1, created_at: -1 });
// the hourly retention sweep deletes by age alone: without this index it read the whole collection
normalizedSchema.index({ created_at: 1 });

interface NormalizedDoc {
  response_id: string;
  conversation_id: string;
  user_id: string;
  organization_id: string;
  source: string;
  message: string;
  metadata_json: string;
  created_at: Date;
}

const NormalizedResponse = mongoose.model<NormalizedDoc>(
  'NormalizedResponse',
  normalizedSchema,
  'normalized_responses',
);

const metadataText = jsonText<Record<string, unknown>>(() => ({}));

export type StoredResponse = Omit<NormalizedDoc, 'metadata_json'> & { metadata: Record<string, unknown> };

const decoded = ({ metadata_json, ...d }: NormalizedDoc): StoredResponse => ({
  ...d,
  metadata: metadataText.decode(metadata_json),
});

/** Inserts once per response_id: its time when this call stored it, null when it was there. */
export async function insertResponse(r: Omit<StoredResponse, 'created_at'>): Promise<Date | null> {
  const { metadata, ...rest } = r;
  try {
    return (await NormalizedResponse.create({ ...rest, metadata_json: metadataText.encode(metadata) })).created_at;
  } catch (err) {
    if (isDuplicateKey(err)) return null;
    throw err;
  }
}

/** By its unique response_id (a retry's answer, off the hot path). */
export async function responseById(response_id: string): Promise<StoredResponse | null> {
  const doc = await NormalizedResponse.findOne({ response_id }).lean<NormalizedDoc>();
  return doc ? decoded(doc) : null;
}

export async function conversationResponses(
  filter: { organization_id: string; conversation_id: string; user_id?: string },
  limit: number,
): Promise<StoredResponse[]> {
  const docs = await NormalizedResponse.find(filter).sort({ created_at: -1 }).limit(limit).lean<NormalizedDoc[]>();
  return docs.map(decoded);
}

/** A user's responses of one source (e.g. processed documents), optionally since a time. */
export async function userResponses(
  organization_id: string,
  user_id: string,
  source: string,
  since?: Date,
): Promise<StoredResponse[]> {
  const docs = await NormalizedResponse.find({
    organization_id,
    user_id,
    source,
    ...(since ? { created_at: { $gte: since } } : {}),
  }).lean<NormalizedDoc[]>();
  return docs.map(decoded);
}

export async function deleteResponsesBefore(cutoff: Date): Promise<number> {
  return (await NormalizedResponse.deleteMany({ created_at: { $lt: cutoff } })).deletedCount ?? 0;
}

export async function deleteConversation(
  organization_id: string,
  conversation_id: string,
  user_id: string,
): Promise<number> {
  return (await NormalizedResponse.deleteMany({ organization_id, conversation_id, user_id })).deletedCount ?? 0;
}

/** Every response of the user, any source (a user's export), by the (organization_id, user_id, …) index prefix. */
export async function allUserResponses(organization_id: string, user_id: string): Promise<StoredResponse[]> {
  const docs = await NormalizedResponse.find({ organization_id, user_id }).lean<NormalizedDoc[]>();
  return docs.map(decoded).sort((a, b) => new Date(a.created_at).getTime() - new Date(b.created_at).getTime());
}

/** Deletes every response of the user (erasure), by the same index prefix. */
export async function deleteUserResponses(organization_id: string, user_id: string): Promise<number> {
  return (await NormalizedResponse.deleteMany({ organization_id, user_id })).deletedCount ?? 0;
}
