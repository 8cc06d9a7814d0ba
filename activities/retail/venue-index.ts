/**
 * An in-process grid of every venue, for nearby search and receipt matching on servers without
 * geospatial queries. Kept for the embedded server only, by decision: it has no geospatial index
 * and reads every venue for any filter but `_id` (store.ts; ~2 s at 100,000 venues), and receipt
 * matching compares a receipt with every venue of its organization, which no `_id` layout
 * answers in a few reads. On MongoDB the 2dsphere index answers nearby search, the
 * (organization_id, …) index lists an organization's venues, and this grid is never loaded
 * (venues.ts). The grid is the bounding-box prefilter; the exact great-circle distance decides. Each process
 * loads it once and follows `retail_venue_changes`, written with every venue write, so a change
 * made by another process is seen within POLL_MS (its own at once).
 */
import { randomBytes } from 'node:crypto';
import { boundingBox, distanceM } from './geo';
import { venueChanges, venues } from './store';
import { venueView, type VenueView } from './views';

const CELL_DEG = 0.05;
const LON_CELLS = Math.round(360 / CELL_DEG);
export const POLL_MS = 1000;
/** changes are read again for this long after they were written (clock skew, slow writers) */
const OVERLAP_MS = 30_000;
const PRUNE_AFTER_MS = 60 * 60_000;
/** a `venue_id` of 0 in a change asks every process to reload (bulk imports) */
export const RELOAD_ALL = 0;

const cellKey = (i: number, j: number) => i * LON_CELLS + j;
const cellOf = (lat: number, lon: number) => cellKey(Math.floor((lat + 90) / CELL_DEG), Math.floor((lon + 180) / CELL_DEG) % LON_CELLS);

export class VenueGrid {
  private cells = new Map<number, VenueView[]>();
  readonly byId = new Map<number, VenueView>();

  get size() {
    return this.byId.size;
  }

  upsert(v: VenueView): void {
    this.remove(v.id);
    this.byId.set(v.id, v);
    const key = cellOf(v.latitude, v.longitude);
    const cell = this.cells.get(key);
    if (cell) cell.push(v);
    else this.cells.set(key, [v]);
  }

  remove(id: number): void {
    const old = this.byId.get(id);
    if (!old) return;
    this.byId.delete(id);
    const key = cellOf(old.latitude, old.longitude);
    const cell = this.cells.get(key)?.filter((v) => v.id !== id);
    if (cell?.length) this.cells.set(key, cell);
    else this.cells.delete(key);
  }

  /** Venues of the organization within radius, nearest first. */
  nearby(organization_id: string, lat: number, lon: number, radiusM: number, limit: number): Array<VenueView & { distance_m: number }> {
    const box = boundingBox(lat, lon, radiusM);
    const found: Array<{ v: VenueView; d: number }> = [];
    const latFrom = Math.floor((box.minLat + 90) / CELL_DEG);
    const latTo = Math.floor((box.maxLat + 90) / CELL_DEG);
    for (const [west, east] of box.lonRanges) {
      const lonFrom = Math.floor((west + 180) / CELL_DEG);
      const lonTo = Math.min(Math.floor((east + 180) / CELL_DEG), LON_CELLS - 1);
      for (let i = latFrom; i <= latTo; i += 1) {
        for (let j = lonFrom; j <= lonTo; j += 1) {
          const cell = this.cells.get(cellKey(i, j));
          if (!cell) continue;
          for (const v of cell) {
            if (v.organization_id !== organization_id || v.latitude < box.minLat || v.latitude > box.maxLat) continue;
            const d = distanceM(lat, lon, v.latitude, v.longitude);
            if (d <= radiusM) found.push({ v, d });
          }
        }
      }
    }
    found.sort((a, b) => a.d - b.d || a.v.id - b.v.id);
    return found.slice(0, limit).map(({ v, d }) => ({ ...v, distance_m: Math.round(d * 10) / 10 }));
  }

  ofOrganization(organization_id: string): VenueView[] {
    return [...this.byId.values()].filter((v) => v.organization_id === organization_id);
  }
}

const changeKey = (ms: number) => `${String(ms).padStart(15, '0')}-`;

/** Records a venue write for the other processes' grids. */
export async function recordVenueChange(venue_id: number): Promise<void> {
  const now = Date.now();
  await venueChanges.record(`${changeKey(now)}${randomBytes(6).toString('hex')}`, venue_id, new Date(now));
}

let grid: Promise<VenueGrid> | undefined;
let poller: NodeJS.Timeout | undefined;
const seen = new Map<string, number>();
let lastPoll = 0;
let polling = false;

async function loadAll(): Promise<VenueGrid> {
  const g = new VenueGrid();
  for (const d of await venues.all()) g.upsert(venueView(d));
  return g;
}

async function poll(g: VenueGrid): Promise<VenueGrid> {
  const started = Date.now();
  const changes = await venueChanges.since(changeKey(lastPoll - OVERLAP_MS));
  const fresh = changes.filter((c) => !seen.has(c._id));
  for (const c of fresh) seen.set(c._id, started);
  for (const [id, at] of seen) if (at < started - 2 * OVERLAP_MS) seen.delete(id);
  lastPoll = started;
  if (fresh.some((c) => c.venue_id === RELOAD_ALL)) return loadAll();
  const ids = [...new Set(fresh.map((c) => c.venue_id))];
  if (ids.length) {
    const docs = await venues.byIds(ids);
    const present = new Set(docs.map((d) => d._id));
    for (const d of docs) g.upsert(venueView(d));
    for (const id of ids) if (!present.has(id)) g.remove(id);
  }
  if (Math.random() < 0.02) await venueChanges.pruneBefore(changeKey(started - PRUNE_AFTER_MS));
  return g;
}

/** The process's venue grid, loaded on first use and kept fresh by polling. */
export function venueGrid(): Promise<VenueGrid> {
  if (!grid) {
    grid = (async () => {
      // Changes written before this load are in it: the first poll must not reload for them.
      const started = Date.now();
      const before = await venueChanges.since(changeKey(started - OVERLAP_MS));
      for (const c of before) seen.set(c._id, started);
      lastPoll = started;
      return loadAll();
    })();
    grid.catch(() => (grid = undefined));
    poller = setInterval(() => {
      const current = grid;
      if (!current || polling) return;
      polling = true;
      current
        .then((g) => poll(g))
        .then((g) => {
          if (grid === current) grid = Promise.resolve(g);
        })
        .catch(() => undefined) // the next poll reads the same window again
        .finally(() => (polling = false));
    }, POLL_MS);
    poller.unref();
  }
  return grid;
}

/** Applies this process's own write at once (the poll would see it within POLL_MS). */
export async function applyLocally(v: VenueView | { id: number; removed: true }): Promise<void> {
  if (!grid) return;
  const g = await grid.catch(() => undefined);
  if (!g) return;
  if ('removed' in v) g.remove(v.id);
  else g.upsert(v);
}

export function stopVenueGrid(): void {
  if (poller) clearInterval(poller);
  poller = undefined;
  grid = undefined;
}
