/**
 * The per-process cache every store uses: bounded (least recently used entries go first) and with
 * a time to live, so an entry is never served longer than `ttlMs` after it was read from the
 * database. A change made by another process is therefore seen here within `ttlMs` at the latest;
 * a store that keeps a cache says in a comment what it caches and why that delay is acceptable.
 * A change made by this process is seen at once when the store deletes the entry it changed.
 */
import { LRUCache } from 'lru-cache';

export interface CacheOptions {
  /** entries kept at most */
  max: number;
  /** how long an entry may be served after it was set; omit for entries that never go stale */
  ttlMs?: number;
}

/** Values may be null (a cached "not found"); `get` answers undefined only for a miss. */
export class Cache<K extends {}, V> {
  private readonly lru: LRUCache<K, { v: V }>;

  constructor(opts: CacheOptions) {
    this.lru = new LRUCache<K, { v: V }>({ max: opts.max, ...(opts.ttlMs ? { ttl: opts.ttlMs } : {}) });
  }

  get(key: K): V | undefined {
    return this.lru.get(key)?.v;
  }

  has(key: K): boolean {
    return this.lru.has(key);
  }

  set(key: K, value: V, ttlMs?: number): void {
    this.lru.set(key, { v: value }, ttlMs ? { ttl: ttlMs } : undefined);
  }

  delete(key: K): void {
    this.lru.delete(key);
  }

  /** Drops every entry whose value matches. */
  deleteWhere(match: (value: V, key: K) => boolean): void {
    for (const [key, box] of this.lru.entries()) if (match(box.v, key)) this.lru.delete(key);
  }

  clear(): void {
    this.lru.clear();
  }

  get size(): number {
    return this.lru.size;
  }

  /** The cached value, or `load()`'s answer, cached (null included) and returned. */
  async getOrLoad(key: K, load: () => Promise<V>): Promise<V> {
    const hit = this.lru.get(key);
    if (hit) return hit.v;
    const v = await load();
    this.set(key, v);
    return v;
  }
}
