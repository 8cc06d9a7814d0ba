/** Venue-product statuses: any short label is stored; the known ones keep their meaning in ticket scanning. */
import { describe, expect, it } from 'vitest';

import { matchProducts } from '../../activities/scanning/matching.ts';
import { parseReceipt } from '../../activities/scanning/receipt.ts';

const confidence = (status: string | null) =>
  matchProducts(parseReceipt('FRESH MART\nWhole Milk 1L 1.25').items, [
    { id: 1, name: 'Whole Milk 1L', brand_id: 1, price: 1.25, status },
  ]).matches[0].confidence;

describe('a venue product status in ticket-scan matching', () => {
  it('"available", "in_stock" and labels the platform does not know count as on sale, like "active"', () => {
    const active = confidence('active');
    for (const s of ['available', 'Available', 'in_stock', 'seasonal', 'promo-2026'])
      expect(confidence(s), s).toBe(active);
  });

  it('the not-on-sale statuses, in any case or spelling with spaces or hyphens, lower the confidence', () => {
    const active = confidence('active');
    for (const s of [
      'inactive',
      'out_of_stock',
      'Out of stock',
      'out-of-stock',
      'discontinued',
      'unavailable',
      'sold_out',
    ])
      expect(confidence(s), s).toBeCloseTo(active * 0.9, 6);
  });
});
