/** Retail values the edge validates against, kept apart from the schemas so it imports no model. */
/**
 * A venue-product status is any label of 1 to MAPPING_STATUS_MAX_LENGTH characters (the interface
 * says only "string"; clients send `available`, `active`, `in_stock`…), stored and returned as
 * given. The platform gives meaning to one distinction: NOT_ON_SALE_STATUSES mean the venue does
 * not sell the product now (ticket scanning trusts a match to it a little less); every other
 * label, `active` (the default) included, means on sale.
 */
export const MAPPING_STATUS_MAX_LENGTH = 40;
export const DEFAULT_MAPPING_STATUS = 'active';
export const NOT_ON_SALE_STATUSES = ['inactive', 'unavailable', 'out_of_stock', 'sold_out', 'discontinued'] as const;
export type MappingStatus = string;

/** Compared without case, with spaces and hyphens as underscores: "Out of stock" is out_of_stock. */
export function isOnSaleStatus(status: string): boolean {
  const key = status
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
  return !(NOT_ON_SALE_STATUSES as readonly string[]).includes(key);
}

export type RetailKind = 'brand' | 'product' | 'venue';

/** What the catalogue lacks (GET /retail/admin/unknown-items): a barcode looked up, a receipt line. */
export const UNKNOWN_ITEM_KINDS = ['barcode', 'receipt_line'] as const;
export type UnknownItemKind = (typeof UNKNOWN_ITEM_KINDS)[number];
