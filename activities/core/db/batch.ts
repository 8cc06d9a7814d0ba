/**
 * Batched writes for group commit (core/group-commit.ts): one command for many documents, and
 * each document's own outcome, so one caller's duplicate key fails that caller alone.
 */
import type { mongo } from 'mongoose';

import { ItemFailure } from '../group-commit.ts';

interface WriteErrorLike {
  index: number;
  code?: number;
  errmsg?: string;
  err?: { code?: number; errmsg?: string };
}

/** The per-document errors of a failed bulk command (the driver answers one or an array). */
function writeErrorsOf(err: unknown): WriteErrorLike[] | undefined {
  const found = (err as { writeErrors?: WriteErrorLike | WriteErrorLike[] } | null)?.writeErrors;
  if (!found) return undefined;
  return Array.isArray(found) ? found : [found];
}

/** One write error as an error of its own, carrying the server's code (isDuplicateKey reads it). */
function itemError(e: WriteErrorLike): Error & { code?: number } {
  const code = e.code ?? e.err?.code;
  return Object.assign(new Error(e.errmsg ?? e.err?.errmsg ?? `write error ${code}`), { code });
}

/**
 * Inserts the documents in one unordered `insertMany`: each is true when written, or an
 * ItemFailure with its own error (a duplicate key). A failure of the command as a whole throws.
 * Both servers apply an unordered insert document by document and report each refused one by
 * its index (docs/storage.md, "Group commit"). Fields left undefined, at any depth, are not
 * written (as a model would leave them out).
 */
export async function insertEach(
  collection: mongo.Collection<mongo.Document>,
  docs: mongo.Document[],
): Promise<(true | ItemFailure)[]> {
  const out: (true | ItemFailure)[] = docs.map(() => true);
  if (!docs.length) return out;
  try {
    await collection.insertMany(docs, { ordered: false, ignoreUndefined: true });
  } catch (err) {
    const errors = writeErrorsOf(err);
    if (!errors?.length) throw err;
    for (const e of errors) out[e.index] = new ItemFailure(itemError(e));
  }
  return out;
}

/**
 * Inserts consecutive documents in one ordered `insertMany`, stopping at the first refused one:
 * answers how many were written (from the first) and the error that stopped the rest.
 */
export async function insertInOrder(
  collection: mongo.Collection<mongo.Document>,
  docs: mongo.Document[],
): Promise<{ written: number; error?: Error & { code?: number } }> {
  if (!docs.length) return { written: 0 };
  try {
    await collection.insertMany(docs, { ordered: true, ignoreUndefined: true });
    return { written: docs.length };
  } catch (err) {
    const first = writeErrorsOf(err)?.[0];
    if (!first) throw err;
    return { written: first.index, error: itemError(first) };
  }
}
