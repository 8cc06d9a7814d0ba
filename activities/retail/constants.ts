/** Retail values the edge validates against, kept apart from the schemas so it imports no model. */
export const MAPPING_STATUSES = ['active', 'inactive', 'out_of_stock', 'discontinued'] as const;
export type MappingStatus = (typeof MAPPING_STATUSES)[number];

export type RetailKind = 'brand' | 'product' | 'venue';
