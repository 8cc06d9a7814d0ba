/** The delivery workflow's retry schedule: growing waits, capped, with bounded jitter, within the horizon. */
import { describe, expect, it } from 'vitest';

import { retryDelay } from '../../activities/events/backoff.ts';

describe('webhook retry schedule', () => {
  it('waits 4 times longer each time from 5 s, at most 12 h, within ±20%', () => {
    const nominal = Array.from({ length: 10 }, (_, i) => retryDelay(i + 1, 5000, 0.5));
    expect(nominal.slice(0, 4)).toEqual([5000, 20_000, 80_000, 320_000]);
    expect(nominal.at(-1)).toBe(12 * 3_600_000);
    for (let n = 1; n <= 10; n += 1) {
      expect(retryDelay(n, 5000, 0)).toBe(Math.round(nominal[n - 1] * 0.8));
      expect(retryDelay(n, 5000, 1)).toBe(Math.round(nominal[n - 1] * 1.2));
    }
  });

  it('makes 13 attempts within 3 days at the default schedule (no jitter)', () => {
    const horizon = 72 * 3_600_000;
    let elapsed = 0;
    let attempts = 1;
    for (let n = 1; elapsed + retryDelay(n, 5000, 0.5) <= horizon; n += 1) {
      elapsed += retryDelay(n, 5000, 0.5);
      attempts += 1;
    }
    expect(attempts).toBe(13);
    expect(elapsed / 3_600_000).toBeCloseTo(67.58, 1);
  });
});
