/**
 * scanning's part of a user's export and erasure (docs/privacy-components/scanning.md): the
 * user's scans (their mirrors, with the reversal marks of their credits) and what hangs off them
 * (the receipt image and its thumbnail; the receipt fingerprints they hold are kept, tombstoned). The images are
 * exported once, by the images part, which owns the upload store: each scan names its files there.
 */
import type { ErasureScope, UserData, UserScope } from '../core/user-data.ts';
import { removeUploads, uploadExportName } from '../images/index.ts';
import type { TicketScanDoc } from './models.ts';
import { deleteScanReversals, deleteScans, scanReversals, settleFingerprintsOf, userScans } from './store.ts';

interface Storage {
  original_path?: string | null;
  thumbnail_path?: string | null;
}

const storageOf = (d: TicketScanDoc): Storage => (d.view.storage as Storage | null | undefined) ?? {};
const keysOf = (d: TicketScanDoc) =>
  [storageOf(d).original_path, storageOf(d).thumbnail_path].filter(
    (k): k is string => typeof k === 'string' && k.length > 0,
  );

/** Another person's id (the admin who validated or reversed) is not the user's data: it reads `staff`. */
const someone = (scope: UserScope, id: unknown) =>
  id === null || id === undefined ? null : id === scope.user_id ? id : 'staff';

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
 * A scan as a holder of fingerprints. One decided (completed, or rejected: a copy, or refused on
 * review) keeps them; one that failed, or that the erasure stopped before it was decided
 * (processing, waiting for validation: it never credited), frees them. A copy names the scan that earned.
 */
function fingerprintHolder(d: TicketScanDoc) {
  const copied = d.view.duplicate_of;
  return {
    scan_id: d._id,
    counted: d.status === 'completed' || d.status === 'rejected',
    earned_by: typeof copied === 'string' && copied ? copied : d._id,
  };
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
    // A receipt the user scanned stays used: its fingerprints are kept under the tombstone, so
    // nobody can scan it again for points (docs/privacy.md, "What an erasure never reopens").
    const fingerprints = await settleFingerprintsOf(docs.map(fingerprintHolder), scope.tombstone);
    const objects_deleted = await removeUploads(docs.flatMap(keysOf));
    const ids = docs.map((d) => d._id);
    const reversals_deleted = await deleteScanReversals(ids);
    const scans_deleted = await deleteScans(scope.organization_id, ids);
    return {
      scans_deleted,
      reversals_deleted,
      fingerprints_kept: fingerprints.kept,
      fingerprints_released: fingerprints.released,
      objects_deleted,
    };
  },
};
