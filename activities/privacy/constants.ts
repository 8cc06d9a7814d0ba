/** The privacy component's vocabulary, shared with the edge (docs/privacy.md). */
export const EXPORT_STATUSES = ['processing', 'ready', 'failed', 'expired'] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];

/**
 * Exports of one organization gathered at the same time (429 beyond): each one reads everything
 * its user has, some of it by scanning the organization's collections, so an admin exporting every
 * user at once (or many users at once) would load the database for everyone.
 */
export const EXPORTS_GATHERED_PER_ORGANIZATION = 5;

/**
 * Erasures of one organization that do their heavy part (every component's data, twice) at the
 * same time. The others wait their turn in their run: their user is already gone for every reader
 * and their keys revoked (identity's first end does not wait), only the deletion is queued.
 */
export const ERASURES_RUNNING_PER_ORGANIZATION = 2;

export const ERASURE_STATUSES = ['processing', 'completed'] as const;
export type ErasureStatus = (typeof ERASURE_STATUSES)[number];

/** Who asked: kept on the request's record (the audit trail has the full actor too). */
export interface Requester {
  key_id: string;
  user_id: string;
  level: number;
}
