/**
 * Integer ids for brands, products and venues. Every id ever handed out has a row here
 * (`<kind>:<n>`, primary key), so ids are unique across processes and never reused after a
 * delete. Each process remembers the next free number and only reads the highest one again
 * after a collision.
 */
import { isDuplicateKey } from '../core/errors.ts';
import { withKeyLock } from '../core/locks.ts';
import type { RetailKind } from './constants.ts';
import { highestRetailId, reserveRetailIds } from './store.ts';

export type { RetailKind };

const next = new Map<RetailKind, number>();

/** Reserves `count` consecutive new ids. */
export function allocateIds(kind: RetailKind, count = 1): Promise<number[]> {
  return withKeyLock(`retail-id:${kind}`, async () => {
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const first = next.get(kind) ?? (await highestRetailId(kind)) + 1;
      const ids = Array.from({ length: count }, (_, i) => first + i);
      try {
        await reserveRetailIds(kind, ids);
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
