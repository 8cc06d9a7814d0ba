/**
 * Records the queries a piece of work sends to the database (mongoose's debug hook), so a test
 * can say which filters a hot path uses: the proof that it is answered by `_id` or a declared
 * index on both servers, not by a scan that grows with the data.
 */
import mongoose from 'mongoose';

const READS = new Set(['find', 'findOne', 'findOneAndUpdate', 'updateOne', 'updateMany', 'deleteOne', 'deleteMany', 'countDocuments', 'aggregate', 'replaceOne', 'distinct']);

export interface Query {
  collection: string;
  method: string;
  filter: Record<string, unknown>;
}

export async function queriesOf(work: () => Promise<unknown>): Promise<Query[]> {
  const seen: Query[] = [];
  mongoose.set('debug', (collection: string, method: string, ...args: unknown[]) => {
    if (READS.has(method)) seen.push({ collection, method, filter: (args[0] ?? {}) as Record<string, unknown> });
  });
  try {
    await work();
  } finally {
    mongoose.set('debug', false);
  }
  return seen;
}

export const show = (qs: Query[]) => qs.map((q) => `${q.collection}.${q.method}(${JSON.stringify(q.filter)})`);
