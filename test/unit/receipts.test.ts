import { describe, expect, it } from 'vitest';

import { matchProducts, matchVenue, similarity } from '../../activities/scanning/matching.ts';
import { parseReceipt } from '../../activities/scanning/receipt.ts';

const text = `FRESH MART
12 Main Street, Springfield
Date: 20/11/2026 14:32

2 x Coca-Cola 336ml          3.00
Organic Bananas 1kg          1,99 A
Whole Milk 1L x3             3.75
Sourdough Bread             $3.49
SUBTOTAL                    12.23
TAX                          0.00
TOTAL                       12.23
VISA                        12.23
Thank you!`;

describe('receipt parsing', () => {
  it('reads header, date, total and item lines with quantities, ignoring payment lines', () => {
    const r = parseReceipt(text);
    expect(r.header).toEqual(['FRESH MART', '12 Main Street, Springfield']);
    expect(r.merchant).toBe('FRESH MART');
    expect(r.date).toBe('2026-11-20');
    expect(r.total).toBe(12.23);
    expect(r.items.map((i) => [i.name, i.quantity, i.price, i.unit_price])).toEqual([
      ['Coca-Cola 336ml', 2, 3, 1.5],
      ['Organic Bananas 1kg', 1, 1.99, 1.99],
      ['Whole Milk 1L', 3, 3.75, 1.25],
      ['Sourdough Bread', 1, 3.49, 3.49],
    ]);
    expect(r.items_total).toBe(12.23);
  });

  it('rejects impossible dates and reads ISO ones', () => {
    expect(parseReceipt('SHOP\n2026-02-30\nBread 1.00').date).toBeNull();
    expect(parseReceipt('SHOP\n2024-02-29 10:00\nBread 1.00').date).toBe('2024-02-29');
    expect(parseReceipt('nothing here').items).toEqual([]);
  });
});

describe('matching', () => {
  it('scores similar names high and unrelated ones low, despite OCR slips', () => {
    expect(similarity('Coca-Cola 336ml', 'Coca-Cola 330ml')).toBeGreaterThan(0.8);
    expect(similarity('Whole Milk 1L', 'whole milk 1l')).toBe(1);
    expect(similarity('Claw Hammer', 'Whole Milk 1L')).toBeLessThan(0.3);
  });

  it('matches products by name and price, merging lines of the same product', () => {
    const items = parseReceipt(
      'SHOP\nWhole Milk 1L 1.25\nWhole Milk 1L 1.25\nSourdough Bread 5.99\nMystery thing 9.99',
    ).items;
    const candidates = [
      { id: 1, name: 'Whole Milk 1L', brand_id: 1, price: 1.25, status: 'active' },
      { id: 2, name: 'Sourdough Bread', brand_id: 1, price: 3.49, status: 'active' },
      { id: 3, name: 'Bananas', brand_id: 1, price: null, status: null },
    ];
    const { matches, unmatched } = matchProducts(items, candidates);
    expect(unmatched).toEqual(['Mystery thing 9.99']);
    const milk = matches.find((m) => m.product.id === 1)!;
    expect(milk).toMatchObject({ quantity: 2, confidence: 1, line_price: 2.5 });
    const bread = matches.find((m) => m.product.id === 2)!;
    expect(bread.price_agreement).toBe(0);
    expect(bread.confidence).toBeCloseTo(0.6, 5);
    // no price at the venue: name alone, capped at 0.9
    expect(matchProducts(parseReceipt('X\nBananas 2.00').items, candidates).matches[0].confidence).toBe(0.9);
  });

  it('confirms the given venue, prefers a clearly better one, and says why', () => {
    const receipt = parseReceipt(text);
    const fresh = { id: 1, name: 'Fresh Mart', address: '12 Main Street, Springfield' };
    const other = { id: 2, name: 'Hardware Depot', address: '9 Elm Road' };
    expect(matchVenue(receipt, fresh, [fresh, other])).toMatchObject({ venue_id: '1', confidence: expect.any(Number) });
    expect(matchVenue(receipt, fresh, [fresh, other]).confidence).toBeGreaterThan(0.9);
    const wrongGiven = matchVenue(receipt, other, [fresh, other]);
    expect(wrongGiven.venue_id).toBe('1');
    expect(wrongGiven.explanation).toContain('not the given venue 2');
    expect(matchVenue(parseReceipt('SOMEWHERE ELSE\nBread 1.00'), null, [fresh, other]).venue_id).toBeNull();
  });
});
