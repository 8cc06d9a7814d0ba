/**
 * Scanning's data, and the only file that reads or writes its models: the mirror of each scan
 * (`ticket_scans`: its record from the workflow's first step, then each state the workflow
 * mirrors; lists read it), the fingerprints that make a receipt count once in an organization
 * (`ticket_scan_fingerprints`), and the reversals of scans (`ticket_scan_reversals`, one document
 * per reversed scan). Why they are shaped this way: docs/storage.md, "Scanning".
 */
import { byId, byIds, insertOnce } from '../core/db/index.ts';
import {
  ScanFingerprint,
  type ScanFingerprintDoc,
  ScanReversal,
  type ScanReversalDoc,
  TicketScan,
  type TicketScanDoc,
} from './models.ts';

/** Writes the scan's first record (`processing`) unless the scan is there already (never over what the workflow mirrored). */
export async function insertScanPlaceholder(
  scan: { id: string; organization_id: string; user_id: string },
  view: Record<string, unknown>,
): Promise<void> {
  await TicketScan.updateOne(
    { _id: scan.id },
    { $setOnInsert: { organization_id: scan.organization_id, user_id: scan.user_id, status: 'processing', view } },
    { upsert: true },
  );
}

/** Drops the scan if it is still its first record (`processing`). */
export async function dropPlaceholder(organization_id: string, scan_id: string): Promise<void> {
  await TicketScan.deleteOne({ _id: scan_id, organization_id, status: 'processing' });
}

/** Mirrors the scan as the workflow answers it; keeps created_at (the first record's), which lists sort by. */
export async function writeScanMirror(view: {
  id: string;
  organization_id: string;
  user_id: string;
  status: string;
}): Promise<void> {
  await TicketScan.updateOne(
    { _id: view.id },
    { $set: { organization_id: view.organization_id, user_id: view.user_id, status: view.status, view } },
    { upsert: true },
  );
}

export const scanById = (scan_id: string) => byId<TicketScanDoc>(TicketScan, scan_id);

/** The scan's status and what it duplicates, without the rest of its view. */
export const scanStatus = (scan_id: string) =>
  byId<Pick<TicketScanDoc, 'status' | 'view'>>(TicketScan, scan_id, { status: 1, 'view.duplicate_of': 1 });

export interface ScanFilter {
  organization_id: string;
  user_id?: string;
  status?: string;
  source?: string;
  from?: Date;
  to?: Date;
}

/** A page of the scans the filter matches, newest first, and how many match in all. */
export async function findScans(
  f: ScanFilter,
  page: number,
  limit: number,
): Promise<{ docs: TicketScanDoc[]; total: number }> {
  const filter: Record<string, unknown> = { organization_id: f.organization_id };
  if (f.user_id) filter.user_id = f.user_id;
  if (f.status) filter.status = f.status;
  if (f.source) filter['view.source'] = f.source;
  if (f.from || f.to) filter.created_at = { ...(f.from ? { $gte: f.from } : {}), ...(f.to ? { $lt: f.to } : {}) };
  const [docs, total] = await Promise.all([
    TicketScan.find(filter)
      .sort({ created_at: -1, _id: -1 })
      .skip((page - 1) * limit)
      .limit(limit)
      .lean<TicketScanDoc[]>(),
    TicketScan.countDocuments(filter),
  ]);
  return { docs, total };
}

export const scanReversal = (scan_id: string) => byId<ScanReversalDoc>(ScanReversal, scan_id);
export const scanReversals = (scan_ids: readonly string[]) => byIds<ScanReversalDoc>(ScanReversal, scan_ids);

/** Marks the scan reversed, once (a repeated reversal finds the mark there). */
export async function insertScanReversal(organization_id: string, scan_id: string, reversal: object): Promise<void> {
  await insertOnce(ScanReversal, { _id: scan_id, organization_id, reversal });
}

/** Takes the fingerprint for this scan: false when a scan holds it already. */
export const insertFingerprint = (key: string, scan_id: string) => insertOnce(ScanFingerprint, { _id: key, scan_id });

export const fingerprint = (key: string) => byId<ScanFingerprintDoc>(ScanFingerprint, key);

/** Frees the fingerprint if this scan still holds it. */
export async function dropFingerprint(key: string, scan_id: string): Promise<void> {
  await ScanFingerprint.deleteOne({ _id: key, scan_id });
}

// ---- a user's export and erasure (user-data.ts)

/** Every scan of the user, newest first (the `{organization_id, user_id, created_at}` index). */
export async function userScans(organization_id: string, user_id: string): Promise<TicketScanDoc[]> {
  return TicketScan.find({ organization_id, user_id }).sort({ created_at: -1 }).lean<TicketScanDoc[]>();
}

/** Drops these scans' reversal marks (by `_id`, the scan id); how many were there. */
export async function deleteScanReversals(scan_ids: readonly string[]): Promise<number> {
  if (!scan_ids.length) return 0;
  return (await ScanReversal.deleteMany({ _id: { $in: [...scan_ids] } })).deletedCount ?? 0;
}

/** Drops these scans' mirrors (by `_id`); how many were there. */
export async function deleteScans(organization_id: string, scan_ids: readonly string[]): Promise<number> {
  if (!scan_ids.length) return 0;
  return (await TicketScan.deleteMany({ _id: { $in: [...scan_ids] }, organization_id })).deletedCount ?? 0;
}

/**
 * At an erasure, the fingerprints the scans hold: those of a scan that never counted are freed;
 * the others stay for good, marked with the tombstone and the scan that earned the receipt (a scan
 * that was a copy names the one it copied). How many of each.
 */
export async function settleFingerprintsOf(
  scans: ReadonlyArray<{ scan_id: string; counted: boolean; earned_by: string }>,
  tombstone: string,
): Promise<{ kept: number; released: number }> {
  if (!scans.length) return { kept: 0, released: 0 };
  const uncounted = scans.filter((s) => !s.counted).map((s) => s.scan_id);
  const released = uncounted.length
    ? ((await ScanFingerprint.deleteMany({ scan_id: { $in: uncounted }, erased: { $exists: false } })).deletedCount ??
      0)
    : 0;
  let kept = 0;
  for (const s of scans) {
    if (!s.counted) continue;
    kept +=
      (
        await ScanFingerprint.updateMany(
          { scan_id: s.scan_id, erased: { $exists: false } },
          { $set: { erased: tombstone, earned_by: s.earned_by } },
        )
      ).modifiedCount ?? 0;
  }
  return { kept, released };
}
