/**
 * Amounts of money and decimal rates, exact: an amount is integer minor units of its currency (a
 * bigint), a rate or a multiplier a decimal string read as an integer over a power of ten. Points
 * follow from them by one rounding at the end, never through a float.
 */
import { invalid } from '../core/errors.ts';

export type Rounding = 'down' | 'nearest' | 'up';
export const ROUNDINGS = ['down', 'nearest', 'up'] as const;

/** An exact fraction num / den, den > 0. */
export interface Ratio {
  num: bigint;
  den: bigint;
}

/** A decimal string as an exact fraction ("1.25" is 125/100). The string is checked by its route's schema first. */
export function ratio(text: string): Ratio {
  const [whole, frac = ''] = text.split('.');
  return { num: BigInt(whole + frac), den: 10n ** BigInt(frac.length) };
}

export const times = (a: Ratio, b: Ratio): Ratio => ({ num: a.num * b.num, den: a.den * b.den });

/** No award earns more than this from one rule or one campaign (a safe integer with room to add). */
const MAX_AWARD_POINTS = 1_000_000_000;

/** A non-negative fraction rounded to whole points (nearest: halves up), at most MAX_AWARD_POINTS. */
export function roundPoints(r: Ratio, rounding: Rounding): number {
  const q = r.num / r.den;
  const rest = r.num % r.den;
  let n = q;
  if (rounding === 'up' && rest > 0n) n += 1n;
  if (rounding === 'nearest' && rest * 2n >= r.den) n += 1n;
  return n > BigInt(MAX_AWARD_POINTS) ? MAX_AWARD_POINTS : Number(n);
}

const currencies = new Set(Intl.supportedValuesOf('currency'));
const exponents = new Map<string, number>();

/** Whether the code is an ISO 4217 currency this runtime knows. */
export const isCurrency = (code: string) => currencies.has(code);

/** How many decimals the currency's minor unit has (EUR 2, JPY 0, KWD 3), as the runtime's CLDR data says. */
export function exponentOf(currency: string): number {
  let e = exponents.get(currency);
  if (e === undefined) {
    e = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
    exponents.set(currency, e);
  }
  return e;
}

/** An amount of money: minor units of its currency. */
export interface Money {
  minor: bigint;
  currency: string;
}

/** Major units as an exact fraction (1234 minor EUR is 1234/100). */
export const major = (m: Money): Ratio => ({ num: m.minor, den: 10n ** BigInt(exponentOf(m.currency)) });

/** The amount as a decimal string of its currency ("12.30"). */
export function formatMoney(m: Money): string {
  const e = exponentOf(m.currency);
  const s = m.minor.toString().padStart(e + 1, '0');
  return e ? `${s.slice(0, -e)}.${s.slice(-e)}` : s;
}

/**
 * An amount as a client sends it: a decimal string of major units ("12.30") or an integer of
 * minor units (1230), exactly one of them, never a float; `field` names it in the 422.
 */
export function parseMoney(
  input: { amount?: unknown; amount_minor?: unknown; currency: unknown },
  field: string,
): Money {
  const currency = input.currency;
  if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency) || !isCurrency(currency))
    throw invalid(`${field}currency`, 'an ISO 4217 currency code in capitals (EUR, USD, JPY)');
  if ((input.amount === undefined) === (input.amount_minor === undefined))
    throw invalid(
      `${field}amount`,
      'send either amount (a decimal string such as "12.30") or amount_minor (an integer)',
    );
  const e = exponentOf(currency);
  if (input.amount_minor !== undefined) {
    const n = input.amount_minor;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0)
      throw invalid(`${field}amount_minor`, 'a non-negative integer of minor units (cents)');
    return { minor: BigInt(n), currency };
  }
  const text = input.amount;
  if (typeof text !== 'string')
    throw invalid(`${field}amount`, 'a decimal string such as "12.30", never a JSON number (floats are not exact)');
  const m = /^(0|[1-9]\d{0,14})(?:\.(\d+))?$/.exec(text);
  if (!m) throw invalid(`${field}amount`, 'a non-negative decimal string such as "12.30"');
  const frac = m[2] ?? '';
  if (frac.length > e) throw invalid(`${field}amount`, `${currency} has ${e} decimal places`);
  return { minor: BigInt(m[1] + frac.padEnd(e, '0')), currency };
}

/**
 * A decimal string of a rule (a minimum amount) as minor units of `currency`, rounded up: a
 * minimum of "10.005" EUR is met from 10.01, never by 10.00.
 */
export function decimalMoney(text: string, currency: string): Money {
  const r = ratio(text);
  const scaled = r.num * 10n ** BigInt(exponentOf(currency));
  return { minor: (scaled + r.den - 1n) / r.den, currency };
}
