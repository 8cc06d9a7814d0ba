/**
 * Third-party places data for a venue: Google Places (New) text search or OpenStreetMap
 * Nominatim, chosen by PLACES_PROVIDER; PLACES_BASE_URL points either at another host (a proxy,
 * or the tests' local stand-in). Answers are normalized to one shape and kept per venue for
 * PLACES_CACHE_HOURS in the caller's cache (the retail store), misses included.
 */
import { placesSettings } from './settings.ts';

export interface Place {
  provider_id: string;
  name: string | null;
  address: string | null;
  latitude: number | null;
  longitude: number | null;
  rating: number | null;
  rating_count: number | null;
  phone: string | null;
  website: string | null;
  maps_url: string | null;
  opening_hours: string[] | null;
  category: string | null;
}

export interface PlacesAnswer {
  places: Place | null;
  places_source: 'none' | 'google' | 'osm';
  places_cached_at?: string;
  places_error?: string;
}

/** A provider's answer as the caller keeps it (`place` null: the provider knows no such place). */
export interface CachedPlace {
  source: 'google' | 'osm';
  place: Place | null;
  fetched_at: Date;
}

/** Where answers are kept between calls, per venue id; the caller owns the storage. */
export interface PlacesCache {
  get(venue_id: number): Promise<CachedPlace | null>;
  put(venue_id: number, entry: CachedPlace): Promise<void>;
}

export interface VenueQuery {
  id: number;
  name: string;
  address: string;
  latitude: number;
  longitude: number;
}

const TIMEOUT_MS = 5000;
const str = (v: unknown) => (typeof v === 'string' && v ? v : null);
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** What Google's searchText answers (the fields asked for; each may be missing). */
interface GooglePlace {
  id?: string;
  displayName?: { text?: string };
  formattedAddress?: string;
  location?: { latitude?: number; longitude?: number };
  rating?: number;
  userRatingCount?: number;
  nationalPhoneNumber?: string;
  websiteUri?: string;
  googleMapsUri?: string;
  regularOpeningHours?: { weekdayDescriptions?: unknown[] };
  primaryType?: string;
}

/** What Nominatim's search answers (each field may be missing). */
interface OsmPlace {
  osm_type?: string;
  osm_id?: string | number;
  name?: string;
  display_name?: string;
  lat?: string;
  lon?: string;
  type?: string;
  extratags?: Record<string, string | undefined>;
}

async function fetchJson(url: string, init: RequestInit): Promise<unknown> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
  if (!res.ok) throw new Error(`places provider answered HTTP ${res.status}`);
  return res.json();
}

async function google(v: VenueQuery): Promise<Place | null> {
  const cfg = placesSettings();
  if (!cfg.PLACES_API_KEY) throw new Error('PLACES_API_KEY is not set');
  const base = (cfg.PLACES_BASE_URL ?? 'https://places.googleapis.com').replace(/\/$/, '');
  const body = (await fetchJson(`${base}/v1/places:searchText`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-goog-api-key': cfg.PLACES_API_KEY,
      'x-goog-fieldmask':
        'places.id,places.displayName,places.formattedAddress,places.location,places.rating,places.userRatingCount,places.nationalPhoneNumber,places.websiteUri,places.googleMapsUri,places.regularOpeningHours.weekdayDescriptions,places.primaryType',
    },
    body: JSON.stringify({
      textQuery: [v.name, v.address].filter(Boolean).join(', '),
      maxResultCount: 1,
      locationBias: { circle: { center: { latitude: v.latitude, longitude: v.longitude }, radius: 500 } },
    }),
  })) as { places?: GooglePlace[] } | null;
  const p = body?.places?.[0];
  if (!p) return null;
  return {
    provider_id: String(p.id),
    name: str(p.displayName?.text),
    address: str(p.formattedAddress),
    latitude: num(p.location?.latitude),
    longitude: num(p.location?.longitude),
    rating: num(p.rating),
    rating_count: num(p.userRatingCount),
    phone: str(p.nationalPhoneNumber),
    website: str(p.websiteUri),
    maps_url: str(p.googleMapsUri),
    opening_hours: Array.isArray(p.regularOpeningHours?.weekdayDescriptions)
      ? p.regularOpeningHours.weekdayDescriptions.map(String)
      : null,
    category: str(p.primaryType),
  };
}

async function osm(v: VenueQuery): Promise<Place | null> {
  const base = (placesSettings().PLACES_BASE_URL ?? 'https://nominatim.openstreetmap.org').replace(/\/$/, '');
  const d = 0.01;
  const params = new URLSearchParams({
    q: [v.name, v.address].filter(Boolean).join(', '),
    format: 'jsonv2',
    limit: '1',
    extratags: '1',
    viewbox: `${v.longitude - d},${v.latitude + d},${v.longitude + d},${v.latitude - d}`,
  });
  // Nominatim's usage policy asks for an identifying User-Agent.
  const body = (await fetchJson(`${base}/search?${params}`, {
    headers: { 'user-agent': 'loyalty-assistant-platform/0.1 (venue details)', accept: 'application/json' },
  })) as OsmPlace[] | null;
  const p = Array.isArray(body) ? body[0] : undefined;
  if (!p) return null;
  const tags = p.extratags ?? {};
  return {
    provider_id: `${p.osm_type}/${p.osm_id}`,
    name: str(p.name),
    address: str(p.display_name),
    latitude: p.lat ? Number(p.lat) : null,
    longitude: p.lon ? Number(p.lon) : null,
    rating: null,
    rating_count: null,
    phone: str(tags.phone ?? tags['contact:phone']),
    website: str(tags.website ?? tags['contact:website']),
    maps_url: p.osm_type && p.osm_id ? `https://www.openstreetmap.org/${p.osm_type}/${p.osm_id}` : null,
    opening_hours: tags.opening_hours ? [tags.opening_hours] : null,
    category: str(p.type),
  };
}

/** Places data for the venue; a provider failure is reported, never fatal to the caller. */
export async function placesFor(v: VenueQuery, cache: PlacesCache): Promise<PlacesAnswer> {
  const cfg = placesSettings();
  const source = cfg.PLACES_PROVIDER;
  if (source === 'none') return { places: null, places_source: 'none' };
  const cached = await cache.get(v.id);
  if (
    cached &&
    cached.source === source &&
    Date.now() - cached.fetched_at.getTime() < cfg.PLACES_CACHE_HOURS * 3_600_000
  ) {
    return { places: cached.place, places_source: source, places_cached_at: cached.fetched_at.toISOString() };
  }
  try {
    const place = source === 'google' ? await google(v) : await osm(v);
    const fetched_at = new Date();
    await cache.put(v.id, { source, place, fetched_at });
    return { places: place, places_source: source, places_cached_at: fetched_at.toISOString() };
  } catch (err) {
    if (cached)
      return {
        places: cached.place,
        places_source: source,
        places_cached_at: cached.fetched_at.toISOString(),
        places_error: (err as Error).message,
      };
    return { places: null, places_source: source, places_error: (err as Error).message };
  }
}
