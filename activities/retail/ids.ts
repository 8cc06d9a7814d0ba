/**
 * Integer ids for brands, products and venues. Every id ever handed out has a row here
 * (`<kind>:<n>`, primary key), so ids are unique across processes and never reused after a
 * delete. Each process remembers the next free number and only reads the highest one again
 * after a collision.
 */
import mongoose, { Schema } from 'mongoose';
import { isDuplicateKey } from '../errors';
import { withKeyLock } from '../locks';

export type RetailKind = 'brand' | 'product' | 'venue';

const retailIdSchema = new Schema({ _id: { type: String, required: true }, kind: { type: String, required: true }, n: { type: Number, required: true } }, { versionKey: false });
retailIdSchema.index({ kind: 1, n: -1 });
const RetailId = mongoose.model<{ _id: string; kind: string; n: number }>('RetailId', retailIdSchema, 'retail_ids');

const next = new Map<RetailKind, number>();

async function highest(kind: RetailKind): Promise<number> {
  const top = await RetailId.findOne({ kind }, { n: 1 }).sort({ n: -1 }).lean();
  return top?.n ?? 0;
}

/** Reserves `count` consecutive new ids. */
export function allocateIds(kind: RetailKind, count = 1): Promise<number[]> {
  return withKeyLock(`retail-id:${kind}`, async () => {
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const first = next.get(kind) ?? (await highest(kind)) + 1;
      const ids = Array.from({ length: count }, (_, i) => first + i);
      try {
        await RetailId.insertMany(ids.map((n) => ({ _id: `${kind}:${n}`, kind, n })), { ordered: true });
        next.set(kind, first + count);
        return ids;
      } catch (err) {
        if (!isDuplicateKey(err) && !isDuplicateKey((err as { writeErrors?: unknown[] }).writeErrors?.[0])) throw err;
        // Another process took some of them: the part we inserted stays reserved (unused).
        next.delete(kind);
      }
    }
    throw new Error(`could not allocate a ${kind} id`);
  });
}
