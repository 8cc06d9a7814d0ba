/**
 * Venues and nearby search. The engine is chosen once per process: MongoDB's 2dsphere index
 * when the server answers geospatial queries, else the in-process grid (venue-index.ts).
 */
import { invalid } from '../errors';
import { allocateIds } from './ids';
import { Venue, VenueProduct, type GeoPoint, type VenueDoc } from './models';
import { applyLocally, recordVenueChange, RELOAD_ALL, venueGrid } from './venue-index';
import { distanceM } from './geo';
import { venueView, type VenueView } from './views';
import { missing, nameFilter, paged, type Page } from './queries';
import { forgetPlaces } from '../engines/places';

export interface VenueInput {
  name: string;
  address?: string;
  latitude: number;
  longitude: number;
}

export type GeoEngine = 'mongodb-2dsphere' | 'memory-grid';

const point = (lat: number, lon: number): GeoPoint => ({ type: 'Point', coordinates: [lon, lat] });

let engine: Promise<GeoEngine> | undefined;

/** Probes the server once: a 2dsphere index and a $nearSphere query must both work. */
export function geoEngine(): Promise<GeoEngine> {
  engine ??= (async (): Promise<GeoEngine> => {
    try {
      await Venue.collection.createIndex({ location: '2dsphere' });
      await Venue.find({ location: { $nearSphere: { $geometry: point(0, 0), $maxDistance: 1 } } }).limit(1).lean();
      return 'mongodb-2dsphere';
    } catch {
      return 'memory-grid';
    }
  })();
  return engine;
}

export async function createVenue(organization_id: string, input: VenueInput): Promise<VenueView> {
  const [id] = await allocateIds('venue');
  const doc = await Venue.create({ _id: id, organization_id, address: '', ...input, location: point(input.latitude, input.longitude) });
  const view = venueView(doc.toObject());
  await recordVenueChange(id);
  await applyLocally(view);
  return view;
}

/** Many venues at once (seeding, the bench): one change line makes every grid reload. */
export async function importVenues(organization_id: string, venues: VenueInput[]): Promise<number[]> {
  const ids = await allocateIds('venue', venues.length);
  for (let i = 0; i < venues.length; i += 1000) {
    const batch = venues.slice(i, i + 1000).map((v, j) => ({ _id: ids[i + j], organization_id, address: '', ...v, location: point(v.latitude, v.longitude), created_at: new Date(), updated_at: new Date() }));
    await Venue.collection.insertMany(batch as never[], { ordered: true });
  }
  await recordVenueChange(RELOAD_ALL);
  return ids;
}

async function venueDoc(organization_id: string, venue_id: number): Promise<VenueDoc> {
  const doc = await Venue.findOne({ _id: venue_id, organization_id }, { location: 0 }).lean<VenueDoc>();
  if (!doc) throw missing();
  return doc;
}

/** Read from the database, never from a possibly stale grid. */
export async function requireVenue(organization_id: string, venue_id: number): Promise<VenueView> {
  return venueView(await venueDoc(organization_id, venue_id));
}

/**
 * For reads: the grid when that is the engine (FerretDB scans the collection even for an id),
 * else the database. A venue the grid does not know yet (written by another process less than
 * a second ago) is looked up in the database.
 */
export async function getVenue(organization_id: string, venue_id: number): Promise<VenueView> {
  if ((await geoEngine()) === 'memory-grid') {
    const v = (await venueGrid()).byId.get(venue_id);
    if (v) {
      if (v.organization_id !== organization_id) throw missing();
      return v;
    }
  }
  return requireVenue(organization_id, venue_id);
}

export async function updateVenue(organization_id: string, venue_id: number, input: VenueInput): Promise<VenueView> {
  await venueDoc(organization_id, venue_id);
  const doc = await Venue.findOneAndUpdate({ _id: venue_id, organization_id }, { $set: { address: '', ...input, location: point(input.latitude, input.longitude) } }, { new: true }).lean<VenueDoc>();
  if (!doc) throw missing();
  const view = venueView(doc);
  await forgetPlaces(venue_id);
  await recordVenueChange(venue_id);
  await applyLocally(view);
  return view;
}

export async function deleteVenue(organization_id: string, venue_id: number): Promise<void> {
  await venueDoc(organization_id, venue_id);
  await VenueProduct.deleteMany({ organization_id, venue_id });
  await Venue.deleteOne({ _id: venue_id, organization_id });
  await forgetPlaces(venue_id);
  await recordVenueChange(venue_id);
  await applyLocally({ id: venue_id, removed: true });
}

export const listVenues = (organization_id: string, filter: { q?: string }, page: Page) =>
  paged<VenueDoc, VenueView>(Venue, { organization_id, ...nameFilter(filter.q) }, page, venueView, { location: 0 });

export interface NearbyResult {
  venues: Array<VenueView & { distance_m: number }>;
  engine: GeoEngine;
}

export async function nearbyVenues(organization_id: string, latitude: number, longitude: number, radiusM: number, limit: number): Promise<NearbyResult> {
  if (!Number.isFinite(latitude) || latitude < -90 || latitude > 90) throw invalid('latitude', 'must be a number between -90 and 90');
  const e = await geoEngine();
  if (e === 'memory-grid') return { venues: (await venueGrid()).nearby(organization_id, latitude, longitude, radiusM, limit), engine: e };
  const docs = await Venue.find({ organization_id, location: { $nearSphere: { $geometry: point(latitude, longitude), $maxDistance: radiusM } } }, { location: 0 })
    .limit(limit)
    .lean<VenueDoc[]>();
  return {
    venues: docs.map((d) => ({ ...venueView(d), distance_m: Math.round(distanceM(latitude, longitude, d.latitude, d.longitude) * 10) / 10 })),
    engine: e,
  };
}

/** Candidate venues for matching a receipt's header. */
export async function organizationVenues(organization_id: string): Promise<VenueView[]> {
  if ((await geoEngine()) === 'memory-grid') return (await venueGrid()).ofOrganization(organization_id);
  const docs = await Venue.find({ organization_id }, { location: 0 }).limit(5000).lean<VenueDoc[]>();
  return docs.map(venueView);
}

/**
 * Loads the grid in the background at process start, so the first nearby search or scan does
 * not wait for it (~10 s for 100,000 venues on FerretDB).
 */
export function warmVenues(): void {
  geoEngine()
    .then((e) => (e === 'memory-grid' ? venueGrid() : undefined))
    .catch(() => undefined);
}
