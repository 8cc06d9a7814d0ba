/**
 * The scan list: the mirror of every scan of an organization (store.ts). The scan workflow
 * records its scan (`processing`) as its first step, so a scan is listed from its start and a
 * client that lost the answer finds its scan id; a run that fails drops that record again (a
 * failed scan is not listed, like before), workflows/ticket-scan.ts.
 */
import { handedIn } from '../core/wiring.ts';
import type { ScanReversalDoc } from './models.ts';
import {
  dropPlaceholder,
  findScans,
  insertScanPlaceholder,
  insertScanReversal,
  scanById,
  type ScanFilter,
  scanReversal,
  scanReversals,
} from './store.ts';

/**
 * Activity: records the scan as the workflow answers it before reading anything (`processing`);
 * never over what the workflow has mirrored already (a retried step).
 */
export async function recordScanStarted(view: {
  id: string;
  organization_id: string;
  user_id: string;
  status: string;
}): Promise<void> {
  await insertScanPlaceholder(view, view);
}

/** Activity: drops the record of a scan whose run failed, if it is still `processing`; a mirrored scan stays. */
export async function dropScanPlaceholder(organization_id: string, scan_id: string): Promise<void> {
  await dropPlaceholder(organization_id, scan_id);
}

/** Which scans (absent user: every user of the organization; `from` inclusive, `to` exclusive) and which page. */
export interface ScanListQuery extends ScanFilter {
  page: number;
  limit: number;
}

/**
 * Whether a scan's run is still open (running, or completed): the composition root hands it in
 * (workers/root.ts; workers/runs/starts.ts asks Temporal).
 */
export type ScanRunOpen = (scan_id: string) => Promise<boolean>;
const runOpen = handedIn<ScanRunOpen>("scanning's run check");

export function configureScanning(deps: { runOpen: ScanRunOpen }): void {
  runOpen.set(deps.runOpen);
}

/** How long a scan stays `processing` before the list asks whether its run is gone. */
const STALE_PROCESSING_MS = 60_000;

/**
 * A run drops its own record when it fails or is cancelled. What it cannot drop: records of runs
 * terminated by an operator, and records an earlier version's edge wrote before starting a run it
 * never started or whose failure it did not live to see. A `processing` record older than a
 * minute whose run is gone is such a record: it is dropped, not listed.
 */
async function abandoned(
  docs: Array<{ _id: string; organization_id: string; status: string; created_at: Date }>,
): Promise<Set<string>> {
  const stale = docs.filter(
    (d) => d.status === 'processing' && Date.now() - d.created_at.getTime() > STALE_PROCESSING_MS,
  );
  if (!stale.length) return new Set();
  const check = runOpen.get();
  const gone = (await Promise.all(stale.map(async (d) => ((await check(d._id).catch(() => true)) ? null : d)))).filter(
    (d) => d !== null,
  );
  await Promise.all(gone.map((d) => dropPlaceholder(d.organization_id, d._id)));
  return new Set(gone.map((d) => d._id));
}

/** Newest first; `total` counts every scan the filters match. */
export async function listScans(q: ScanListQuery): Promise<{ scans: Array<Record<string, unknown>>; total: number }> {
  const { page, limit, ...filter } = q;
  const { docs, total } = await findScans(filter, page, limit);
  const gone = await abandoned(docs);
  const listed = docs.filter((d) => !gone.has(d._id));
  const reversals = await scanReversals(listed.map((d) => d._id));
  return { scans: listed.map((d) => withReversal(d.view, reversals.get(d._id))), total: total - gone.size };
}

/** The scan as the API answers it: the mirrored view, with its reversal when its points were taken back. */
const withReversal = (view: Record<string, unknown>, r: ScanReversalDoc | null | undefined) =>
  r ? { ...view, reversal: r.reversal } : view;

/** The mirrored scan of the organization (with its reversal), or null. */
export async function scanMirrorView(
  organization_id: string,
  scan_id: string,
): Promise<Record<string, unknown> | null> {
  const [doc, reversal] = await Promise.all([scanById(scan_id), scanReversal(scan_id)]);
  if (!doc || doc.organization_id !== organization_id) return null;
  return withReversal(doc.view, reversal);
}

/**
 * Marks a scan whose points an admin reversed. The ledger's reversal entry decided it; the mark is
 * written once (a repeated reversal finds it there).
 */
export async function markScanReversed(organization_id: string, scan_id: string, mark: object): Promise<void> {
  await insertScanReversal(organization_id, scan_id, mark);
}
