/**
 * Money and earning by amount, exact (activities/loyalty/money.ts, earning.ts), and a receipt's
 * line points (receipt-earning.ts, with the rules stubbed): amounts read from decimal strings or
 * minor units in each currency's own decimals, every bad amount refused naming its field, and
 * points computed from fractions with one rounding, including the amounts a float gets wrong
 * (1.15 × 100 is 114.99999999999999 in floating point; 0.1 + 0.2 is 0.30000000000000004).
 */
import { describe, expect, it, vi } from 'vitest';

import type { PlatformError } from '../../activities/core/errors.ts';
import {
  checkPurchase,
  earnByAmount,
  type EarningRule,
  pointsPerAmount,
  type Purchase,
  scalePoints,
} from '../../activities/loyalty/earning.ts';
import {
  decimalMoney,
  exponentOf,
  formatMoney,
  type Money,
  parseMoney,
  ratio,
  roundPoints,
} from '../../activities/loyalty/money.ts';

/** The field a refusal names (undefined: nothing was refused). */
function refusedField(f: () => unknown): string | undefined {
  try {
    f();
  } catch (err) {
    expect((err as PlatformError).kind).toBe('invalid');
    return (err as PlatformError).field;
  }
  return undefined;
}

const eur = (minor: number | bigint): Money => ({ minor: BigInt(minor), currency: 'EUR' });
const rule = (over: Partial<EarningRule> = {}): EarningRule => ({
  rate: '1',
  currency: 'EUR',
  rounding: 'down',
  min_amount: null,
  max_points: null,
  categories: {},
  ...over,
});
const buy = (amount: string, items: Purchase['items'] = [], currency = 'EUR'): Purchase => ({
  total: parseMoney({ amount, currency }, ''),
  items,
});
const item = (amount: string, category?: string, quantity = 1, currency = 'EUR') => ({
  category,
  unit: parseMoney({ amount, currency }, ''),
  quantity,
});

describe('parseMoney', () => {
  it("reads a decimal string of major units, or an integer of minor units, in the currency's decimals", () => {
    const cases: [Record<string, unknown>, bigint][] = [
      [{ amount: '12.30', currency: 'EUR' }, 1230n],
      [{ amount: '12.3', currency: 'EUR' }, 1230n],
      [{ amount: '12', currency: 'EUR' }, 1200n],
      [{ amount: '0', currency: 'EUR' }, 0n],
      [{ amount: '0.01', currency: 'USD' }, 1n],
      [{ amount_minor: 1230, currency: 'EUR' }, 1230n],
      [{ amount_minor: 0, currency: 'EUR' }, 0n],
      // JPY has no minor unit, KWD three decimals
      [{ amount: '1500', currency: 'JPY' }, 1500n],
      [{ amount_minor: 1500, currency: 'JPY' }, 1500n],
      [{ amount: '1.234', currency: 'KWD' }, 1234n],
      [{ amount: '1.2', currency: 'KWD' }, 1200n],
      [{ amount_minor: 1234, currency: 'KWD' }, 1234n],
      // beyond a float's exact integers, still exact
      [{ amount: '999999999999999.99', currency: 'EUR' }, 99999999999999999n],
    ];
    for (const [input, minor] of cases)
      expect(parseMoney(input as { currency: unknown }, ''), JSON.stringify(input)).toEqual({
        minor,
        currency: input.currency,
      });
  });

  it('refuses every other amount, naming the field (with its prefix)', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ amount: 12.5, currency: 'EUR' }, 'amount'],
      [{ amount: '-3', currency: 'EUR' }, 'amount'],
      [{ amount: '1.234', currency: 'EUR' }, 'amount'],
      [{ amount: '1500.5', currency: 'JPY' }, 'amount'],
      [{ amount: '1.2345', currency: 'KWD' }, 'amount'],
      [{ amount: '12,50', currency: 'EUR' }, 'amount'],
      [{ amount: '01.00', currency: 'EUR' }, 'amount'],
      [{ amount: '.5', currency: 'EUR' }, 'amount'],
      [{ amount: '1.', currency: 'EUR' }, 'amount'],
      [{ amount: '1e3', currency: 'EUR' }, 'amount'],
      [{ amount: ' 1', currency: 'EUR' }, 'amount'],
      [{ amount: '', currency: 'EUR' }, 'amount'],
      [{ amount: '1234567890123456', currency: 'EUR' }, 'amount'],
      [{ amount_minor: 12.5, currency: 'EUR' }, 'amount_minor'],
      [{ amount_minor: -1, currency: 'EUR' }, 'amount_minor'],
      [{ amount_minor: '100', currency: 'EUR' }, 'amount_minor'],
      [{ amount_minor: Number.MAX_SAFE_INTEGER + 1, currency: 'EUR' }, 'amount_minor'],
      [{ amount_minor: Number.NaN, currency: 'EUR' }, 'amount_minor'],
      [{ amount: '10', amount_minor: 1000, currency: 'EUR' }, 'amount'],
      [{ currency: 'EUR' }, 'amount'],
      [{ amount: '10', currency: 'eur' }, 'currency'],
      [{ amount: '10', currency: 'XXY' }, 'currency'],
      [{ amount: '10', currency: 'EURO' }, 'currency'],
      [{ amount: '10', currency: 978 }, 'currency'],
      [{ amount: '10' }, 'currency'],
    ];
    for (const [input, field] of cases)
      expect(
        refusedField(() => parseMoney(input as { currency: unknown }, '')),
        JSON.stringify(input),
      ).toBe(field);
    expect(refusedField(() => parseMoney({ amount: '1.234', currency: 'EUR' }, 'items[2].'))).toBe('items[2].amount');
    expect(refusedField(() => parseMoney({ amount: '1', currency: 'ABC' }, 'items[0].'))).toBe('items[0].currency');
  });

  it("formats minor units back in the currency's decimals, and reads a rule's decimals as money", () => {
    expect([exponentOf('EUR'), exponentOf('JPY'), exponentOf('KWD')]).toEqual([2, 0, 3]);
    expect(formatMoney(eur(1230))).toBe('12.30');
    expect(formatMoney(eur(5))).toBe('0.05');
    expect(formatMoney(eur(0))).toBe('0.00');
    expect(formatMoney({ minor: 1500n, currency: 'JPY' })).toBe('1500');
    expect(formatMoney({ minor: 1234n, currency: 'KWD' })).toBe('1.234');
    expect(formatMoney({ minor: 7n, currency: 'KWD' })).toBe('0.007');
    expect(formatMoney(eur(99999999999999999n))).toBe('999999999999999.99');
    expect(decimalMoney('5', 'EUR')).toEqual(eur(500));
    expect(decimalMoney('4.99', 'EUR')).toEqual(eur(499));
    expect(decimalMoney('1.005', 'KWD')).toEqual({ minor: 1005n, currency: 'KWD' });
    expect(decimalMoney('300', 'JPY')).toEqual({ minor: 300n, currency: 'JPY' });
  });
});

describe('exact rounding', () => {
  it('rounds a fraction once: down, nearest (halves up) or up', () => {
    expect(ratio('1.25')).toEqual({ num: 125n, den: 100n });
    expect(ratio('3')).toEqual({ num: 3n, den: 1n });
    const r = (num: bigint, den: bigint) => ({ num, den });
    expect(
      [r(7n, 2n), r(5n, 2n), r(1n, 3n), r(2n, 3n), r(6n, 3n), r(0n, 7n)].map((x) => roundPoints(x, 'down')),
    ).toEqual([3, 2, 0, 0, 2, 0]);
    expect(
      [r(7n, 2n), r(5n, 2n), r(1n, 3n), r(2n, 3n), r(6n, 3n), r(0n, 7n)].map((x) => roundPoints(x, 'nearest')),
    ).toEqual([4, 3, 0, 1, 2, 0]);
    expect([r(7n, 2n), r(5n, 2n), r(1n, 3n), r(2n, 3n), r(6n, 3n), r(0n, 7n)].map((x) => roundPoints(x, 'up'))).toEqual(
      [4, 3, 1, 1, 2, 0],
    );
  });

  it('gets right the products a float gets wrong', () => {
    // 1.15 × 100 = 114.99999999999999 and 0.29 × 100 = 28.999999999999996 in floating point
    expect(Math.floor(1.15 * 100)).toBe(114);
    expect(earnByAmount(rule({ rate: '100' }), buy('1.15')).points).toBe(115);
    expect(earnByAmount(rule({ rate: '100' }), buy('0.29')).points).toBe(29);
    expect(pointsPerAmount(eur(115), '100', 'down')).toBe(115);
    // 1.1 × 100 = 110.00000000000001 and 0.07 × 100 = 7.000000000000001: rounding up must not add a point
    expect(Math.ceil(1.1 * 100)).toBe(111);
    expect(earnByAmount(rule({ rate: '1.1', rounding: 'up' }), buy('100.00')).points).toBe(110);
    expect(scalePoints(100, '1.1', 'up')).toBe(110);
    expect(Math.ceil(0.07 * 100)).toBe(8);
    expect(earnByAmount(rule({ rate: '100', rounding: 'up' }), buy('0.07')).points).toBe(7);
    expect(pointsPerAmount(eur(7), '100', 'up')).toBe(7);
    // 0.1 + 0.2 = 0.30000000000000004: two lines of 0.10 and 0.20 at 10 a euro are 3 points, up or not
    expect(Math.ceil((0.1 + 0.2) * 10)).toBe(4);
    const lines = buy('0.30', [item('0.10', 'a'), item('0.20', 'b')]);
    const tens = rule({ rate: '10', rounding: 'up', categories: { a: '10', b: '10' } });
    expect(earnByAmount(tens, lines).points).toBe(3);
    expect(earnByAmount(rule({ rate: '10', rounding: 'up' }), buy('0.30')).points).toBe(3);
    // 1.005 × 100 = 100.49999999999999: half a point rounds up to 101
    expect(Math.round(1.005 * 100)).toBe(100);
    expect(
      earnByAmount(rule({ rate: '100', currency: 'KWD', rounding: 'nearest' }), buy('1.005', [], 'KWD')).points,
    ).toBe(101);
    // a large amount, exactly (up to the ceiling of one award's points)
    expect(earnByAmount(rule({ rate: '0.0001' }), buy('9999999999999.99')).points).toBe(999999999);
    expect(earnByAmount(rule({ rate: '0.01' }), buy('999999999999999.99')).points).toBe(1_000_000_000);
  });

  it('rounds down, to the nearest (halves up) or up, once for the whole purchase', () => {
    const at = (rounding: EarningRule['rounding'], amount: string, rate = '1') =>
      earnByAmount(rule({ rate, rounding }), buy(amount)).points;
    expect([at('down', '2.50'), at('nearest', '2.50'), at('up', '2.50')]).toEqual([2, 3, 3]);
    expect([at('down', '2.49'), at('nearest', '2.49'), at('up', '2.49')]).toEqual([2, 2, 3]);
    expect([at('down', '3.00'), at('nearest', '3.00'), at('up', '3.00')]).toEqual([3, 3, 3]);
    expect([at('down', '0.01'), at('nearest', '0.01'), at('up', '0.01')]).toEqual([0, 0, 1]);
    expect([at('down', '5.00', '0.5'), at('nearest', '5.00', '0.5'), at('up', '5.00', '0.5')]).toEqual([2, 3, 3]);
    // JPY: a point per 100 yen
    expect(earnByAmount(rule({ rate: '0.01', currency: 'JPY' }), buy('1999', [], 'JPY')).points).toBe(19);
    // rounded once, not per line: three lines of 0.50 at 1 a euro are 1 point down (not 0 + 0 + 0)
    expect(earnByAmount(rule(), buy('1.50', [item('0.50'), item('0.50'), item('0.50')])).points).toBe(1);
    expect(scalePoints(7, '1.5', 'down')).toBe(10);
    expect(scalePoints(7, '1.5', 'nearest')).toBe(11);
    expect(scalePoints(7, '1.5', 'up')).toBe(11);
    expect(scalePoints(10, '1.5', 'down')).toBe(15);
  });
});

describe('earnByAmount', () => {
  it("earns each line at its category's rate, an excluded category nothing, the rest at the rule's rate", () => {
    const r = rule({ categories: { tobacco: '0', wine: '2.5' } });
    // 12.99 of which wine 2 × 2.00 (2.5 a euro) and tobacco 5.00 (excluded): 3.99 + 10 = 13.99
    const p = buy('12.99', [item('2.00', 'wine', 2), { ...item('5.00', 'tobacco') }]);
    expect(earnByAmount(r, p)).toEqual({ points: 13, capped: false, below_min_amount: false });
    expect(earnByAmount({ ...r, rounding: 'nearest' }, p).points).toBe(14);
    expect(earnByAmount({ ...r, rounding: 'up' }, p).points).toBe(14);
    // a category the rule does not name, and a line without category, earn at the rule's rate
    expect(earnByAmount(r, buy('10.00', [item('4.00', 'books'), item('3.00')])).points).toBe(10);
    // lines that make up the whole amount leave nothing at the base rate
    expect(earnByAmount(r, buy('4.00', [item('4.00', 'wine')])).points).toBe(10);
    expect(earnByAmount(r, buy('4.00', [item('4.00', 'tobacco')])).points).toBe(0);
    // a category named like an object's property is only a category
    expect(earnByAmount(r, buy('4.00', [item('4.00', 'constructor')])).points).toBe(4);
  });

  it('earns nothing below the minimum amount, and caps at max_points', () => {
    const r = rule({ min_amount: '5', max_points: 500 });
    expect(earnByAmount(r, buy('4.99'))).toEqual({ points: 0, capped: false, below_min_amount: true });
    expect(earnByAmount(r, buy('5.00'))).toEqual({ points: 5, capped: false, below_min_amount: false });
    expect(earnByAmount(r, buy('500.00'))).toEqual({ points: 500, capped: false, below_min_amount: false });
    expect(earnByAmount(r, buy('500.99'))).toEqual({ points: 500, capped: false, below_min_amount: false });
    expect(earnByAmount(r, buy('1000.00'))).toEqual({ points: 500, capped: true, below_min_amount: false });
    // the minimum is of the total, whatever the lines
    expect(earnByAmount(r, buy('4.99', [item('4.99', 'x')])).below_min_amount).toBe(true);
    expect(earnByAmount(rule({ min_amount: '0.5', currency: 'KWD' }), buy('0.499', [], 'KWD')).below_min_amount).toBe(
      true,
    );
  });

  it('refuses a purchase in another currency, lines in another currency and lines above the total', () => {
    const r = rule();
    expect(refusedField(() => earnByAmount(r, buy('10', [], 'USD')))).toBe('currency');
    expect(refusedField(() => checkPurchase(r, buy('10', [item('1', undefined, 1, 'USD')])))).toBe('items[0].currency');
    expect(refusedField(() => earnByAmount(r, buy('10.00', [item('6.00'), item('4.01')])))).toBe('items');
    expect(refusedField(() => earnByAmount(r, buy('10.00', [item('3.34', undefined, 3)])))).toBe('items');
    expect(refusedField(() => earnByAmount(r, buy('10.00', [item('3.33', undefined, 3)])))).toBeUndefined();
  });
});

describe("a receipt's line points", () => {
  async function earningOf(earning: Record<string, EarningRule>) {
    // receipt-earning.ts reads the rules (the database): stubbed here, the module loaded afresh.
    vi.resetModules();
    vi.doMock('../../activities/loyalty/rules.ts', () => ({ getRules: async () => ({ earning }) }));
    const { receiptEarning } = await import('../../activities/loyalty/receipt-earning.ts');
    return receiptEarning('org_unit');
  }

  it("earns each matched line by the purchase rule: its product's rate, else its brand's, else the rule's", async () => {
    const e = (await earningOf({
      purchase: rule({
        rate: '100',
        min_amount: '5',
        max_points: 500,
        categories: { 'product:7': '200', 'brand:3': '50', 'brand:4': '0' },
      }),
    }))!;
    expect(e).not.toBeNull();
    // the receipt's prices are floats: 1.15 is read as 115 cents, not 114.99…
    expect(e.linePoints(1.15, 1, 1)).toBe(115);
    expect(e.linePoints(0.29, 1, 1)).toBe(29);
    expect(e.linePoints(1.15, 7, 3)).toBe(230);
    expect(e.linePoints(1.15, 8, 3)).toBe(57);
    expect(e.linePoints(1.15, 8, 4)).toBe(0);
    // the rule's minimum and cap are the receipt's and the scan's, not a line's
    expect(e.linePoints(1.0, 1, 1)).toBe(100);
    expect(e.linePoints(20, 1, 1)).toBe(2000);
    expect(e.linePoints(-3, 1, 1)).toBe(0);
    expect([e.belowMinimum(4.99), e.belowMinimum(5), e.belowMinimum(12.3), e.belowMinimum(null)]).toEqual([
      true,
      false,
      false,
      true,
    ]);
    const open = (await earningOf({ purchase: rule({ rate: '1', rounding: 'nearest' }) }))!;
    expect(open.belowMinimum(null)).toBe(false);
    expect(open.belowMinimum(0)).toBe(false);
    expect(open.linePoints(2.5, 1, 1)).toBe(3);
    expect(open.linePoints(2.49, 1, 1)).toBe(2);
    // without an earning rule for `purchase`, receipts earn fixed points (not by amount)
    expect(await earningOf({ review: rule() })).toBeNull();
    vi.doUnmock('../../activities/loyalty/rules.ts');
    vi.resetModules();
  });
});
