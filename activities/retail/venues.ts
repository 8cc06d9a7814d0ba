/**
 * Venues and nearby search. The engine is chosen once per process: MongoDB's 2dsphere index
 * when the server answers geospatial queries, else the in-process venue index (venue-index.ts),
 * which exists for the embedded server alone (no geospatial queries, and a scan of every venue
 * for any filter but `_id`, see store.ts): on MongoDB it is never loaded. Single venues are read by `_id` on
 * both servers.
 */
import { invalid } from '../errors';
import { placesFor, type PlacesAnswer } from '../engines/places';
import { allocateIds } from './ids';
import { placesCache, venues, type GeoPoint, type VenueDoc } from './store';
import { applyLocally, recordVenueChange, RELOAD_ALL, venueGrid } from './venue-index';
import { distanceM } from './geo';
import { venueView, type VenueView } from './views';
import { missing, nameFilter, type Page } from './queries';

export interface VenueInput {
  name: string;
  address?: string;
  latitude: number;
  longitude: number;
}

export type GeoEngine = 'mongodb-2dsphere' | 'memory-grid';

const point = (lat: number, lon: number): GeoPoint => ({ type: 'Point', coordinates: [lon, lat] });

let engine: Promise<GeoEngine> | undefined;

/** Probes the server once. */
export function geoEngine(): Promise<GeoEngine> {
  engine ??= venues.geoQueries().then((yes) => (yes ? 'mongodb-2dsphere' : 'memory-grid'));
  return engine;
}

export async function createVenue(organization_id: string, input: VenueInput): Promise<VenueView> {
  const [id] = await allocateIds('venue');
  const view = venueView(await venues.insert({ _id: id, organization_id, address: '', ...input, location: point(input.latitude, input.longitude) }));
  await recordVenueChange(id);
  await applyLocally(view);
  return view;
}

/** Many venues at once (seeding, the bench): one change line makes every venue index reload. */
export async function importVenues(organization_id: string, input: VenueInput[]): Promise<number[]> {
  const ids = await allocateIds('venue', input.length);
  await venues.insertMany(input.map((v, i) => ({ _id: ids[i], organization_id, address: '', ...v, location: point(v.latitude, v.longitude) })));
  await recordVenueChange(RELOAD_ALL);
  return ids;
}

async function venueDoc(organization_id: string, venue_id: number): Promise<VenueDoc> {
  const doc = await venues.get(organization_id, venue_id);
  if (!doc) throw missing();
  return doc;
}

/** By `_id` from the database on both servers (never from the venue index, which may lag a second). */
export async function getVenue(organization_id: string, venue_id: number): Promise<VenueView> {
  return venueView(await venueDoc(organization_id, venue_id));
}

export async function updateVenue(organization_id: string, venue_id: number, input: VenueInput): Promise<VenueView> {
  await venueDoc(organization_id, venue_id);
  const doc = await venues.set(organization_id, venue_id, { address: '', ...input, location: point(input.latitude, input.longitude) });
  if (!doc) throw missing();
  const view = venueView(doc);
  await placesCache.forget(venue_id);
  await recordVenueChange(venue_id);
  await applyLocally(view);
  return view;
}

export async function deleteVenue(organization_id: string, venue_id: number): Promise<void> {
  await venueDoc(organization_id, venue_id);
  await venues.remove(organization_id, venue_id);
  await recordVenueChange(venue_id);
  await applyLocally({ id: venue_id, removed: true });
}

export const listVenues = (organization_id: string, filter: { q?: string }, page: Page) => venues.page({ organization_id, ...nameFilter(filter.q) }, page, venueView);

export interface NearbyResult {
  venues: Array<VenueView & { distance_m: number }>;
  engine: GeoEngine;
}

export async function nearbyVenues(organization_id: string, latitude: number, longitude: number, radiusM: number, limit: number): Promise<NearbyResult> {
  if (!Number.isFinite(latitude) || latitude < -90 || latitude > 90) throw invalid('latitude', 'must be a number between -90 and 90');
  const e = await geoEngine();
  if (e === 'memory-grid') return { venues: (await venueGrid()).nearby(organization_id, latitude, longitude, radiusM, limit), engine: e };
  const docs = await venues.near(organization_id, point(latitude, longitude), radiusM, limit);
  return {
    venues: docs.map((d) => ({ ...venueView(d), distance_m: Math.round(distanceM(latitude, longitude, d.latitude, d.longitude) * 10) / 10 })),
    engine: e,
  };
}

/** Candidate venues for matching a receipt's header, and for search. */
export async function organizationVenues(organization_id: string): Promise<VenueView[]> {
  if ((await geoEngine()) === 'memory-grid') return (await venueGrid()).ofOrganization(organization_id);
  return (await venues.ofOrganization(organization_id, 5000)).map(venueView);
}

/** The venue's third-party places data (PLACES_PROVIDER), kept in the retail store. */
export const venuePlaces = (v: VenueView): Promise<PlacesAnswer> => placesFor(v, placesCache);

/**
 * Loads the venue index in the background at process start on servers that need it, so the first
 * nearby search or scan does not wait for it (~10 s for 100,000 venues on the embedded server).
 */
export function warmVenues(): void {
  geoEngine()
    .then((e) => (e === 'memory-grid' ? venueGrid() : undefined))
    .catch(() => undefined);
}
