/**
 * Venues and nearby search, answered by the database on every server: a venue by id from the
 * {organization_id, venue_id} index, nearby search from {organization_id, lat_band, longitude}
 * (boxes of latitude bands and a longitude range, widened until they hold the venues asked for),
 * with the exact great-circle distance deciding in JS. Nothing is kept per process.
 */
import { type PlacesAnswer, placesFor } from '../adapters/places.ts';
import { invalid } from '../core/errors.ts';
import { boundingBox, distanceM } from './geo.ts';
import { allocateIds } from './ids.ts';
import { missing, nameFilter, type Page } from './queries.ts';
import { placesCache, type VenueDoc, venues } from './store.ts';
import { venuesChanged, venuesInBox } from './venue-cells.ts';
import { noteViewChanges, type VenueView, venueView } from './views.ts';

export interface VenueInput {
  name: string;
  address?: string;
  latitude: number;
  longitude: number;
}

/** What nearby answers report as `engine`. */
const NEARBY_ENGINE = 'latitude-bands';

/** Candidates for a receipt without a venue, and for search: the organization's first venues. */
const ORGANIZATION_VENUES_MAX = 5000;

export async function createVenue(organization_id: string, input: VenueInput): Promise<VenueView> {
  const [id] = await allocateIds('venue');
  const doc = await venues.insert({ _id: id, organization_id, address: '', ...input });
  await venuesChanged(organization_id);
  return venueView(doc);
}

/** Many venues at once (seeding, the bench). */
export async function importVenues(organization_id: string, input: VenueInput[]): Promise<number[]> {
  const ids = await allocateIds('venue', input.length);
  await venues.insertMany(input.map((v, i) => ({ _id: ids[i], organization_id, address: '', ...v })));
  await venuesChanged(organization_id);
  return ids;
}

async function venueDoc(organization_id: string, venue_id: number): Promise<VenueDoc> {
  const doc = await venues.get(organization_id, venue_id);
  if (!doc) throw missing();
  return doc;
}

export async function getVenue(organization_id: string, venue_id: number): Promise<VenueView> {
  return venueView(await venueDoc(organization_id, venue_id));
}

export async function updateVenue(organization_id: string, venue_id: number, input: VenueInput): Promise<VenueView> {
  const before = await venueDoc(organization_id, venue_id);
  const doc = await venues.set(organization_id, venue_id, { address: '', ...input });
  if (!doc) throw missing();
  noteViewChanges(venueView(before), venueView(doc));
  await venuesChanged(organization_id);
  await placesCache.forget(venue_id);
  return venueView(doc);
}

export async function deleteVenue(organization_id: string, venue_id: number): Promise<void> {
  await venueDoc(organization_id, venue_id);
  await venues.remove(organization_id, venue_id);
  await venuesChanged(organization_id);
}

export const listVenues = (organization_id: string, filter: { q?: string }, page: Page) =>
  venues.page({ organization_id, ...nameFilter(filter.q) }, page, venueView);

export interface NearbyResult {
  venues: Array<VenueView & { distance_m: number }>;
  engine: typeof NEARBY_ENGINE;
}

/**
 * The first box is this radius (or the one asked, if smaller); each next one is wider by the
 * factor that should hold `limit` venues at the density seen so far, kept to ×1.25..×2 (clustered
 * venues make that density a poor guess). Each box's venues come from the process's cells
 * (venue-cells.ts): a search over cells read before sends no query, one over new ground one.
 */
const FIRST_RADIUS_M = 500;

/**
 * Venues of the organization within radius, nearest first (then by id); with `only`, just the
 * venues it keeps (those selling a product), the box widening until `limit` of those are in it.
 */
export async function nearbyVenues(
  organization_id: string,
  latitude: number,
  longitude: number,
  radiusM: number,
  limit: number,
  only?: (venue_id: number) => boolean,
): Promise<NearbyResult> {
  if (!Number.isFinite(latitude) || latitude < -90 || latitude > 90)
    throw invalid('latitude', 'must be a number between -90 and 90');
  const found = new Map<number, { v: VenueDoc; d: number }>();
  const add = (docs: VenueDoc[]) => {
    for (const v of docs)
      if (!found.has(v._id) && (!only || only(v._id)))
        found.set(v._id, { v, d: distanceM(latitude, longitude, v.latitude, v.longitude) });
  };
  let r = Math.min(radiusM, FIRST_RADIUS_M);
  for (;;) {
    const box = boundingBox(latitude, longitude, r);
    // Venues an earlier version wrote, until they are given their bands (none, without a read,
    // after). Read before the cells: a venue given its band meanwhile is then in a cell read.
    add((await Promise.all(box.lonRanges.map(([w, e]) => venues.olderInBox(organization_id, box, w, e)))).flat());
    add(await venuesInBox(organization_id, box));
    // Every venue within r is in the box: when `limit` of them are, no unread venue is nearer.
    let within = 0;
    for (const { d } of found.values()) if (d <= r) within += 1;
    if (within >= limit || r >= radiusM) break;
    r = Math.min(radiusM, r * Math.min(2, Math.max(1.25, Math.sqrt((limit * 1.3) / Math.max(within, 1)))));
  }
  const nearest = [...found.values()].filter(({ d }) => d <= radiusM).sort((a, b) => a.d - b.d || a.v._id - b.v._id);
  return {
    venues: nearest.slice(0, limit).map(({ v, d }) => ({ ...keptView(v), distance_m: Math.round(d * 10) / 10 })),
    engine: NEARBY_ENGINE,
  };
}

/** A kept venue's view, made once per venue a cell holds (its dates' text was a tenth of a search's CPU). */
const views = new WeakMap<VenueDoc, VenueView>();
function keptView(v: VenueDoc): VenueView {
  let view = views.get(v);
  if (!view) views.set(v, (view = venueView(v)));
  return view;
}

/** Candidate venues for matching a receipt without a venue, and for search. */
export async function organizationVenues(organization_id: string): Promise<VenueView[]> {
  return (await venues.ofOrganization(organization_id, ORGANIZATION_VENUES_MAX)).map(venueView);
}

/** The venue's third-party places data (PLACES_PROVIDER), kept in the retail store. */
export const venuePlaces = (v: VenueView): Promise<PlacesAnswer> => placesFor(v, placesCache);
