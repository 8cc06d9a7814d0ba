import { describe, expect, it } from 'vitest';

import { BarcodeError, checkDigit, expandUpcE, parseBarcode } from '../../activities/retail/barcodes.ts';
import { boundingBox, distanceM } from '../../activities/retail/geo.ts';

describe('barcodes', () => {
  it('computes GS1 check digits', () => {
    expect(checkDigit('400638133393')).toBe(1); // EAN-13 4006381333931
    expect(checkDigit('03600029145')).toBe(2); // UPC-A 036000291452
    expect(checkDigit('9638507')).toBe(4); // EAN-8 96385074
  });

  it('reads each symbology and reduces it to one GTIN-14', () => {
    expect(parseBarcode('4006381333931')).toEqual({
      kind: 'EAN-13',
      code: '4006381333931',
      key: '04006381333931',
      check_digit_valid: true,
    });
    expect(parseBarcode('036000291452')).toEqual({
      kind: 'UPC-A',
      code: '036000291452',
      key: '00036000291452',
      check_digit_valid: true,
    });
    // the UPC-A and its EAN-13 form are the same item
    expect(parseBarcode('0036000291452').key).toBe(parseBarcode('036000291452').key);
    expect(parseBarcode('96385074')).toEqual({
      kind: 'EAN-8',
      code: '96385074',
      key: '00000096385074',
      check_digit_valid: true,
    });
    expect(parseBarcode('4006-3813 33931')).toMatchObject({ kind: 'EAN-13', code: '4006381333931' });
  });

  it('expands UPC-E to its UPC-A (all four patterns) and finds it under either form', () => {
    expect(expandUpcE('01234505')).toBe('012000003455');
    expect(expandUpcE('04252614')).toBe('042100005264');
    expect(expandUpcE('01234531')).toBe('012300000451');
    expect(expandUpcE('01234543')).toBe('012340000053');
    const e = parseBarcode('04252614');
    expect(e.kind).toBe('UPC-E');
    expect(e.key).toBe(parseBarcode('042100005264').key);
    expect(e.key).toBe(parseBarcode('0042100005264').key);
  });

  it('keeps a GTIN with a wrong check digit, flagged, and still matches its other forms', () => {
    expect(parseBarcode('4006381333932')).toEqual({
      kind: 'EAN-13',
      code: '4006381333932',
      key: '04006381333932',
      check_digit_valid: false,
    });
    expect(parseBarcode('036000291453')).toMatchObject({ kind: 'UPC-A', check_digit_valid: false });
    expect(parseBarcode('0036000291453').key).toBe(parseBarcode('036000291453').key);
    expect(parseBarcode('96385075')).toMatchObject({ kind: 'EAN-8', check_digit_valid: false });
    expect(parseBarcode('12345678901231')).toMatchObject({ kind: 'GTIN-14', check_digit_valid: true });
  });

  it('keeps any other code exactly as given (trimmed): internal codes, Code 128, Code 39', () => {
    for (const code of ['12345', '40063813339x1', 'SKU-000123', 'ab/CD 12+%$', 'A'.repeat(64), '123456789']) {
      expect(parseBarcode(`  ${code} `)).toEqual({ kind: 'OTHER', code, key: `code:${code}`, check_digit_valid: null });
    }
    expect(parseBarcode('sku-1').key).not.toBe(parseBarcode('SKU-1').key);
  });

  it.each([
    ['', /empty/],
    ['   ', /empty/],
    ['A'.repeat(65), /at most 64/],
    ['café', /printable ASCII/],
    ['a\tb', /printable ASCII/],
    ['ab\u0000', /printable ASCII/],
  ])('refuses %j', (code, message) => {
    expect(() => parseBarcode(code)).toThrow(BarcodeError);
    expect(() => parseBarcode(code)).toThrow(message);
  });
});

describe('geo', () => {
  it('measures great-circle distances', () => {
    // Paris → London ≈ 343.5 km
    expect(distanceM(48.8566, 2.3522, 51.5074, -0.1278) / 1000).toBeCloseTo(343.5, 0);
    expect(distanceM(10, 10, 10, 10)).toBe(0);
  });

  it('bounds every point within the radius, across the antimeridian and near the poles', () => {
    const box = boundingBox(0, 179.99, 5000);
    expect(box.lonRanges).toHaveLength(2);
    expect(boundingBox(89.99, 0, 5000).lonRanges).toEqual([[-180, 180]]);
    // random points inside the radius always fall inside the box
    for (let i = 0; i < 2000; i += 1) {
      const lat = Math.random() * 170 - 85;
      const lon = Math.random() * 360 - 180;
      const r = 100 + Math.random() * 50_000;
      const b = boundingBox(lat, lon, r);
      const pLat = lat + (Math.random() - 0.5) * (r / 55_000);
      const pLon = ((lon + (Math.random() - 0.5) * (r / 20_000) + 540) % 360) - 180;
      if (distanceM(lat, lon, pLat, pLon) > r) continue;
      expect(pLat >= b.minLat && pLat <= b.maxLat).toBe(true);
      expect(b.lonRanges.some(([w, e]) => pLon >= w && pLon <= e)).toBe(true);
    }
  });
});
