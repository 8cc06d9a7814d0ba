/**
 * Earning by amount: the points a purchase earns under an action's earning rule. One function for
 * every way of earning by amount (an award with an amount, a receipt scan's matched lines), so
 * they cannot drift apart. Exact: amounts in minor units, rates as fractions, one rounding.
 */
import { invalid } from '../core/errors.ts';
import { decimalMoney, major, type Money, type Ratio, ratio, type Rounding, roundPoints, times } from './money.ts';

export interface EarningRule {
  /** points per unit of `currency` (a decimal string: "1", "0.5") */
  rate: string;
  currency: string;
  rounding: Rounding;
  /** below this amount (a decimal string of `currency`) a purchase earns nothing by amount */
  min_amount: string | null;
  /** the most points one award earns by amount */
  max_points: number | null;
  /** a category's own rate instead of `rate`; "0" excludes it */
  categories: Record<string, string>;
}

interface PurchaseItem {
  sku?: string;
  category?: string;
  /** the price of one unit */
  unit: Money;
  quantity: number;
}

export interface Purchase {
  total: Money;
  items: PurchaseItem[];
}

export interface Earned {
  points: number;
  /** max_points lowered it */
  capped: boolean;
  /** the amount was below min_amount: nothing earned by amount */
  below_min_amount: boolean;
}

const lineTotal = (i: PurchaseItem): bigint => i.unit.minor * BigInt(i.quantity);

/** Holds the purchase to the rule's currency and its lines to its total; `field` prefixes the 422's field. */
export function checkPurchase(rule: EarningRule, p: Purchase): void {
  if (p.total.currency !== rule.currency)
    throw invalid('currency', `this action earns in ${rule.currency}; the amount is in ${p.total.currency}`);
  p.items.forEach((item, i) => {
    if (item.unit.currency !== rule.currency)
      throw invalid(`items[${i}].currency`, `the items are in the award's currency, ${rule.currency}`);
  });
  const lines = p.items.reduce((n, i) => n + lineTotal(i), 0n);
  if (lines > p.total.minor) throw invalid('items', 'the lines add up to more than the amount');
}

/**
 * The points `p` earns: each line at its category's rate (the rule's rate when the category has
 * none), what the lines leave of the total at the rule's rate; rounded once, then capped.
 */
export function earnByAmount(rule: EarningRule, p: Purchase): Earned {
  checkPurchase(rule, p);
  if (rule.min_amount !== null && p.total.minor < decimalMoney(rule.min_amount, rule.currency).minor)
    return { points: 0, capped: false, below_min_amount: true };
  const base = ratio(rule.rate);
  // Every share is in minor units times a rate over the rate's power of ten: one common
  // denominator per rate, summed exactly.
  let sum: Ratio = { num: 0n, den: 1n };
  const add = (minor: bigint, rate: Ratio) => {
    const part = times(major({ minor, currency: rule.currency }), rate);
    sum = { num: sum.num * part.den + part.num * sum.den, den: sum.den * part.den };
  };
  let rest = p.total.minor;
  for (const item of p.items) {
    const line = lineTotal(item);
    rest -= line;
    const own = item.category !== undefined && Object.hasOwn(rule.categories, item.category);
    add(line, own ? ratio(rule.categories[item.category!]) : base);
  }
  add(rest, base);
  const points = roundPoints(sum, rule.rounding);
  if (rule.max_points !== null && points > rule.max_points)
    return { points: rule.max_points, capped: true, below_min_amount: false };
  return { points, capped: false, below_min_amount: false };
}

/** Points times a decimal factor ("1.5"), rounded as the rule says. */
export const scalePoints = (points: number, factor: string, rounding: Rounding): number =>
  roundPoints(times({ num: BigInt(points), den: 1n }, ratio(factor)), rounding);

/** Points a decimal rate per currency unit gives for an amount, rounded as said. */
export const pointsPerAmount = (amount: Money, rate: string, rounding: Rounding): number =>
  roundPoints(times(major(amount), ratio(rate)), rounding);
