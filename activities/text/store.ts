/**
 * The text store: the one file that reads and writes `text_embeddings`. An embedding is read by
 * `_id`; similarity search reads the organization's vectors of one engine (the
 * (organization_id, engine) index), a user's texts by the (organization_id, user_id) index.
 */
import mongoose, { Schema } from 'mongoose';

import { insertOnce } from '../core/db/index.ts';

const embeddingSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    user_id: { type: String, required: true },
    engine: { type: String, required: true },
    dimensions: { type: Number, required: true },
    vector: { type: [Number], required: true },
    file_path: { type: String, required: true },
    excerpt: { type: String, required: true },
    conversation_id: { type: String },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: false }, versionKey: false },
);
embeddingSchema.index({ organization_id: 1, user_id: 1 });
embeddingSchema.index({ organization_id: 1, engine: 1 });

export interface EmbeddingDoc {
  _id: string;
  organization_id: string;
  user_id: string;
  engine: string;
  dimensions: number;
  vector: number[];
  file_path: string;
  excerpt: string;
  conversation_id?: string;
  created_at: Date;
}

const TextEmbedding = mongoose.model<EmbeddingDoc>('TextEmbedding', embeddingSchema, 'text_embeddings');

/** false: the same text's embedding is already stored (a retried activity). */
export const insertEmbedding = (doc: Omit<EmbeddingDoc, 'created_at'>): Promise<boolean> =>
  insertOnce(TextEmbedding, doc);

export async function embeddingById(
  organization_id: string,
  _id: string,
  user_id?: string,
): Promise<EmbeddingDoc | null> {
  return TextEmbedding.findOne({ _id, organization_id, ...(user_id ? { user_id } : {}) }).lean<EmbeddingDoc>();
}

export async function embeddingsOf(filter: {
  organization_id: string;
  engine: string;
  user_id?: string;
}): Promise<EmbeddingDoc[]> {
  return TextEmbedding.find(filter).lean<EmbeddingDoc[]>();
}

/** A user's processed texts as search lists them (no vectors). */
export async function userTextExcerpts(
  organization_id: string,
  user_id: string,
): Promise<Array<{ _id: string; excerpt: string; file_path: string; created_at: Date }>> {
  return TextEmbedding.find({ organization_id, user_id }, { excerpt: 1, file_path: 1, created_at: 1 }).lean();
}

/** The user's embeddings without their vectors (a user's export), by the (organization_id, user_id) index. */
export async function userEmbeddings(
  organization_id: string,
  user_id: string,
): Promise<Array<Omit<EmbeddingDoc, 'vector'>>> {
  return TextEmbedding.find({ organization_id, user_id }, { vector: 0 }).sort({ created_at: 1 }).lean();
}

/** Deletes the user's embeddings (erasure), by the (organization_id, user_id) index. */
export async function deleteUserEmbeddings(organization_id: string, user_id: string): Promise<number> {
  return (await TextEmbedding.deleteMany({ organization_id, user_id })).deletedCount ?? 0;
}
