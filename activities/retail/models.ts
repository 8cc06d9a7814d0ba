import mongoose, { Schema } from 'mongoose';

import { MAPPING_STATUS_MAX_LENGTH, type MappingStatus } from './constants.ts';

/**
 * The retail catalogue of an organization (schemas only: store.ts is the one file that reads and
 * writes them). Ids are integers, as clients know them, and are the primary key, so allocating
 * one is an insert that cannot collide silently.
 */
const timestamps = { createdAt: 'created_at', updatedAt: 'updated_at' } as const;

const brandSchema = new Schema(
  {
    _id: { type: Number, required: true },
    organization_id: { type: String, required: true },
    name: { type: String, required: true },
    description: { type: String, default: '' },
    logo_url: { type: String, default: '' },
    featured: { type: Boolean, default: false },
    featured_rank: { type: Number, default: 0 },
  },
  { timestamps, versionKey: false },
);
brandSchema.index({ organization_id: 1, featured: 1 });

const productSchema = new Schema(
  {
    _id: { type: Number, required: true },
    organization_id: { type: String, required: true },
    name: { type: String, required: true },
    brand_id: { type: Number, required: true },
    description: { type: String, default: '' },
    /** as given by the admin (a GTIN's digits without spaces or hyphens) */
    barcode: { type: String, default: '' },
    /**
     * What equal barcodes share (barcodes.ts): a GTIN as GTIN-14, so UPC-A, UPC-E and their EAN-13
     * forms find the same product; any other code as `code:<code>`; `id:<product id>` without a
     * barcode (the embedded server has no partial indexes; see activities/core/db/README.md).
     */
    gtin: { type: String, required: true },
    featured: { type: Boolean, default: false },
    featured_rank: { type: Number, default: 0 },
  },
  { timestamps, versionKey: false },
);
productSchema.index({ organization_id: 1, brand_id: 1 });
productSchema.index({ organization_id: 1, gtin: 1 }, { unique: true });

/**
 * A venue. `venue_id` repeats `_id` and `lat_band` is floor(latitude / LAT_BAND_DEG) (geo.ts): the
 * embedded server answers filters on indexed fields from its indexes but not a numeric `_id`, and
 * has no geospatial index; MongoDB answers both indexes the same way. Venues written before these
 * fields existed are given them on first use (store.ts: ensureVenueFields); some still carry a
 * GeoJSON `location` nobody reads.
 */
const venueSchema = new Schema(
  {
    _id: { type: Number, required: true },
    organization_id: { type: String, required: true },
    venue_id: { type: Number, required: true },
    name: { type: String, required: true },
    address: { type: String, default: '' },
    latitude: { type: Number, required: true },
    longitude: { type: Number, required: true },
    lat_band: { type: Number, required: true },
  },
  { timestamps, versionKey: false },
);
// A venue by id; nearby search (a box: its bands and a longitude range).
venueSchema.index({ organization_id: 1, venue_id: 1 });
venueSchema.index({ organization_id: 1, lat_band: 1, longitude: 1 });
// Giving an older venue its fields: an update by its exact position (its `_id` alone is no index there).
venueSchema.index({ organization_id: 1, latitude: 1, longitude: 1 });

const venueProductSchema = new Schema(
  {
    /** `<venue_id>:<product_id>`: one mapping per pair, a repeated POST updates it */
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    venue_id: { type: Number, required: true },
    product_id: { type: Number, required: true },
    price: { type: Number, required: true },
    status: { type: String, required: true, maxlength: MAPPING_STATUS_MAX_LENGTH },
  },
  { timestamps, versionKey: false },
);
venueProductSchema.index({ venue_id: 1 });
venueProductSchema.index({ product_id: 1 });

/** Third-party places data per venue, kept PLACES_CACHE_HOURS. */
const placesCacheSchema = new Schema(
  {
    _id: { type: Number, required: true },
    source: { type: String, required: true },
    /** JSON text of the provider's normalized answer (null: no such place) */
    data: { type: String, required: true },
    fetched_at: { type: Date, required: true },
  },
  { versionKey: false },
);

export interface BrandDoc {
  _id: number;
  organization_id: string;
  name: string;
  description: string;
  logo_url: string;
  featured: boolean;
  featured_rank: number;
  created_at: Date;
  updated_at: Date;
}
export interface ProductDoc {
  _id: number;
  organization_id: string;
  name: string;
  brand_id: number;
  description: string;
  barcode: string;
  gtin: string;
  featured: boolean;
  featured_rank: number;
  created_at: Date;
  updated_at: Date;
}
export interface VenueDoc {
  _id: number;
  organization_id: string;
  name: string;
  address: string;
  latitude: number;
  longitude: number;
  venue_id: number;
  lat_band: number;
  created_at: Date;
  updated_at: Date;
}
export interface VenueProductDoc {
  _id: string;
  organization_id: string;
  venue_id: number;
  product_id: number;
  price: number;
  status: MappingStatus;
  created_at: Date;
  updated_at: Date;
}

export interface PlacesCacheDoc {
  _id: number;
  source: string;
  data: string;
  fetched_at: Date;
}

export const Brand = mongoose.model<BrandDoc>('Brand', brandSchema, 'retail_brands');
export const Product = mongoose.model<ProductDoc>('Product', productSchema, 'retail_products');
export const Venue = mongoose.model<VenueDoc>('Venue', venueSchema, 'retail_venues');
export const VenueProduct = mongoose.model<VenueProductDoc>(
  'VenueProduct',
  venueProductSchema,
  'retail_venue_products',
);
/**
 * What the catalogue lacks (unknown-items.ts): a barcode looked up that no product has, a receipt
 * line no product matched, counted per organization. `_id` is `<organization>|<kind>|<key>`, so a
 * sighting is one upsert with `$inc`. No user id is kept (docs/components/retail.md).
 */
const unknownItemSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    kind: { type: String, required: true },
    key: { type: String, required: true },
    count: { type: Number, required: true },
    first_seen: { type: Date, required: true },
    last_seen: { type: Date, required: true },
  },
  { versionKey: false },
);
// The ranking (most seen first), with and without the kind; and the least seen, evicted first.
unknownItemSchema.index({ organization_id: 1, count: -1, key: 1 });
unknownItemSchema.index({ organization_id: 1, kind: 1, count: -1, key: 1 });
unknownItemSchema.index({ organization_id: 1, count: 1, last_seen: 1 });

export interface UnknownItemDoc {
  _id: string;
  organization_id: string;
  kind: string;
  key: string;
  count: number;
  first_seen: Date;
  last_seen: Date;
}
export const UnknownItem = mongoose.model<UnknownItemDoc>('UnknownItem', unknownItemSchema, 'retail_unknown_items');

/** Every integer id ever handed out, `<kind>:<n>` (ids.ts). */
const retailIdSchema = new Schema(
  {
    _id: { type: String, required: true },
    kind: { type: String, required: true },
    n: { type: Number, required: true },
  },
  { versionKey: false },
);
retailIdSchema.index({ kind: 1, n: -1 });

export const RetailId = mongoose.model<{ _id: string; kind: string; n: number }>(
  'RetailId',
  retailIdSchema,
  'retail_ids',
);
export const PlacesCache = mongoose.model<PlacesCacheDoc>('PlacesCache', placesCacheSchema, 'retail_places_cache');
