/**
 * Group commit: one write for many concurrent callers (docs/storage.md, "Group commit"). A caller
 * adds its item and is answered once the write that carried it is acknowledged; every item added
 * while a write runs goes into the next one (at most `max`). Alone, a caller waits for its own
 * write only, so nothing waits for a timer; under load N callers cost about one command instead
 * of N. With `key`, items of different keys never share a write and each key has its own queue
 * (an organization's audit chain); without it, one queue for the process.
 */

/** An item the write refused on its own (a duplicate key in an unordered insert): its caller gets `error`. */
export class ItemFailure {
  constructor(readonly error: unknown) {}
}

export interface GroupCommitOptions<T> {
  /** items per write (default 500) */
  max?: number;
  /** items of one key share a write; different keys are written apart, concurrently */
  key?: (item: T) => string;
}

/**
 * `write` stores the items in order and answers each one's result (or ItemFailure), or nothing
 * when every item simply succeeded. A write that throws fails every caller of that write.
 */
export function groupCommit<T, R = void>(
  write: (items: T[], key: string) => Promise<readonly (R | ItemFailure)[] | void>,
  opts: GroupCommitOptions<T> = {},
): (item: T) => Promise<R> {
  const max = opts.max ?? 500;
  const queues = new Map<string, { item: T; resolve: (r: R) => void; reject: (err: unknown) => void }[]>();
  const drain = async (key: string) => {
    for (;;) {
      const queue = queues.get(key)!;
      if (!queue.length) {
        queues.delete(key);
        return;
      }
      const batch = queue.splice(0, max);
      try {
        const out = await write(
          batch.map((w) => w.item),
          key,
        );
        batch.forEach((w, i) => {
          const r = out?.[i];
          if (r instanceof ItemFailure) w.reject(r.error);
          else w.resolve(r as R);
        });
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
  };
  return (item) =>
    new Promise<R>((resolve, reject) => {
      const key = opts.key?.(item) ?? '';
      let queue = queues.get(key);
      const idle = !queue;
      if (!queue) queues.set(key, (queue = []));
      queue.push({ item, resolve, reject });
      if (idle) void drain(key);
    });
}
