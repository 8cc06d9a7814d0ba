/**
 * The scan list: the mirror of every scan of an organization (store.ts).
 * The edge records a placeholder before it starts a scan's workflow, so a scan is listed from
 * the start (`processing`) and a client that lost the answer finds its scan id; a scan that fails
 * is not recorded, like before (its placeholder is dropped).
 */
import type { ScanReversalDoc } from './models';
import { dropPlaceholder, findScans, insertScanPlaceholder, insertScanReversal, scanById, scanReversal, scanReversals, type ScanFilter } from './store';

export interface StartedScan {
  id: string;
  source: 'ticket_scan' | 'receipt';
  organization_id: string;
  user_id: string;
  idp_id: string;
  brand_id: string | null;
  venue_id: string | null;
  media_public_id: string;
  workflow_id: string;
}

/** What the scan workflow answers before it has read anything (workflows/ticket-scan.ts). */
function processingView(s: StartedScan, at: string) {
  return {
    ...s,
    status: 'processing',
    original_image_url: null,
    thumbnail_url: null,
    storage: null,
    venue_match: null,
    products: [],
    confidence_score: 0,
    total_points: 0,
    max_points_per_scan: null,
    points_capped: false,
    points_processed: false,
    points_processed_at: null,
    validation_required: false,
    validation_status: 'not_required',
    flags: [],
    duplicate_of: null,
    rejection_reason: null,
    receipt: null,
    unmatched_lines: [],
    ocr: null,
    timings: null,
    created_at: at,
    updated_at: at,
    expires_at: null,
  };
}

/** The placeholder: never over what the workflow has mirrored (a retry of the same scan). */
export async function recordScanStarted(scan: StartedScan): Promise<void> {
  await insertScanPlaceholder(scan, processingView(scan, new Date().toISOString()));
}

/** Drops the placeholder of a scan whose workflow failed; a mirrored scan stays. */
export async function dropScanPlaceholder(organization_id: string, scan_id: string): Promise<void> {
  await dropPlaceholder(organization_id, scan_id);
}

/** Which scans (absent user: every user of the organization; `from` inclusive, `to` exclusive) and which page. */
export interface ScanListQuery extends ScanFilter {
  page: number;
  limit: number;
}

export interface ListedScan {
  id: string;
  status: string;
  created_at: Date;
  view: Record<string, unknown>;
}

/** Newest first; `total` counts every scan the filters match. */
export async function listScans(q: ScanListQuery): Promise<{ scans: ListedScan[]; total: number }> {
  const { page, limit, ...filter } = q;
  const { docs, total } = await findScans(filter, page, limit);
  const reversals = await scanReversals(docs.map((d) => d._id));
  return { scans: docs.map((d) => ({ id: d._id, status: d.status, created_at: d.created_at, view: withReversal(d.view, reversals.get(d._id)) })), total };
}

/** The scan as the API answers it: the mirrored view, with its reversal when its points were taken back. */
const withReversal = (view: Record<string, unknown>, r: ScanReversalDoc | null | undefined) => (r ? { ...view, reversal: r.reversal } : view);

/** The mirrored scan of the organization (with its reversal), or null. */
export async function scanMirrorView(organization_id: string, scan_id: string): Promise<Record<string, unknown> | null> {
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
