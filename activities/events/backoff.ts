const MAX_DELAY_MS = 12 * 3_600_000;

/**
 * The wait before retry `n` (1-based) of a delivery: `base_ms` × 4^(n−1), at most 12 hours, then
 * ±20% jitter from `random` (0..1). docs/components/events.md tabulates it.
 */
export function retryDelay(n: number, base_ms: number, random: number): number {
  const plain = Math.min(base_ms * 4 ** (n - 1), MAX_DELAY_MS);
  return Math.round(plain * (0.8 + 0.4 * random));
}
