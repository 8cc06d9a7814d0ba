/** Great-circle distances, the bounding box of a search radius and latitude bands (pure). */
const EARTH_RADIUS_M = 6_371_008.8;
const rad = (d: number) => (d * Math.PI) / 180;

/** Haversine distance in meters. */
export function distanceM(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const dLat = rad(lat2 - lat1);
  const dLon = rad(lon2 - lon1);
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(rad(lat1)) * Math.cos(rad(lat2)) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(a)));
}

export interface Box {
  minLat: number;
  maxLat: number;
  /** longitude ranges: two when the box crosses the antimeridian, [-180, 180] near a pole */
  lonRanges: Array<[number, number]>;
}

/** Every point within `radiusM` of (lat, lon) lies inside the box. */
export function boundingBox(lat: number, lon: number, radiusM: number): Box {
  const dLat = (radiusM / EARTH_RADIUS_M) * (180 / Math.PI);
  const minLat = Math.max(-90, lat - dLat);
  const maxLat = Math.min(90, lat + dLat);
  if (minLat === -90 || maxLat === 90) return { minLat, maxLat, lonRanges: [[-180, 180]] };
  // The widest longitude span is at the latitude nearest a pole within the box.
  const dLon = Math.asin(Math.min(1, Math.sin(radiusM / EARTH_RADIUS_M) / Math.cos(rad(lat)))) * (180 / Math.PI);
  if (!Number.isFinite(dLon) || dLon >= 180) return { minLat, maxLat, lonRanges: [[-180, 180]] };
  const west = lon - dLon;
  const east = lon + dLon;
  if (west < -180)
    return {
      minLat,
      maxLat,
      lonRanges: [
        [west + 360, 180],
        [-180, east],
      ],
    };
  if (east > 180)
    return {
      minLat,
      maxLat,
      lonRanges: [
        [west, 180],
        [-180, east - 360],
      ],
    };
  return { minLat, maxLat, lonRanges: [[west, east]] };
}

/**
 * Venues are stored with their latitude band, floor(latitude / LAT_BAND_DEG) (about 220 m), and
 * indexed {organization_id, lat_band, longitude}: a box is then one `$in` of its bands plus a
 * longitude range, which a B-tree answers with one seek per band on MongoDB and on SQLite. Changing
 * the width means rewriting every venue's band.
 */
const LAT_BAND_DEG = 0.002;

export const latBand = (lat: number) => Math.floor(lat / LAT_BAND_DEG);

/** The bands that hold every latitude of [minLat, maxLat]. */
export function bandsOf(minLat: number, maxLat: number): number[] {
  const out: number[] = [];
  for (let b = latBand(minLat); b <= latBand(maxLat); b += 1) out.push(b);
  return out;
}
