/** The JSON shapes of retail resources. */
import { noteChange } from '../core/audit-note.ts';
import { describeBarcode } from './barcodes.ts';
import type { BrandDoc, ProductDoc, VenueDoc, VenueProductDoc } from './store.ts';

const iso = (d: Date | undefined) => (d ? new Date(d).toISOString() : null);

export const brandView = (b: BrandDoc) => ({
  id: b._id,
  organization_id: b.organization_id,
  name: b.name,
  description: b.description ?? '',
  logo_url: b.logo_url ?? '',
  featured: Boolean(b.featured),
  featured_rank: b.featured_rank ?? 0,
  created_at: iso(b.created_at),
  updated_at: iso(b.updated_at),
});
export type BrandView = ReturnType<typeof brandView>;

export const productView = (p: ProductDoc) => ({
  id: p._id,
  organization_id: p.organization_id,
  name: p.name,
  brand_id: p.brand_id,
  description: p.description ?? '',
  barcode: p.barcode ?? '',
  ...describeBarcode(p.barcode),
  featured: Boolean(p.featured),
  featured_rank: p.featured_rank ?? 0,
  created_at: iso(p.created_at),
  updated_at: iso(p.updated_at),
});
export type ProductView = ReturnType<typeof productView>;

export const venueView = (v: VenueDoc) => ({
  id: v._id,
  organization_id: v.organization_id,
  name: v.name,
  address: v.address ?? '',
  latitude: v.latitude,
  longitude: v.longitude,
  created_at: iso(v.created_at),
  updated_at: iso(v.updated_at),
});
export type VenueView = ReturnType<typeof venueView>;

export const mappingView = (m: VenueProductDoc) => ({
  venue_id: m.venue_id,
  product_id: m.product_id,
  price: m.price,
  status: m.status,
  updated_at: iso(m.updated_at),
});
export type MappingView = ReturnType<typeof mappingView>;

/** For the audit record of a replace: each field of the item's view that changed, with its previous value. */
export function noteViewChanges(before: Record<string, unknown>, after: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(after)) {
    if (k === 'id' || k === 'organization_id' || k === 'created_at' || k === 'updated_at') continue;
    if (JSON.stringify(before[k] ?? null) !== JSON.stringify(v ?? null)) noteChange(k, before[k] ?? null, v ?? null);
  }
}
