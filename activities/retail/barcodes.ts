/**
 * Retail barcodes are strings: whatever a retailer prints (its own internal codes, Code 128,
 * Code 39, and GS1 codes with or without a correct check digit).
 *
 * GTIN-shaped codes (8, 12, 13 or 14 digits, spaces and hyphens ignored) are reduced to one
 * GTIN-14, so a UPC-A is found when asked as its EAN-13 form and back, and a UPC-E as its
 * expanded UPC-A. A wrong check digit is reported, not refused: shelf labels and supplier feeds
 * carry them, and the code still names the item the retailer means.
 *
 * An 8-digit code is read as UPC-E when it starts with 0 or 1 and its UPC-E check digit holds,
 * otherwise as EAN-8 (docs/components/retail.md, Barcodes): the two symbologies share the length.
 *
 * Any other code is kept and matched exactly as given (trimmed): printable ASCII, at most
 * 64 characters.
 */
type BarcodeKind = 'EAN-13' | 'EAN-8' | 'UPC-A' | 'UPC-E' | 'GTIN-14' | 'OTHER';

export interface Barcode {
  kind: BarcodeKind;
  /** the code as stored: digits only for GTINs, else as given (trimmed) */
  code: string;
  /** what equal items share: the GTIN-14, or `code:<code>` for any other code */
  key: string;
  /** whether the GS1 check digit holds; null for codes that are not GTINs */
  check_digit_valid: boolean | null;
}

export class BarcodeError extends Error {}

const MAX_BARCODE_LENGTH = 64;

/** GS1 check digit of the digits before it (weights 3,1,3,… from the right). */
export function checkDigit(body: string): number {
  let sum = 0;
  for (let i = body.length - 1, w = 3; i >= 0; i -= 1, w = w === 3 ? 1 : 3) sum += Number(body[i]) * w;
  return (10 - (sum % 10)) % 10;
}

const valid = (code: string) => checkDigit(code.slice(0, -1)) === Number(code.at(-1));

/** UPC-E (number system, six digits, check) → the 12-digit UPC-A it abbreviates. */
export function expandUpcE(code: string): string {
  const [s, d1, d2, d3, d4, d5, d6] = code;
  let body: string;
  if (d6 === '0' || d6 === '1' || d6 === '2') body = `${s}${d1}${d2}${d6}0000${d3}${d4}${d5}`;
  else if (d6 === '3') body = `${s}${d1}${d2}${d3}00000${d4}${d5}`;
  else if (d6 === '4') body = `${s}${d1}${d2}${d3}${d4}00000${d5}`;
  else body = `${s}${d1}${d2}${d3}${d4}${d5}0000${d6}`;
  return body + String(checkDigit(body));
}

const GTIN_KIND: Record<number, BarcodeKind> = { 14: 'GTIN-14', 13: 'EAN-13', 12: 'UPC-A' };

export function parseBarcode(raw: string): Barcode {
  const given = raw.trim();
  if (!given) throw new BarcodeError('must not be empty');
  if (given.length > MAX_BARCODE_LENGTH) throw new BarcodeError(`must be at most ${MAX_BARCODE_LENGTH} characters`);
  if (!/^[\x20-\x7e]+$/.test(given)) throw new BarcodeError('must be printable ASCII characters');
  const digits = given.replace(/[\s-]/g, '');
  if (/^\d+$/.test(digits)) {
    const kind = GTIN_KIND[digits.length];
    if (kind) return { kind, code: digits, key: digits.padStart(14, '0'), check_digit_valid: valid(digits) };
    if (digits.length === 8) {
      if (digits[0] === '0' || digits[0] === '1') {
        const upcA = expandUpcE(digits);
        if (upcA.at(-1) === digits.at(-1))
          return { kind: 'UPC-E', code: digits, key: upcA.padStart(14, '0'), check_digit_valid: true };
      }
      return { kind: 'EAN-8', code: digits, key: digits.padStart(14, '0'), check_digit_valid: valid(digits) };
    }
  }
  return { kind: 'OTHER', code: given, key: `code:${given}`, check_digit_valid: null };
}

/** What a product's answer says about its stored barcode (never throws: stored codes were parsed). */
export function describeBarcode(stored: string | undefined): { barcode_check_digit_valid: boolean | null } {
  if (!stored) return { barcode_check_digit_valid: null };
  try {
    return { barcode_check_digit_valid: parseBarcode(stored).check_digit_valid };
  } catch {
    return { barcode_check_digit_valid: null };
  }
}
