/**
 * scanning's part of a user's export and erasure (docs/privacy-components/scanning.md): the
 * user's scans (their mirrors, with the reversal marks of their credits) and what hangs off them
 * (the receipt fingerprints they hold, the receipt image and its thumbnail). The images are
 * exported once, by the images part, which owns the upload store: each scan names its files there.
 */
import { createHash } from 'node:crypto';
import type { ErasureScope, UserData, UserScope } from '../core/user-data.ts';
import { getObject } from '../engines/storage.ts';
import { removeUploads, uploadExportName } from '../images/index.ts';
import type { TicketScanDoc } from './models.ts';
import { deleteScanReversals, deleteScans, dropFingerprints, scanReversals, userScans } from './store.ts';

interface Storage {
  original_path?: string | null;
  thumbnail_path?: string | null;
}

const storageOf = (d: TicketScanDoc): Storage => (d.view.storage as Storage | null | undefined) ?? {};
const keysOf = (d: TicketScanDoc) => [storageOf(d).original_path, storageOf(d).thumbnail_path].filter((k): k is string => typeof k === 'string' && k.length > 0);

/** Another person's id (the admin who validated or reversed) is not the user's data: it reads `staff`. */
const someone = (scope: UserScope, id: unknown) => (id === null || id === undefined ? null : id === scope.user_id ? id : 'staff');

function exported(scope: UserScope, d: TicketScanDoc, reversal: Record<string, unknown> | undefined) {
  const view = d.view as Record<string, unknown> & { products?: Array<Record<string, unknown>> };
  const s = storageOf(d);
  return {
    ...view,
    products: (view.products ?? []).map((p) => ({ ...p, validated_by: someone(scope, p.validated_by) })),
    ...(reversal ? { reversal: { ...reversal, reversed_by: someone(scope, reversal.reversed_by) } } : {}),
    files: {
      original: s.original_path ? `files/images/${uploadExportName(scope, s.original_path)}` : null,
      thumbnail: s.thumbnail_path ? `files/images/${uploadExportName(scope, s.thumbnail_path)}` : null,
    },
    recorded_at: new Date(d.created_at).toISOString(),
    mirrored_at: new Date(d.updated_at).toISOString(),
  };
}

/**
 * The fingerprints a scan may hold (scans.ts `analyseScan`): its image's SHA-256 (read from the
 * stored original while it is there) and its venue + date + total. Each is dropped only if this
 * scan still holds it.
 */
async function fingerprintsOf(scope: UserScope, d: TicketScanDoc): Promise<Array<{ key: string; scan_id: string }>> {
  const out: Array<{ key: string; scan_id: string }> = [];
  const original = storageOf(d).original_path;
  const body = original ? await getObject(original) : null;
  if (body) out.push({ key: `${scope.organization_id}|image:${createHash('sha256').update(body).digest('hex')}`, scan_id: d._id });
  const venue = (d.view.venue_match as { venue_id?: string | null } | null | undefined)?.venue_id;
  const receipt = d.view.receipt as { date?: string | null; total?: number | null } | null | undefined;
  if (venue && receipt?.date && typeof receipt.total === 'number') {
    out.push({ key: `${scope.organization_id}|receipt:${Number(venue)}|${receipt.date}|${receipt.total.toFixed(2)}`, scan_id: d._id });
  }
  return out;
}

export const scanningUserData: UserData = {
  async export(scope) {
    const docs = await userScans(scope.organization_id, scope.user_id);
    const reversals = await scanReversals(docs.map((d) => d._id));
    return { data: { scans: docs.map((d) => exported(scope, d, reversals.get(d._id)?.reversal)) }, files: [] };
  },
  /**
   * Per scan, what hangs off it first and its record last (the record is what finds the rest): a
   * crash anywhere leaves the record, and the next call does the rest again (each step is a no-op
   * once done). A scan whose run is still open (processing, waiting for validation) mirrors itself
   * again when its run moves on: the privacy run erases again at its end, which drops it then.
   */
  async erase(scope: ErasureScope) {
    const docs = await userScans(scope.organization_id, scope.user_id);
    let fingerprints_released = 0;
    for (const d of docs) fingerprints_released += await dropFingerprints(await fingerprintsOf(scope, d));
    const objects_deleted = await removeUploads(docs.flatMap(keysOf));
    const ids = docs.map((d) => d._id);
    const reversals_deleted = await deleteScanReversals(ids);
    const scans_deleted = await deleteScans(scope.organization_id, ids);
    return { scans_deleted, reversals_deleted, fingerprints_released, objects_deleted };
  },
};
