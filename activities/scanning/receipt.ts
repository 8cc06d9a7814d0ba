/**
 * Reads OCR text of a receipt (pure): header lines, date, total and item lines with quantity
 * and price. Tolerant of OCR noise: prices with a comma, currency signs, tax codes after the
 * price, "2 x" / "x2" quantities.
 */
export interface ReceiptItem {
  /** the line as read */
  text: string;
  name: string;
  quantity: number;
  /** the line's amount */
  price: number;
  unit_price: number;
}

export interface ParsedReceipt {
  header: string[];
  merchant: string | null;
  /** YYYY-MM-DD */
  date: string | null;
  total: number | null;
  items: ReceiptItem[];
  items_total: number;
}

const PRICE_AT_END = /(-?)[$€£]?\s?(\d{1,6})\s?[.,]\s?(\d{2})\s*[A-Z*]?\s*$/;
const NOT_ITEMS =
  /\b(sub\s*-?\s*total|total|tax|vat|iva|change|cash|card|visa|master\s*card|amex|balance|tender(ed)?|amount|tip|payment|debit|credit|due|paid|rounding)\b/i;
const TOTAL = /^\s*(grand\s+total|total(\s+due)?|amount\s+due|balance\s+due|to\s*tal)\b/i;
const QTY_BEFORE = /^\s*(\d{1,3})\s*[xX×*]\s+(.+)$/;
const QTY_AFTER = /^(.+?)\s+[xX×]\s?(\d{1,3})$/;

const round2 = (n: number) => Math.round(n * 100) / 100;

function priceOf(line: string): { price: number; rest: string } | null {
  const m = PRICE_AT_END.exec(line);
  if (!m) return null;
  const value = Number(`${m[2]}.${m[3]}`) * (m[1] ? -1 : 1);
  return { price: value, rest: line.slice(0, m.index).trim() };
}

function dateOf(text: string): string | null {
  const iso = /\b(20\d{2})[-/.](\d{1,2})[-/.](\d{1,2})\b/.exec(text);
  const dmy = /\b(\d{1,2})[/.-](\d{1,2})[/.-](20\d{2}|\d{2})\b/.exec(text);
  let y: number, mo: number, d: number;
  if (iso) [y, mo, d] = [Number(iso[1]), Number(iso[2]), Number(iso[3])];
  else if (dmy) [d, mo, y] = [Number(dmy[1]), Number(dmy[2]), Number(dmy[3].length === 2 ? `20${dmy[3]}` : dmy[3])];
  else return null;
  const date = new Date(Date.UTC(y, mo - 1, d));
  if (date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) return null;
  return date.toISOString().slice(0, 10);
}

export function parseReceipt(text: string): ParsedReceipt {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
  const header: string[] = [];
  const items: ReceiptItem[] = [];
  let total: number | null = null;
  let date: string | null = null;
  for (const line of lines) {
    date ??= dateOf(line);
    const priced = priceOf(line);
    if (priced && TOTAL.test(line) && !/sub/i.test(line)) {
      total ??= priced.price;
      continue;
    }
    if (!priced || NOT_ITEMS.test(priced.rest) || !/[a-z]{2}/i.test(priced.rest)) {
      if (!items.length && header.length < 6 && !dateOf(line)) header.push(line);
      continue;
    }
    let name = priced.rest;
    let quantity = 1;
    const before = QTY_BEFORE.exec(name);
    const after = before ? null : QTY_AFTER.exec(name);
    if (before) [quantity, name] = [Number(before[1]), before[2]];
    else if (after) [name, quantity] = [after[1], Number(after[2])];
    quantity = Math.max(1, quantity);
    items.push({
      text: line,
      name: name.trim(),
      quantity,
      price: priced.price,
      unit_price: round2(priced.price / quantity),
    });
  }
  return {
    header,
    merchant: header.find((l) => /[a-z]{3}/i.test(l)) ?? null,
    date,
    total,
    items,
    items_total: round2(items.reduce((s, i) => s + i.price, 0)),
  };
}
