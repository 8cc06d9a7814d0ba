/**
 * Retail barcodes: EAN-13, EAN-8, UPC-A, UPC-E (and GTIN-14), check digit verified, reduced to
 * one GTIN-14 so a UPC-A is found when asked as its EAN-13 form and back, and a UPC-E as its
 * expanded UPC-A.
 *
 * An 8-digit code is read as UPC-E when it starts with 0 or 1 and its UPC-E check digit holds,
 * otherwise as EAN-8 (README "Retail"): the two symbologies share the length.
 */
export type BarcodeKind = 'EAN-13' | 'EAN-8' | 'UPC-A' | 'UPC-E' | 'GTIN-14';

export interface Barcode {
  kind: BarcodeKind;
  /** the code as given (digits only) */
  code: string;
  gtin14: string;
}

export class BarcodeError extends Error {}

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

export function parseBarcode(raw: string): Barcode {
  const code = raw.replace(/[\s-]/g, '');
  if (!/^\d+$/.test(code)) throw new BarcodeError('must contain digits only');
  switch (code.length) {
    case 14:
    case 13:
    case 12: {
      if (!valid(code)) throw new BarcodeError('check digit is wrong');
      const kind: BarcodeKind = code.length === 14 ? 'GTIN-14' : code.length === 13 ? 'EAN-13' : 'UPC-A';
      return { kind, code, gtin14: code.padStart(14, '0') };
    }
    case 8: {
      if (code[0] === '0' || code[0] === '1') {
        const upcA = expandUpcE(code);
        if (upcA.at(-1) === code.at(-1)) return { kind: 'UPC-E', code, gtin14: upcA.padStart(14, '0') };
      }
      if (!valid(code)) throw new BarcodeError('check digit is wrong');
      return { kind: 'EAN-8', code, gtin14: code.padStart(14, '0') };
    }
    default:
      throw new BarcodeError('must have 8 (EAN-8, UPC-E), 12 (UPC-A), 13 (EAN-13) or 14 (GTIN-14) digits');
  }
}
