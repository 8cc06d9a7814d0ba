/**
 * Records the queries a piece of work sends to the database (mongoose's debug hook), so a test
 * can say which queries a hot path sends, and asks the server how it answers each one (`explain`):
 * the proof that a hot path is answered from an index on both servers, not by a scan that grows
 * with the data.
 */
import mongoose from 'mongoose';

const READS = new Set([
  'find',
  'findOne',
  'findOneAndUpdate',
  'findOneAndDelete',
  'updateOne',
  'updateMany',
  'deleteOne',
  'deleteMany',
  'countDocuments',
  'aggregate',
  'replaceOne',
  'distinct',
]);

export interface Query {
  collection: string;
  method: string;
  filter: Record<string, unknown>;
  /** The sort a find or findOneAndUpdate asked for, if any. */
  sort?: Record<string, 1 | -1>;
}

export async function queriesOf(work: () => Promise<unknown>): Promise<Query[]> {
  const seen: Query[] = [];
  mongoose.set('debug', (collection: string, method: string, ...args: unknown[]) => {
    if (!READS.has(method)) return;
    const options = (method === 'findOneAndUpdate' || method === 'findOneAndDelete' ? args.at(-1) : args[1]) as
      { sort?: Record<string, 1 | -1> } | undefined;
    seen.push({
      collection,
      method,
      filter: (args[0] ?? {}) as Record<string, unknown>,
      ...(options?.sort && Object.keys(options.sort).length ? { sort: options.sort } : {}),
    });
  });
  try {
    await work();
  } finally {
    mongoose.set('debug', false);
  }
  return seen;
}

export const show = (qs: Query[]) =>
  qs.map(
    (q) =>
      `${q.collection}.${q.method}(${JSON.stringify(q.filter)}${q.sort ? `, sort ${JSON.stringify(q.sort)}` : ''})`,
  );

/**
 * How the server answers a query: `index` when it reads only what an index finds (SQLite's plan
 * `SEARCH … USING INDEX` on the embedded server, `IXSCAN`/`IDHACK` on MongoDB), `scan` when it
 * reads the collection. An aggregate is judged by its first `$match`.
 */
export async function planOf(q: Query): Promise<{ answer: 'index' | 'scan'; plan: string }> {
  const db = mongoose.connection.db!;
  const filter =
    q.method === 'aggregate' ? (((q.filter as unknown as object[])[0] as { $match?: object })?.$match ?? {}) : q.filter;
  const res = await db.command({
    explain: { find: q.collection, filter, ...(q.sort ? { sort: q.sort } : {}) },
    verbosity: 'queryPlanner',
  });
  if (Array.isArray(res.queryPlanner?.Plan)) {
    const plan = (res.queryPlanner.Plan as string[]).map((row) => row.replace(/^.*detail=/, '')).join(' | ');
    // A sort the server does itself after an index search is fine; a scan of the table is not.
    const scans = /(^|\| )SCAN (?!.*USING (COVERING )?INDEX)/.test(plan);
    return {
      answer: /USING (COVERING |INTEGER PRIMARY KEY|PRIMARY KEY )?INDEX/.test(plan) && !scans ? 'index' : 'scan',
      plan,
    };
  }
  const text = JSON.stringify(res.queryPlanner?.winningPlan ?? {});
  return { answer: /IXSCAN|IDHACK|EXPRESS/.test(text) && !/COLLSCAN/.test(text) ? 'index' : 'scan', plan: text };
}

/** The queries of qs the server answers by reading the collection, with their plans (`[]` when none). */
export async function scans(qs: Query[]): Promise<string[]> {
  const out: string[] = [];
  for (const q of qs) {
    const { answer, plan } = await planOf(q);
    if (answer === 'scan') out.push(`${show([q])[0]} → ${plan}`);
  }
  return out;
}
