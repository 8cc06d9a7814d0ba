/**
 * The retail store: the one file that reads and writes the catalogue's collections. Brands and
 * products are read by `_id` with the organization checked in the same filter; listings filter by
 * organization on the indexes the schemas declare. Venues carry two indexed fields beside their
 * position (models.ts): `venue_id` (a venue by id) and `lat_band` (nearby search: a box is its
 * bands and a longitude range); older venues get them on first use (hasOlderVenues).
 */
import type { Model } from 'mongoose';

import type { CachedPlace, Place, PlacesCache as PlacesCacheApi } from '../adapters/places.ts';
import { Cache, jsonText } from '../core/db/index.ts';
import type { MappingStatus, RetailKind } from './constants.ts';
import { latBand } from './geo.ts';
import {
  Brand,
  type BrandDoc,
  PlacesCache,
  Product,
  type ProductDoc,
  RetailId,
  UnknownItem,
  type UnknownItemDoc,
  Venue,
  type VenueDoc,
  VenueProduct,
  type VenueProductDoc,
} from './models.ts';

export type { BrandDoc, ProductDoc, UnknownItemDoc, VenueDoc, VenueProductDoc };

export interface Page {
  page: number;
  limit: number;
}

/** One page in id order, with the total. */
async function paged<D, V>(
  model: Model<D>,
  filter: Record<string, unknown>,
  page: Page,
  view: (d: D) => V,
  projection?: Record<string, 0>,
) {
  const [docs, total] = await Promise.all([
    model
      .find(filter, projection)
      .sort({ _id: 1 })
      .skip((page.page - 1) * page.limit)
      .limit(page.limit)
      .lean<D[]>(),
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
  await RetailId.insertMany(
    ids.map((n) => ({ _id: `${kind}:${n}`, kind, n })),
    { ordered: true },
  );
}

// --- brands ---

export const brands = {
  insert: async (
    doc: Omit<BrandDoc, 'created_at' | 'updated_at' | 'description' | 'logo_url' | 'featured' | 'featured_rank'> &
      Partial<BrandDoc>,
  ) => (await Brand.create(doc)).toObject() as BrandDoc,
  get: (organization_id: string, _id: number) => Brand.findOne({ _id, organization_id }).lean<BrandDoc>(),
  exists: async (organization_id: string, _id: number) => Boolean(await Brand.exists({ _id, organization_id })),
  set: (organization_id: string, _id: number, set: Partial<BrandDoc>) =>
    Brand.findOneAndUpdate({ _id, organization_id }, { $set: set }, { new: true }).lean<BrandDoc>(),
  remove: async (organization_id: string, _id: number) => void (await Brand.deleteOne({ _id, organization_id })),
  page: <V>(filter: Record<string, unknown>, page: Page, view: (d: BrandDoc) => V) =>
    paged<BrandDoc, V>(Brand, filter, page, view),
  featured: (organization_id: string, limit: number) =>
    Brand.find({ organization_id, featured: true }).sort({ featured_rank: 1, _id: 1 }).limit(limit).lean<BrandDoc[]>(),
  ofOrganization: (organization_id: string) => Brand.find({ organization_id }).lean<BrandDoc[]>(),
};

// --- products ---

export const products = {
  insert: async (
    doc: Partial<ProductDoc> & Pick<ProductDoc, '_id' | 'organization_id' | 'name' | 'brand_id' | 'gtin'>,
  ) => (await Product.create(doc)).toObject() as ProductDoc,
  get: (organization_id: string, _id: number) => Product.findOne({ _id, organization_id }).lean<ProductDoc>(),
  exists: async (organization_id: string, _id: number) => Boolean(await Product.exists({ _id, organization_id })),
  byGtin: (organization_id: string, gtin: string) => Product.findOne({ organization_id, gtin }).lean<ProductDoc>(),
  set: (organization_id: string, _id: number, set: Partial<ProductDoc>) =>
    Product.findOneAndUpdate({ _id, organization_id }, { $set: set }, { new: true }).lean<ProductDoc>(),
  /** the product and its venue mappings */
  remove: async (organization_id: string, _id: number) => {
    await VenueProduct.deleteMany({ organization_id, product_id: _id });
    await Product.deleteOne({ _id, organization_id });
  },
  countOfBrand: (organization_id: string, brand_id: number) => Product.countDocuments({ organization_id, brand_id }),
  ofBrand: (organization_id: string, brand_id: number) =>
    Product.find({ organization_id, brand_id }).sort({ _id: 1 }).lean<ProductDoc[]>(),
  page: <V>(filter: Record<string, unknown>, page: Page, view: (d: ProductDoc) => V) =>
    paged<ProductDoc, V>(Product, filter, page, view),
  featured: (organization_id: string, limit: number) =>
    Product.find({ organization_id, featured: true })
      .sort({ featured_rank: 1, _id: 1 })
      .limit(limit)
      .lean<ProductDoc[]>(),
  ofOrganization: (organization_id: string) => Product.find({ organization_id }).lean<ProductDoc[]>(),
  byIds: (organization_id: string, ids: number[]) =>
    Product.find({ _id: { $in: ids }, organization_id }).lean<ProductDoc[]>(),
};

// --- venues ---

/** The indexed fields every venue write carries (models.ts). */
const indexedFields = (d: { _id: number; latitude: number }) => ({ venue_id: d._id, lat_band: latBand(d.latitude) });

/** The venue of the organization, found through the {organization_id, venue_id} index. */
const byVenueId = (organization_id: string, _id: number) => ({ _id, organization_id, venue_id: _id });
/** An older venue: among those the organization has left without the fields (the embedded server reads them all). */
const asOlder = (organization_id: string, _id: number) => ({ _id, organization_id, lat_band: null });

/**
 * Organizations this process found without older venues (written before venue_id and lat_band):
 * skips that check, one indexed read, for 10 minutes (a process of the previous version still
 * running during an upgrade may write one meanwhile).
 */
const upToDate = new Cache<string, true>({ max: 10_000, ttlMs: 10 * 60_000 });
const migrating = new Map<string, Promise<void>>();
const MIGRATION_BATCH = 500;

/** Gives the organization's older venues their indexed fields, a batch at a time, each by its exact position (an index). */
async function giveFields(organization_id: string): Promise<void> {
  for (;;) {
    const docs = await Venue.find({ organization_id, lat_band: null }, { latitude: 1, longitude: 1 })
      .limit(MIGRATION_BATCH)
      .lean<Array<Pick<VenueDoc, '_id' | 'latitude' | 'longitude'>>>();
    if (!docs.length) return;
    const res = await Venue.bulkWrite(
      docs.map((d) => ({
        updateOne: {
          filter: { _id: d._id, organization_id, latitude: d.latitude, longitude: d.longitude },
          update: { $set: indexedFields(d) },
        },
      })),
      { ordered: false },
    );
    if (!res.matchedCount) return; // moved or deleted meanwhile: then written with the fields
  }
}

/**
 * Whether the organization still has older venues; when it has, they are given their fields in
 * the background and callers also read them the old way until then (on the embedded server that
 * reads the organization's venues: once after an upgrade, while the fields are written).
 */
async function hasOlderVenues(organization_id: string): Promise<boolean> {
  if (upToDate.has(organization_id)) return false;
  if (!(await Venue.exists({ organization_id, lat_band: null }))) {
    upToDate.set(organization_id, true);
    return false;
  }
  if (!migrating.has(organization_id)) {
    const done = giveFields(organization_id).finally(() => migrating.delete(organization_id));
    done.catch(() => undefined); // the next call starts again
    migrating.set(organization_id, done);
  }
  return true;
}

/** `$in` lists stay well under what the embedded server pushes down (1,000 values). */
const BANDS_PER_QUERY = 500;

export type NewVenue = Omit<VenueDoc, 'created_at' | 'updated_at' | 'venue_id' | 'lat_band'>;

export const venues = {
  insert: async (doc: NewVenue) => (await Venue.create({ ...doc, ...indexedFields(doc) })).toObject() as VenueDoc,
  /** bulk import: one insert per 1,000 */
  insertMany: async (docs: NewVenue[]) => {
    for (let i = 0; i < docs.length; i += 1000) {
      const now = new Date();
      await Venue.collection.insertMany(
        docs
          .slice(i, i + 1000)
          .map((d) => ({ ...d, ...indexedFields(d), created_at: now, updated_at: now })) as never[],
        { ordered: true },
      );
    }
  },
  get: async (organization_id: string, _id: number) => {
    const get = () => Venue.findOne(byVenueId(organization_id, _id)).lean<VenueDoc>();
    // (a venue given its fields between the two reads is found by the third)
    return (
      (await get()) ??
      ((await hasOlderVenues(organization_id))
        ? ((await Venue.findOne(asOlder(organization_id, _id)).lean<VenueDoc>()) ?? get())
        : null)
    );
  },
  set: async (
    organization_id: string,
    _id: number,
    set: Pick<VenueDoc, 'name' | 'address' | 'latitude' | 'longitude'>,
  ) => {
    const update = { $set: { ...set, ...indexedFields({ _id, latitude: set.latitude }) } };
    const setBy = (filter: object) => Venue.findOneAndUpdate(filter, update, { new: true }).lean<VenueDoc>();
    return (
      (await setBy(byVenueId(organization_id, _id))) ??
      ((await hasOlderVenues(organization_id))
        ? ((await setBy(asOlder(organization_id, _id))) ?? setBy(byVenueId(organization_id, _id)))
        : null)
    );
  },
  /** the venue, its product mappings and its places answer */
  remove: async (organization_id: string, _id: number) => {
    await VenueProduct.deleteMany({ organization_id, venue_id: _id });
    const { deletedCount } = await Venue.deleteOne(byVenueId(organization_id, _id));
    if (
      !deletedCount &&
      (await hasOlderVenues(organization_id)) &&
      !(await Venue.deleteOne(asOlder(organization_id, _id))).deletedCount
    )
      await Venue.deleteOne(byVenueId(organization_id, _id));
    await PlacesCache.deleteOne({ _id });
  },
  page: <V>(filter: Record<string, unknown>, page: Page, view: (d: VenueDoc) => V) =>
    paged<VenueDoc, V>(Venue, filter, page, view),
  /** The organization's venues in the latitude bands and the longitude range (inclusive). */
  async inBox(organization_id: string, bands: number[], west: number, east: number): Promise<VenueDoc[]> {
    const reads: Array<Promise<VenueDoc[]>> = [];
    for (let i = 0; i < bands.length; i += BANDS_PER_QUERY) {
      reads.push(
        Venue.find({
          organization_id,
          lat_band: { $in: bands.slice(i, i + BANDS_PER_QUERY) },
          longitude: { $gte: west, $lte: east },
        }).lean<VenueDoc[]>(),
      );
    }
    return (await Promise.all(reads)).flat();
  },
  /** The organization's venues in the box not yet given their fields (none, without a read, once all have them). */
  olderInBox: async (organization_id: string, box: { minLat: number; maxLat: number }, west: number, east: number) =>
    (await hasOlderVenues(organization_id))
      ? Venue.find({
          organization_id,
          lat_band: null,
          latitude: { $gte: box.minLat, $lte: box.maxLat },
          longitude: { $gte: west, $lte: east },
        }).lean<VenueDoc[]>()
      : [],
  ofOrganization: (organization_id: string, limit: number) =>
    Venue.find({ organization_id }).limit(limit).lean<VenueDoc[]>(),
  /**
   * Whether every venue of the organization is known to have its indexed fields (no older venue
   * left, checked within 10 minutes): only then may a process keep cells of them (venue-cells.ts).
   */
  fieldsSettled: (organization_id: string) => upToDate.has(organization_id),
};

// --- venue products ---

export const mappings = {
  /** One writer per pair in practice (an admin); a lost race leaves one of two equal-shaped rows. */
  upsert: (m: {
    organization_id: string;
    venue_id: number;
    product_id: number;
    price: number;
    status: MappingStatus;
  }) =>
    VenueProduct.findOneAndUpdate(
      { _id: `${m.venue_id}:${m.product_id}` },
      { $set: m },
      { upsert: true, new: true },
    ).lean<VenueProductDoc>(),
  ofVenue: (organization_id: string, venue_id: number) =>
    VenueProduct.find({ organization_id, venue_id }).sort({ product_id: 1 }).lean<VenueProductDoc[]>(),
  removeOfVenue: async (organization_id: string, venue_id: number) =>
    void (await VenueProduct.deleteMany({ organization_id, venue_id })),
  /** The venues mapped to the product: the {product_id} index (product ids are unique across organizations). */
  ofProduct: (organization_id: string, product_id: number) =>
    VenueProduct.find({ product_id, organization_id }, { venue_id: 1, price: 1, status: 1 }).lean<
      Array<Pick<VenueProductDoc, 'venue_id' | 'price' | 'status'>>
    >(),
};

// --- unknown items (what the catalogue lacks) ---

const unknownId = (organization_id: string, kind: string, key: string) => `${organization_id}|${kind}|${key}`;

export const unknownItems = {
  /** One more sighting of a known entry: whether there was one (one update by `_id`). */
  bump: async (organization_id: string, kind: string, key: string, at: Date) =>
    (
      await UnknownItem.updateOne(
        { _id: unknownId(organization_id, kind, key) },
        { $inc: { count: 1 }, $set: { last_seen: at } },
      )
    ).matchedCount > 0,
  /** A first sighting; a concurrent first one of the same key makes this an increment (upsert). */
  add: (organization_id: string, kind: string, key: string, at: Date) =>
    UnknownItem.updateOne(
      { _id: unknownId(organization_id, kind, key) },
      {
        $inc: { count: 1 },
        $set: { last_seen: at },
        $setOnInsert: { organization_id, kind, key, first_seen: at },
      },
      { upsert: true },
    ),
  countOf: (organization_id: string) => UnknownItem.countDocuments({ organization_id }),
  /** Drops the n least seen entries (then the longest unseen) of the organization. */
  evict: async (organization_id: string, n: number) => {
    const least = await UnknownItem.find({ organization_id }, { _id: 1 })
      .sort({ count: 1, last_seen: 1 })
      .limit(n)
      .lean<{ _id: string }[]>();
    if (least.length) await UnknownItem.deleteMany({ _id: { $in: least.map((d) => d._id) } });
  },
  remove: async (organization_id: string, kind: string, key: string) =>
    void (await UnknownItem.deleteOne({ _id: unknownId(organization_id, kind, key) })),
  /** Most seen first, then by key. */
  page: async (organization_id: string, kind: string | undefined, page: Page) => {
    const filter = { organization_id, ...(kind ? { kind } : {}) };
    const [docs, total] = await Promise.all([
      UnknownItem.find(filter)
        .sort({ count: -1, key: 1 })
        .skip((page.page - 1) * page.limit)
        .limit(page.limit)
        .lean<UnknownItemDoc[]>(),
      UnknownItem.countDocuments(filter),
    ]);
    return { docs, total };
  },
};

// --- places answers (the places engine's cache) ---

const placeText = jsonText<Place | null>(null);

export const placesCache: PlacesCacheApi & { forget(venue_id: number): Promise<void> } = {
  async get(venue_id) {
    const doc = await PlacesCache.findById(venue_id).lean<{
      source: CachedPlace['source'];
      data: string;
      fetched_at: Date;
    }>();
    return doc ? { source: doc.source, place: placeText.decode(doc.data), fetched_at: doc.fetched_at } : null;
  },
  async put(venue_id, e) {
    await PlacesCache.replaceOne(
      { _id: venue_id },
      { _id: venue_id, source: e.source, data: placeText.encode(e.place), fetched_at: e.fetched_at },
      { upsert: true },
    );
  },
  /** A venue's address or name changed: its places answer no longer applies. */
  async forget(venue_id) {
    await PlacesCache.deleteOne({ _id: venue_id });
  },
};
