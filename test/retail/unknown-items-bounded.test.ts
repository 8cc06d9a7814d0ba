/**
 * The unknown-items list stays bounded per organization (the least seen entry goes first) and
 * keeps receipt lines as normalized item names only: called in-process against the real store.
 */
import { describe, expect, it } from 'vitest';

import { parseBarcode } from '../../activities/retail/barcodes.ts';
import { UnknownItem } from '../../activities/retail/models.ts';
import {
  listUnknownItems,
  noteUnknownBarcode,
  receiptLineKey,
  UNKNOWN_ITEMS_MAX,
} from '../../activities/retail/unknown-items.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();

describe('unknown items, bounded', () => {
  it('keeps at most UNKNOWN_ITEMS_MAX entries per organization: a new one evicts the least seen, the often seen stay', async () => {
    const org = `org_unknown_cap_${Date.now()}`;
    const old = new Date(Date.now() - 86_400_000);
    const docs = Array.from({ length: UNKNOWN_ITEMS_MAX }, (_, i) => ({
      _id: `${org}|barcode|code:seen-${i}`,
      organization_id: org,
      kind: 'barcode',
      key: `code:seen-${i}`,
      // one entry seen once, long ago; the others seen more often
      count: i === 7 ? 1 : 2 + (i % 5),
      first_seen: old,
      last_seen: i === 7 ? old : new Date(),
    }));
    await UnknownItem.collection.insertMany(docs as never[]);

    await noteUnknownBarcode(org, parseBarcode('NEW-CODE-1'), 'hostile-user');
    expect(await UnknownItem.countDocuments({ organization_id: org })).toBe(UNKNOWN_ITEMS_MAX);
    expect(await UnknownItem.exists({ _id: `${org}|barcode|code:seen-7` })).toBeNull();
    // a flood of new codes only churns the entries seen once: every often-seen one stays
    for (let i = 2; i <= 20; i += 1) await noteUnknownBarcode(org, parseBarcode(`NEW-CODE-${i}`), 'hostile-user');
    expect(await UnknownItem.countDocuments({ organization_id: org })).toBe(UNKNOWN_ITEMS_MAX);
    expect(await UnknownItem.countDocuments({ organization_id: org, count: { $gte: 2 } })).toBe(UNKNOWN_ITEMS_MAX - 1);
    const top = await listUnknownItems(org, 'barcode', { page: 1, limit: 3 });
    expect(top.total).toBe(UNKNOWN_ITEMS_MAX);
    expect(top.items.map((i) => i.count)).toEqual([6, 6, 6]);
    // New codes at once may each pass the cap by one; the next new one brings the list back under it.
    await Promise.all(
      Array.from({ length: 30 }, (_, i) => noteUnknownBarcode(org, parseBarcode(`BURST-${i}`), `burst-${i}`)),
    );
    await noteUnknownBarcode(org, parseBarcode('AFTER-BURST'), 'hostile-user');
    expect(await UnknownItem.countDocuments({ organization_id: org })).toBe(UNKNOWN_ITEMS_MAX);
    await UnknownItem.deleteMany({ organization_id: org });
  });

  it('keeps a receipt line as its folded item name: digit runs masked, at most 60 characters, nothing without letters', () => {
    expect(receiptLineKey('Crème Brûlée 2x')).toBe('creme brulee 2x');
    expect(receiptLineKey('CARD 4111111111111111 J.DOE@MAIL.COM')).toBe('card # j doe mail com');
    expect(receiptLineKey('Tel 0612345678')).toBe('tel #');
    expect(receiptLineKey('x'.repeat(80) + ' tail')).toBe('x'.repeat(60));
    expect(receiptLineKey('12.50 *')).toBeNull();
    expect(receiptLineKey('   ')).toBeNull();
  });
});
