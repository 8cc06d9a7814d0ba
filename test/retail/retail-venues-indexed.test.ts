/**
 * Nearby search and a venue read by id are answered from the venues' indexes on both servers:
 * every query they send is recorded and the server is asked how it answers it (`explain`). Venues
 * written by an older version (without the indexed fields) are still found, and found the same way.
 */
import { describe, expect, it } from 'vitest';

import { versionsOf } from '../../activities/core/db/index.ts';
import { Venue } from '../../activities/retail/models.ts';
import { createVenue, deleteVenue, getVenue, nearbyVenues, updateVenue } from '../../activities/retail/venues.ts';
import { queriesOf, scans } from '../helpers/queries.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();

const run = Date.now();
const sol = { lat: 40.4169, lon: -3.7035 };

describe('venues answered from indexes', () => {
  it('answers nearby venues and a venue by id from indexes, nearest first within the radius', async () => {
    const org = `org_venues_idx_${run}`;
    // a ring of venues every ~150 m north, and one in another organization at the same place
    const made: Array<{ id: number; name: string }> = [];
    for (let i = 0; i < 30; i += 1)
      made.push(await createVenue(org, { name: `V${i}`, latitude: sol.lat + i * 0.00135, longitude: sol.lon }));
    await createVenue(`${org}_other`, { name: 'Other org', latitude: sol.lat, longitude: sol.lon });
    let out: Awaited<ReturnType<typeof nearbyVenues>> | undefined;
    const qs = await queriesOf(async () => {
      out = await nearbyVenues(org, sol.lat, sol.lon, 2000, 10);
      await getVenue(org, made[3].id);
    });
    expect(qs.length).toBeGreaterThan(0);
    expect(await scans(qs)).toEqual([]);
    expect(out!.venues.map((v) => v.name)).toEqual(made.slice(0, 10).map((v) => v.name));
    // 2 km holds V0..V13 (V13 at ~1.95 km)
    const wide = await nearbyVenues(org, sol.lat, sol.lon, 2000, 200);
    expect(wide.venues.map((v) => v.name)).toEqual(made.slice(0, 14).map((v) => v.name));
    expect(wide.venues.at(-1)!.distance_m).toBeLessThanOrEqual(2000);

    // moved and deleted venues are seen at once
    await updateVenue(org, made[0].id, { name: 'V0 moved', latitude: sol.lat + 0.00136 * 5.5, longitude: sol.lon });
    await deleteVenue(org, made[1].id);
    const after = await nearbyVenues(org, sol.lat, sol.lon, 1000, 4);
    expect(after.venues.map((v) => v.name)).toEqual(['V2', 'V3', 'V4', 'V5']);
    expect((await nearbyVenues(org, sol.lat + 0.00136 * 5.5, sol.lon, 10, 5)).venues.map((v) => v.name)).toEqual([
      'V0 moved',
    ]);
  });

  it("answers a search over ground searched before from the cells kept, and sees another process's venue within a second", async () => {
    const org = `org_venues_cells_${run}`;
    for (let i = 0; i < 20; i += 1)
      await createVenue(org, { name: `C${i}`, latitude: sol.lat + i * 0.0009, longitude: sol.lon + (i % 3) * 0.001 });
    const first = await nearbyVenues(org, sol.lat, sol.lon, 3000, 10);
    const again = await queriesOf(async () => {
      expect((await nearbyVenues(org, sol.lat, sol.lon, 3000, 10)).venues).toEqual(first.venues);
    });
    expect(again.filter((q) => q.collection === 'retail_venues')).toEqual([]);
    // Another process writes a venue at the very spot and moves the organization's version.
    await Venue.collection.insertOne({
      _id: 800_000_000 + (run % 1_000_000),
      organization_id: org,
      venue_id: 800_000_000 + (run % 1_000_000),
      name: 'Elsewhere',
      address: '',
      latitude: sol.lat,
      longitude: sol.lon,
      lat_band: Math.floor(sol.lat / 0.002),
      created_at: new Date(),
      updated_at: new Date(),
    } as never);
    await versionsOf('retail.venues', () => undefined).move(org); // as the other process's write does
    let seen = false;
    for (let i = 0; i < 30 && !seen; i += 1) {
      seen = (await nearbyVenues(org, sol.lat, sol.lon, 3000, 10)).venues.some((v) => v.name === 'Elsewhere');
      if (!seen) await new Promise((r) => setTimeout(r, 100));
    }
    expect(seen).toBe(true);
  });

  it('finds venues written before their indexed fields existed, then from the index', async () => {
    const org = `org_venues_old_${run}`;
    const base = 900_000_000 + (run % 1_000_000) * 10;
    const now = new Date();
    // as the previous version wrote them: a GeoJSON location, no band, no venue_id
    await Venue.collection.insertMany(
      Array.from({ length: 5 }, (_, i) => ({
        _id: base + i,
        organization_id: org,
        name: `Old ${i}`,
        address: '',
        latitude: sol.lat + i * 0.001,
        longitude: sol.lon,
        location: { type: 'Point', coordinates: [sol.lon, sol.lat + i * 0.001] },
        created_at: now,
        updated_at: now,
      })) as never[],
    );
    expect((await getVenue(org, base + 2)).name).toBe('Old 2');
    const near = await nearbyVenues(org, sol.lat, sol.lon, 1000, 10);
    expect(near.venues.map((v) => v.id)).toEqual([0, 1, 2, 3, 4].map((i) => base + i));
    // the first use gave them their fields in the background: then they are read through the indexes
    for (let i = 0; i < 100 && (await Venue.exists({ organization_id: org, lat_band: null })); i += 1)
      await new Promise((r) => setTimeout(r, 100));
    const migrated = await Venue.find({ organization_id: org }).lean();
    expect(migrated.map((d) => [d.venue_id, d.lat_band])).toEqual(
      migrated.map((d) => [d._id, Math.floor(d.latitude / 0.002)]),
    );
    const qs = await queriesOf(async () => {
      expect((await nearbyVenues(org, sol.lat, sol.lon, 1000, 10)).venues.map((v) => v.id)).toEqual(
        [0, 1, 2, 3, 4].map((i) => base + i),
      );
      expect((await getVenue(org, base + 4)).name).toBe('Old 4');
    });
    expect(await scans(qs)).toEqual([]);
    // no read the old way any more (a check for older venues, if any, asks for `lat_band: null` from the index)
    expect(
      qs.filter((q) => q.collection === 'retail_venues' && !('venue_id' in q.filter) && !('lat_band' in q.filter)),
    ).toEqual([]);
    await expect(getVenue(org, base + 99)).rejects.toMatchObject({ status: 404 });
  });
});
