/**
 * How a receipt earns when the organization's `purchase` action earns by amount: by the same
 * rule as an award with an amount (earning.ts), so the two ways of earning cannot drift apart.
 * Each matched line earns on its own (it may be validated or rejected on its own): at the rate of
 * its product's category (`product:<id>`, else `brand:<id>`, else the rule's rate), rounded as
 * the rule says. The rule's minimum applies to the receipt's total, its max_points to the scan's
 * credit (with the scan cap).
 */
import { earnByAmount, type EarningRule } from './earning.ts';
import { decimalMoney, exponentOf } from './money.ts';
import { getRules } from './rules.ts';

export interface ReceiptEarning {
  rule: EarningRule;
  /** the points of one matched line (its price as the receipt prints it, in the rule's currency) */
  linePoints(line_price: number, product_id: number, brand_id: number): number;
  /** the receipt's total is below the rule's minimum: its lines earn nothing */
  belowMinimum(total: number | null): boolean;
}

const minor = (price: number, currency: string) => BigInt(Math.round(Math.max(0, price) * 10 ** exponentOf(currency)));

/** null while `purchase` earns fixed points per unit (the rules' `product:`/`brand:`/`purchase` points). */
export async function receiptEarning(organization_id: string): Promise<ReceiptEarning | null> {
  const rules = await getRules(organization_id);
  const rule = Object.hasOwn(rules.earning, 'purchase') ? rules.earning.purchase : undefined;
  if (!rule) return null;
  const perLine: EarningRule = { ...rule, min_amount: null, max_points: null };
  return {
    rule,
    linePoints(line_price, product_id, brand_id) {
      const unit = { minor: minor(line_price, rule.currency), currency: rule.currency };
      const category = [`product:${product_id}`, `brand:${brand_id}`].find((c) => Object.hasOwn(rule.categories, c));
      return earnByAmount(perLine, { total: unit, items: [{ unit, quantity: 1, category }] }).points;
    },
    belowMinimum(total) {
      if (rule.min_amount === null) return false;
      if (total === null) return true;
      return minor(total, rule.currency) < decimalMoney(rule.min_amount, rule.currency).minor;
    },
  };
}
