/**
 * Giving back a debit (lots.ts `taken` and `restore`), pure: a refund returns each piece to its own
 * credit with that credit's expiry, never renewing points; lapsed pieces come back lapsed and
 * never pay a debt.
 */
import { describe, expect, it } from 'vitest';

import { type Lot, restore, standing, taken } from '../../activities/loyalty/lots.ts';

const d = (day: number) => new Date(Date.UTC(2026, 0, day));
const lot = (entry_id: string, seq: number, points: number, expires_at?: Date): Lot => ({
  entry_id,
  seq,
  points,
  ...(expires_at ? { expires_at } : {}),
});

describe('taken and restore', () => {
  it('finds what a debit took per credit, the rest free points', () => {
    expect(taken([lot('a', 1, 100, d(10)), lot('b', 2, 100, d(40))], [lot('b', 2, 50, d(40))], 150)).toEqual({
      lots: [lot('a', 1, 100, d(10)), lot('b', 2, 50, d(40))],
      free: 0,
    });
    expect(taken([lot('a', 1, 30, d(10))], [], 50)).toEqual({ lots: [lot('a', 1, 30, d(10))], free: 20 });
    expect(taken([], [], 50)).toEqual({ lots: [], free: 50 });
  });

  it('gives each piece back to its credit with its expiry; a lapsed piece is not spendable', () => {
    const back = { lots: [lot('a', 1, 100, d(10)), lot('b', 2, 50, d(40))], free: 0 };
    const out = restore({ balance: 50, lots: [lot('b', 2, 50, d(40))] }, back, d(12));
    expect(out.balance).toBe(200);
    expect(out.lots).toEqual([lot('b', 2, 100, d(40)), lot('a', 1, 100, d(10))]);
    expect(standing(out, d(12))).toMatchObject({ spendable: 100, lapsed: 100 });
    // before a lapses, everything is back as it was before the debit
    expect(standing(restore({ balance: 50, lots: [lot('b', 2, 50, d(40))] }, back, d(5)), d(5))).toMatchObject({
      spendable: 200,
      lapsed: 0,
    });
  });

  it('pays a debt from the free points given back, then from live pieces; lapsed pieces never pay it', () => {
    const paid = restore({ balance: -40, lots: [] }, { lots: [lot('a', 1, 60, d(40))], free: 10 }, d(5));
    expect(paid).toEqual({ balance: 30, lots: [lot('a', 1, 30, d(40))] });
    expect(standing(paid, d(5)).spendable).toBe(30);
    const still = restore({ balance: -40, lots: [] }, { lots: [lot('a', 1, 60, d(2))], free: 0 }, d(5));
    expect(still).toEqual({ balance: 20, lots: [lot('a', 1, 60, d(2))] });
    expect(standing(still, d(5)).spendable).toBe(-40);
  });
});
