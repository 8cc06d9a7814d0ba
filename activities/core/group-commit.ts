/**
 * One write for many concurrent callers: `add(item)` resolves once `write` has stored the item, and
 * every item added while a write runs goes into the next one (at most `max`). Under load N callers
 * cost about one command instead of N; alone, a caller waits for its own write only. A failed write
 * fails every caller of that batch.
 */
export function groupCommit<T>(write: (items: T[]) => Promise<void>, max = 500): (item: T) => Promise<void> {
  let waiting: { item: T; resolve: () => void; reject: (err: unknown) => void }[] = [];
  let running = false;
  const drain = async () => {
    running = true;
    try {
      while (waiting.length) {
        const batch = waiting.slice(0, max);
        waiting = waiting.slice(max);
        try {
          await write(batch.map((w) => w.item));
          for (const w of batch) w.resolve();
        } catch (err) {
          for (const w of batch) w.reject(err);
        }
      }
    } finally {
      running = false;
    }
  };
  return (item) =>
    new Promise<void>((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      if (!running) void drain();
    });
}
