/**
 * In-process mutual exclusion per key: work for one key runs one at a time, in arrival order.
 * It spares optimistic writers from racing each other inside one process; correctness across
 * processes still comes from the database's unique indexes.
 */
const tails = new Map<string, Promise<unknown>>();

export async function withKeyLock<T>(key: string, work: () => Promise<T>): Promise<T> {
  const previous = tails.get(key) ?? Promise.resolve();
  const run = previous.then(work, work);
  const tail = run.catch(() => undefined);
  tails.set(key, tail);
  try {
    return await run;
  } finally {
    if (tails.get(key) === tail) tails.delete(key);
  }
}
