import { describe, expect, it } from 'vitest';
import { BarcodeError, checkDigit, expandUpcE, parseBarcode } from '../../activities/retail/barcodes';
import { boundingBox, distanceM } from '../../activities/retail/geo';

describe('barcodes', () => {
  it('computes GS1 check digits', () => {
    expect(checkDigit('400638133393')).toBe(1); // EAN-13 4006381333931
    expect(checkDigit('03600029145')).toBe(2); // UPC-A 036000291452
    expect(checkDigit('9638507')).toBe(4); // EAN-8 96385074
  });

  it('reads each symbology and reduces it to one GTIN-14', () => {
    expect(parseBarcode('4006381333931')).toEqual({ kind: 'EAN-13', code: '4006381333931', gtin14: '04006381333931' });
    expect(parseBarcode('036000291452')).toEqual({ kind: 'UPC-A', code: '036000291452', gtin14: '00036000291452' });
    // the UPC-A and its EAN-13 form are the same item
    expect(parseBarcode('0036000291452').gtin14).toBe(parseBarcode('036000291452').gtin14);
    expect(parseBarcode('96385074')).toEqual({ kind: 'EAN-8', code: '96385074', gtin14: '00000096385074' });
    expect(parseBarcode('4006-3813 33931').kind).toBe('EAN-13');
  });

  it('expands UPC-E to its UPC-A (all four patterns) and finds it under either form', () => {
    expect(expandUpcE('01234505')).toBe('012000003455');
    expect(expandUpcE('04252614')).toBe('042100005264');
    expect(expandUpcE('01234531')).toBe('012300000451');
    expect(expandUpcE('01234543')).toBe('012340000053');
    const e = parseBarcode('04252614');
    expect(e.kind).toBe('UPC-E');
    expect(e.gtin14).toBe(parseBarcode('042100005264').gtin14);
    expect(e.gtin14).toBe(parseBarcode('0042100005264').gtin14);
  });

  it.each([
    ['4006381333932', /check digit/],
    ['036000291453', /check digit/],
    ['96385075', /check digit/],
    ['12345', /digits/],
    ['40063813339x1', /digits only/],
  ])('refuses %s', (code, message) => {
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
