/**
 * What the catalogue lacks: barcodes looked up that no product has, and receipt lines no product
 * matched, counted per organization so operators add what users actually scan. A sighting is one
 * update by `_id` ($inc); the list is bounded per organization (the least seen entry goes) and a
 * person is counted once a day per key, so a hostile key can neither grow it without bound nor
 * push its own codes up the ranking by repeating them. No user id is stored; the reasons are in
 * docs/components/retail.md ("What the catalogue lacks").
 */
import { warnLine } from '../core/background.ts';
import { Cache, isDuplicateKey } from '../core/db/index.ts';
import type { Barcode } from './barcodes.ts';
import type { UnknownItemKind } from './constants.ts';
import type { Page } from './queries.ts';
import { unknownItems } from './store.ts';

/** Distinct entries kept per organization; a new one beyond this evicts the least seen. */
export const UNKNOWN_ITEMS_MAX = 5000;
/** A receipt line is kept as at most this many characters of its normalized text. */
const RECEIPT_LINE_MAX = 60;

/**
 * Who was counted for which key today, in this process only (the user id never reaches the
 * store): a repeat within a day, or a scan's activity run again, counts nothing more. With
 * several processes a person may count once per process.
 */
const counted = new Cache<string, true>({ max: 200_000, ttlMs: 24 * 3600_000 });

/**
 * A receipt line's item name as kept: accents and case folded, runs of 4+ digits (card, phone,
 * account numbers) as `#`, anything but letters, digits and `#` as one space, cut to
 * RECEIPT_LINE_MAX. Null for a line without two letters together (nothing to name a product by).
 */
export function receiptLineKey(text: string): string | null {
  const key = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/\d{4,}/g, '#')
    .replace(/[^a-z0-9#]+/g, ' ')
    .trim()
    .slice(0, RECEIPT_LINE_MAX)
    .trim();
  return /[a-z]{2}/.test(key) ? key : null;
}

async function note(organization_id: string, kind: UnknownItemKind, key: string, seen_by: string): Promise<void> {
  const once = `${organization_id}|${kind}|${key}|${seen_by}`;
  if (counted.has(once)) return;
  counted.set(once, true);
  const now = new Date();
  if (await unknownItems.bump(organization_id, kind, key, now)) return;
  // A new entry: the organization's list stays within UNKNOWN_ITEMS_MAX. First sightings at once
  // may each pass it by one; the next new entry evicts everything over the cap, so it never drifts.
  const over = (await unknownItems.countOf(organization_id)) - UNKNOWN_ITEMS_MAX + 1;
  if (over > 0) await unknownItems.evict(organization_id, over);
  try {
    await unknownItems.add(organization_id, kind, key, now);
  } catch (err) {
    // Two first sightings at once: the other upsert inserted it, this one counts on it.
    if (!isDuplicateKey(err)) throw err;
    await unknownItems.bump(organization_id, kind, key, now);
  }
}

/** Counting never fails the lookup or the scan that saw it; a receipt's lines are counted at once. */
async function noteQuietly(organization_id: string, kind: UnknownItemKind, keys: string[], seen_by: string) {
  await Promise.all(
    [...new Set(keys)].map((key) =>
      note(organization_id, kind, key, seen_by).catch((err) =>
        warnLine('counting an unknown item failed', err, { organization_id, kind }),
      ),
    ),
  );
}

/** A barcode looked up that no product of the organization has (its matching key: GTIN-14, or `code:<code>`). */
export const noteUnknownBarcode = (organization_id: string, code: Barcode, seen_by: string) =>
  noteQuietly(organization_id, 'barcode', [code.key], seen_by);

/** Receipt lines of a scan no product matched (their item names, normalized by receiptLineKey). */
export const noteUnmatchedReceiptLines = (organization_id: string, names: readonly string[], seen_by: string) =>
  noteQuietly(
    organization_id,
    'receipt_line',
    names.map(receiptLineKey).filter((k): k is string => k !== null),
    seen_by,
  );

/** A product now has this barcode: it no longer lacks. */
export const barcodeResolved = (organization_id: string, code: Barcode) =>
  unknownItems.remove(organization_id, 'barcode', code.key);

interface UnknownItemView {
  kind: string;
  key: string;
  count: number;
  first_seen: string;
  last_seen: string;
}

/** The organization's entries, most seen first (then by key), paged. */
export async function listUnknownItems(organization_id: string, kind: UnknownItemKind | undefined, page: Page) {
  const { docs, total } = await unknownItems.page(organization_id, kind, page);
  const items: UnknownItemView[] = docs.map((d) => ({
    kind: d.kind,
    key: d.key,
    count: d.count,
    first_seen: new Date(d.first_seen).toISOString(),
    last_seen: new Date(d.last_seen).toISOString(),
  }));
  return { items, page: page.page, limit: page.limit, total, has_more: page.page * page.limit < total };
}
