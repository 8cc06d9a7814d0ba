import { describe, expect, it } from 'vitest';

import { computeBalance } from '../../activities/billing/balance.ts';

const d = (day: number) => new Date(Date.UTC(2026, 0, day));

describe('token balance', () => {
  it('consumes the oldest unexpired credit first and drops expired leftovers', () => {
    const credits = [
      { id: 'a', tokens: 100, at: d(1), expires_at: d(10) },
      { id: 'b', tokens: 100, at: d(2), expires_at: d(40) },
    ];
    // 150 used on day 5: 100 from a (oldest), 50 from b
    expect(computeBalance(credits, [{ tokens: 150, at: d(5) }], [], d(6)).remaining).toBe(50);
    // 50 used on day 5: a keeps 50, which expire on day 10
    const later = computeBalance(credits, [{ tokens: 50, at: d(5) }], [], d(20));
    expect(later.remaining).toBe(100);
    expect(later.credits.find((c) => c.id === 'a')).toMatchObject({ left: 50, expired: true });
    // after a's expiry, use comes from b only
    expect(computeBalance(credits, [{ tokens: 30, at: d(15) }], [], d(20)).remaining).toBe(70);
  });

  it('removes what is left of a refunded credit, and reports use beyond the credits as overdraft', () => {
    const credits = [
      { id: 'a', tokens: 100, at: d(1), expires_at: d(100) },
      { id: 'b', tokens: 100, at: d(2), expires_at: d(100) },
    ];
    const refunded = computeBalance(credits, [{ tokens: 30, at: d(3) }], [{ credit_id: 'a', at: d(4) }], d(5));
    expect(refunded.remaining).toBe(100);
    const over = computeBalance(credits, [{ tokens: 250, at: d(3) }], [], d(5));
    expect(over).toMatchObject({ remaining: 0, overdraft: 50 });
  });
});
