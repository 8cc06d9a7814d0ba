/**
 * What each component holds of one person, for an export and for an erasure. A component that
 * holds personal data offers one `UserData` on its surface; the composition root registers it
 * with the privacy component (workers/root.ts), whose durable runs call every registered part.
 * docs/privacy.md says what each component exports, erases and keeps.
 */
export interface UserScope {
  organization_id: string;
  user_id: string;
  idp_id: string;
}

/** One of the user's stored objects (MinIO), copied byte for byte into the export. */
export interface ExportFile {
  /** the file's path inside the zip, relative to `files/<component>/` (no leading slash, no `..`) */
  name: string;
  /** the object's key in the platform's bucket */
  key: string;
}

export interface ExportPart {
  /** a name (usually a collection: `entries`, `redemptions`) → the user's records, JSON-safe, no secrets */
  data: Record<string, unknown[]>;
  files: ExportFile[];
}

export interface ErasureScope extends UserScope {
  /** the opaque id (`del_…`) that replaces the person in the records the organization keeps */
  tombstone: string;
}

/** What one erasure step did, by name: `{conversations_deleted: 3, objects_deleted: 4, entries_tombstoned: 12}`. */
export type ErasureReport = Record<string, number>;

/**
 * What a person already used that a once-only rule must still know after their erasure
 * (docs/privacy.md, "What an erasure never reopens"): counts, flags and other users' ids, never
 * the person. Gathered as the erasure begins, kept under the person's marker, read back by the
 * component that wrote it when the same person joins again.
 */
export type OnceFacts = Record<string, unknown>;

export interface UserData {
  /** Everything of the user this component holds (never another user's, never a secret or hash). */
  export(scope: UserScope): Promise<ExportPart>;
  /**
   * Deletes or tombstones everything of the user. Idempotent and resumable: a second call after a
   * crash anywhere in the first finishes the work and changes nothing already done.
   */
  erase(scope: ErasureScope): Promise<ErasureReport>;
  /** The once-only facts this component keeps of the person (gathered before anything is erased); none when omitted. */
  onceOnly?(scope: UserScope): Promise<OnceFacts | null>;
}
