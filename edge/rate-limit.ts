/**
 * Fixed one-minute windows per API key (or per client address for unauthenticated routes).
 * State is per edge process: with several edge replicas behind a balancer the effective limit is
 * the per-process limit times the replicas (README, "Rate limits").
 */
import { PlatformError } from '../activities/errors';

interface Window {
  start: number;
  count: number;
}

export class RateLimiter {
  private windows = new Map<string, Window>();

  constructor(private readonly defaultPerMinute: number) {}

  /** Throws 429 with Retry-After when `id` has used its budget in the current minute. */
  take(id: string, perMinute = this.defaultPerMinute): void {
    if (!perMinute) return;
    const now = Date.now();
    let w = this.windows.get(id);
    if (!w || now - w.start >= 60_000) {
      w = { start: now, count: 0 };
      this.windows.set(id, w);
      if (this.windows.size > 100_000) this.sweep(now);
    }
    w.count += 1;
    if (w.count > perMinute) {
      const retryAfter = Math.max(1, Math.ceil((w.start + 60_000 - now) / 1000));
      throw new PlatformError(429, `Rate limit exceeded: ${perMinute} requests per minute`, undefined, { 'Retry-After': String(retryAfter) });
    }
  }

  private sweep(now: number): void {
    for (const [id, w] of this.windows) if (now - w.start >= 60_000) this.windows.delete(id);
  }
}
