/**
 * The retail store: the one file that reads and writes the catalogue's collections. Single items
 * are read by `_id` (with the organization checked in the same filter), which both servers answer
 * from the primary key. Listings filter by organization on the indexes the schemas declare: an
 * index on MongoDB, a scan of the collection on the embedded FerretDB (admin pages and search
 * only; nearby search and receipt matching use the venue index there, see venue-index.ts).
 */
import type { Model } from 'mongoose';
import { jsonText } from '../db';
import type { CachedPlace, Place, PlacesCache as PlacesCacheApi } from '../engines/places';
import type { MappingStatus, RetailKind } from './constants';
import {
  Brand,
  PlacesCache,
  Product,
  RetailId,
  Venue,
  VenueChange,
  VenueProduct,
  type BrandDoc,
  type GeoPoint,
  type ProductDoc,
  type VenueDoc,
  type VenueProductDoc,
} from './models';

export type { BrandDoc, GeoPoint, ProductDoc, VenueDoc, VenueProductDoc };

export interface Page {
  page: number;
  limit: number;
}

/** One page in id order, with the total. */
export async function paged<D, V>(model: Model<D>, filter: Record<string, unknown>, page: Page, view: (d: D) => V, projection?: Record<string, 0>) {
  const [docs, total] = await Promise.all([
    model.find(filter, projection).sort({ _id: 1 }).skip((page.page - 1) * page.limit).limit(page.limit).lean<D[]>(),
    model.countDocuments(filter),
  ]);
  return { items: docs.map(view), page: page.page, limit: page.limit, total, has_more: page.page * page.limit < total };
}

// --- ids ---

export async function highestRetailId(kind: RetailKind): Promise<number> {
  const top = await RetailId.findOne({ kind }, { n: 1 }).sort({ n: -1 }).lean();
  return top?.n ?? 0;
}

/** Inserts the id rows in order; a duplicate key error means another process took one. */
export async function reserveRetailIds(kind: RetailKind, ids: number[]): Promise<void> {
  await RetailId.insertMany(ids.map((n) => ({ _id: `${kind}:${n}`, kind, n })), { ordered: true });
}

// --- brands ---

export const brands = {
  insert: async (doc: Omit<BrandDoc, 'created_at' | 'updated_at' | 'description' | 'logo_url' | 'featured' | 'featured_rank'> & Partial<BrandDoc>) => (await Brand.create(doc)).toObject() as BrandDoc,
  get: (organization_id: string, _id: number) => Brand.findOne({ _id, organization_id }).lean<BrandDoc>(),
  exists: async (organization_id: string, _id: number) => Boolean(await Brand.exists({ _id, organization_id })),
  set: (organization_id: string, _id: number, set: Partial<BrandDoc>) => Brand.findOneAndUpdate({ _id, organization_id }, { $set: set }, { new: true }).lean<BrandDoc>(),
  remove: async (organization_id: string, _id: number) => void (await Brand.deleteOne({ _id, organization_id })),
  page: <V>(filter: Record<string, unknown>, page: Page, view: (d: BrandDoc) => V) => paged<BrandDoc, V>(Brand, filter, page, view),
  featured: (organization_id: string, limit: number) => Brand.find({ organization_id, featured: true }).sort({ featured_rank: 1, _id: 1 }).limit(limit).lean<BrandDoc[]>(),
  ofOrganization: (organization_id: string) => Brand.find({ organization_id }).lean<BrandDoc[]>(),
};

// --- products ---

export const products = {
  insert: async (doc: Partial<ProductDoc> & Pick<ProductDoc, '_id' | 'organization_id' | 'name' | 'brand_id' | 'gtin'>) => (await Product.create(doc)).toObject() as ProductDoc,
  get: (organization_id: string, _id: number) => Product.findOne({ _id, organization_id }).lean<ProductDoc>(),
  exists: async (organization_id: string, _id: number) => Boolean(await Product.exists({ _id, organization_id })),
  byGtin: (organization_id: string, gtin: string) => Product.findOne({ organization_id, gtin }).lean<ProductDoc>(),
  set: (organization_id: string, _id: number, set: Partial<ProductDoc>) => Product.findOneAndUpdate({ _id, organization_id }, { $set: set }, { new: true }).lean<ProductDoc>(),
  /** the product and its venue mappings */
  remove: async (organization_id: string, _id: number) => {
    await VenueProduct.deleteMany({ organization_id, product_id: _id });
    await Product.deleteOne({ _id, organization_id });
  },
  countOfBrand: (organization_id: string, brand_id: number) => Product.countDocuments({ organization_id, brand_id }),
  ofBrand: (organization_id: string, brand_id: number) => Product.find({ organization_id, brand_id }).sort({ _id: 1 }).lean<ProductDoc[]>(),
  page: <V>(filter: Record<string, unknown>, page: Page, view: (d: ProductDoc) => V) => paged<ProductDoc, V>(Product, filter, page, view),
  featured: (organization_id: string, limit: number) => Product.find({ organization_id, featured: true }).sort({ featured_rank: 1, _id: 1 }).limit(limit).lean<ProductDoc[]>(),
  ofOrganization: (organization_id: string) => Product.find({ organization_id }).lean<ProductDoc[]>(),
  byIds: (organization_id: string, ids: number[]) => Product.find({ _id: { $in: ids }, organization_id }).lean<ProductDoc[]>(),
};

// --- venues ---

const NO_LOCATION = { location: 0 } as const;

export const venues = {
  insert: async (doc: Omit<VenueDoc, 'created_at' | 'updated_at'>) => (await Venue.create(doc)).toObject() as VenueDoc,
  /** bulk import: one insert per 1,000 */
  insertMany: async (docs: Array<Omit<VenueDoc, 'created_at' | 'updated_at'>>) => {
    for (let i = 0; i < docs.length; i += 1000) {
      const now = new Date();
      await Venue.collection.insertMany(docs.slice(i, i + 1000).map((d) => ({ ...d, created_at: now, updated_at: now })) as never[], { ordered: true });
    }
  },
  get: (organization_id: string, _id: number) => Venue.findOne({ _id, organization_id }, NO_LOCATION).lean<VenueDoc>(),
  /** (no projection: FerretDB 1.x refuses one on findAndModify) */
  set: (organization_id: string, _id: number, set: Partial<VenueDoc>) => Venue.findOneAndUpdate({ _id, organization_id }, { $set: set }, { new: true }).lean<VenueDoc>(),
  /** the venue, its product mappings and its places answer */
  remove: async (organization_id: string, _id: number) => {
    await VenueProduct.deleteMany({ organization_id, venue_id: _id });
    await Venue.deleteOne({ _id, organization_id });
    await PlacesCache.deleteOne({ _id });
  },
  page: <V>(filter: Record<string, unknown>, page: Page, view: (d: VenueDoc) => V) => paged<VenueDoc, V>(Venue, filter, page, view, NO_LOCATION),
  /** MongoDB's 2dsphere index, nearest first */
  near: (organization_id: string, at: GeoPoint, radiusM: number, limit: number) =>
    Venue.find({ organization_id, location: { $nearSphere: { $geometry: at, $maxDistance: radiusM } } }, NO_LOCATION).limit(limit).lean<VenueDoc[]>(),
  ofOrganization: (organization_id: string, limit: number) => Venue.find({ organization_id }, NO_LOCATION).limit(limit).lean<VenueDoc[]>(),
  /** every venue of every organization: the venue index's initial load */
  all: () => Venue.find({}, NO_LOCATION).lean<VenueDoc[]>(),
  byIds: (ids: number[]) => Venue.find({ _id: { $in: ids } }, NO_LOCATION).lean<VenueDoc[]>(),
  /** Whether the server answers geospatial queries: a 2dsphere index and a $nearSphere query must both work. */
  async geoQueries(): Promise<boolean> {
    try {
      await Venue.collection.createIndex({ location: '2dsphere' });
      await Venue.find({ location: { $nearSphere: { $geometry: { type: 'Point', coordinates: [0, 0] }, $maxDistance: 1 } } }).limit(1).lean();
      return true;
    } catch {
      return false;
    }
  },
};

// --- venue changes (read by the venue index) ---

export const venueChanges = {
  record: async (_id: string, venue_id: number, at: Date) => void (await VenueChange.create({ _id, venue_id, at })),
  /** `_id`s sort by time: a range on the primary key (the collection holds an hour at most) */
  since: (fromKey: string) => VenueChange.find({ _id: { $gte: fromKey } }).lean<Array<{ _id: string; venue_id: number }>>(),
  pruneBefore: async (key: string) => void (await VenueChange.deleteMany({ _id: { $lt: key } })),
};

// --- venue products ---

export const mappings = {
  /** One writer per pair in practice (an admin); a lost race leaves one of two equal-shaped rows. */
  upsert: (m: { organization_id: string; venue_id: number; product_id: number; price: number; status: MappingStatus }) =>
    VenueProduct.findOneAndUpdate({ _id: `${m.venue_id}:${m.product_id}` }, { $set: m }, { upsert: true, new: true }).lean<VenueProductDoc>(),
  ofVenue: (organization_id: string, venue_id: number) => VenueProduct.find({ organization_id, venue_id }).sort({ product_id: 1 }).lean<VenueProductDoc[]>(),
  removeOfVenue: async (organization_id: string, venue_id: number) => void (await VenueProduct.deleteMany({ organization_id, venue_id })),
};

// --- places answers (the places engine's cache) ---

const placeText = jsonText<Place | null>(null);

export const placesCache: PlacesCacheApi & { forget(venue_id: number): Promise<void> } = {
  async get(venue_id) {
    const doc = await PlacesCache.findById(venue_id).lean<{ source: CachedPlace['source']; data: string; fetched_at: Date }>();
    return doc ? { source: doc.source, place: placeText.decode(doc.data), fetched_at: doc.fetched_at } : null;
  },
  async put(venue_id, e) {
    await PlacesCache.replaceOne({ _id: venue_id }, { _id: venue_id, source: e.source, data: placeText.encode(e.place), fetched_at: e.fetched_at }, { upsert: true });
  },
  /** A venue's address or name changed: its places answer no longer applies. */
  async forget(venue_id) {
    await PlacesCache.deleteOne({ _id: venue_id });
  },
};
