/**
 * Fixed one-minute windows per API key and per user (or per client address for unauthenticated
 * routes and for failed authentications).
 * State is per edge process: with several edge replicas behind a balancer the effective limit is
 * the per-process limit times the replicas (docs/api-conventions.md, "Rate limits").
 */
import { rateLimited } from '../activities/core/errors.ts';

interface Window {
  start: number;
  count: number;
}

export class RateLimiter {
  /** The edge's limiter of keys and users (one per process): verify_api_key reads it. */
  static edge: RateLimiter | undefined;

  static forEdge(defaultPerMinute: number): RateLimiter {
    RateLimiter.edge = new RateLimiter(defaultPerMinute);
    return RateLimiter.edge;
  }

  private windows = new Map<string, Window>();

  constructor(private readonly defaultPerMinute: number) {}

  /** Whether `id` has used its whole budget this minute (the next take would be 429). Counts nothing. */
  spent(id: string, perMinute = this.defaultPerMinute): boolean {
    return this.retryAfter(id, perMinute) > 0;
  }

  /** Throws 429 with Retry-After when `id` has used its budget in the current minute. */
  take(id: string, perMinute = this.defaultPerMinute): void {
    if (!perMinute) return;
    const w = this.window(id, Date.now());
    w.count += 1;
    if (w.count > perMinute)
      throw limited(`Rate limit exceeded: ${perMinute} requests per minute`, this.retryAfterOf(w));
  }

  /**
   * For budgets of events known only after the work (failed authentications): seconds until `id`
   * may try again when it has had `perMinute` events this minute, else 0. Counts nothing.
   */
  retryAfter(id: string, perMinute: number): number {
    const w = this.windows.get(id);
    if (!perMinute || !w || Date.now() - w.start >= 60_000 || w.count < perMinute) return 0;
    return this.retryAfterOf(w);
  }

  /** Counts one event for `id` (see retryAfter). */
  record(id: string): void {
    this.window(id, Date.now()).count += 1;
  }

  private window(id: string, now: number): Window {
    let w = this.windows.get(id);
    if (!w || now - w.start >= 60_000) {
      w = { start: now, count: 0 };
      this.windows.set(id, w);
      if (this.windows.size > 100_000) this.sweep(now);
    }
    return w;
  }

  private retryAfterOf(w: Window): number {
    return Math.max(1, Math.ceil((w.start + 60_000 - Date.now()) / 1000));
  }

  private sweep(now: number): void {
    for (const [id, w] of this.windows) if (now - w.start >= 60_000) this.windows.delete(id);
  }
}

export const limited = (message: string, retryAfter: number) => rateLimited(message, retryAfter);
