/**
 * The venues of the cells nearby searches read, kept per process: a cell is a latitude band (geo.ts,
 * about 220 m) by a longitude strip of CELL_LON_DEG, read from the store with the other missing
 * cells of a search in one indexed query ({organization_id, lat_band, longitude}) and then answered
 * from memory. A venue write moves the organization's venue version (core/db/versions.ts); this
 * process drops the organization's cells at once, every other process when it next reads the
 * version (at most once a second, one `_id` read). So a search sees a venue written by another
 * process at most about a second late. docs/storage.md, "Retail".
 */
import { Cache, versionsOf } from '../core/db/index.ts';
import { bandsOf, type Box } from './geo.ts';
import { type VenueDoc, venues } from './store.ts';

const CELL_LON_DEG = 0.01;
/** Cells kept per process (least recently used out): at two venues a cell, about 100 MB. */
const MAX_CELLS = 200_000;
/** A box wider than this many strips (near a pole) is read directly, not by cells. */
const MAX_STRIPS = 2_000;
/** Read margin (degrees): a venue on a strip's edge is in that strip's read whatever the rounding. */
const EDGE = 1e-9;

const lonCell = (lon: number) => Math.floor(lon / CELL_LON_DEG);
const cellKey = (organization_id: string, band: number, strip: number) => `${organization_id}|${band}|${strip}`;

/** Read again after CELL_KEPT_MS whatever the version says: a bound on staleness if a move is ever missed. */
const CELL_KEPT_MS = 10 * 60_000;
const cells = new Cache<string, VenueDoc[]>({ max: MAX_CELLS, ttlMs: CELL_KEPT_MS });

/** Moved whenever an organization's cells are dropped: a read begun before keeps nothing. */
const generations = new Map<string, number>();
const generationOf = (organization_id: string) => generations.get(organization_id) ?? 0;

function drop(organization_id: string): void {
  generations.set(organization_id, generationOf(organization_id) + 1);
  const prefix = `${organization_id}|`;
  cells.deleteWhere((_v, k) => k.startsWith(prefix));
}

const versions = versionsOf('retail.venues', drop);

/** A venue of the organization was written here: its cells go now, and everyone else's within a second. */
export async function venuesChanged(organization_id: string): Promise<void> {
  drop(organization_id);
  await versions.move(organization_id);
  drop(organization_id); // a read that began between the two
}

/**
 * The venues of every cell the box touches (and so of every place in it), reading the cells not
 * kept yet in one query per longitude range of the box.
 */
export async function venuesInBox(organization_id: string, box: Box): Promise<VenueDoc[]> {
  await versions.heed(organization_id);
  const bands = bandsOf(box.minLat, box.maxLat);
  const out: VenueDoc[] = [];
  for (const [west, east] of box.lonRanges) {
    // While older venues are given their fields, cells would miss them: read directly.
    if (lonCell(east) - lonCell(west) > MAX_STRIPS || !venues.fieldsSettled(organization_id)) {
      out.push(...(await venues.inBox(organization_id, bands, west, east)));
      continue;
    }
    const strips: number[] = [];
    for (let c = lonCell(west); c <= lonCell(east); c += 1) strips.push(c);
    const missing = new Set<number>();
    const strip = new Set<number>();
    for (const b of bands)
      for (const c of strips)
        if (!cells.get(cellKey(organization_id, b, c))) {
          missing.add(b);
          strip.add(c);
        }
    if (missing.size) {
      // One read: the missing bands over the missing strips (cells kept already in that span are read again).
      const generation = generationOf(organization_id);
      const lo = Math.min(...strip);
      const hi = Math.max(...strip);
      const read = await venues.inBox(
        organization_id,
        [...missing],
        lo * CELL_LON_DEG - EDGE,
        (hi + 1) * CELL_LON_DEG + EDGE,
      );
      if (generation !== generationOf(organization_id)) {
        // A venue write dropped the cells meanwhile (the kept ones too): this box is read whole.
        out.push(...(await venues.inBox(organization_id, bands, west, east)));
        continue;
      }
      const found = new Map<string, VenueDoc[]>();
      for (const b of missing) for (let c = lo; c <= hi; c += 1) found.set(cellKey(organization_id, b, c), []);
      for (const v of read) found.get(cellKey(organization_id, v.lat_band, lonCell(v.longitude)))?.push(v);
      for (const [k, list] of found) cells.set(k, list);
    }
    for (const b of bands)
      for (const c of strips) {
        const kept = cells.get(cellKey(organization_id, b, c));
        if (kept) out.push(...kept);
      }
  }
  return out;
}
