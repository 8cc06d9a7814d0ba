import mongoose, { Schema } from 'mongoose';

/**
 * The MongoDB mirror of a scan: written by the scan workflow, first as it starts (status
 * `processing`, dropped again if the run fails), then as the workflow answers it after each state
 * change; read when the workflow has finished, and to list scans. The workflow's state is the
 * source of truth while it runs.
 */
const ticketScanSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    user_id: { type: String, required: true },
    status: { type: String, required: true },
    /** the scan object exactly as the API answers it */
    view: { type: Schema.Types.Mixed, required: true },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: 'updated_at' }, versionKey: false, minimize: false },
);
// Lists: a user's scans, or an organization's, newest first.
ticketScanSchema.index({ organization_id: 1, user_id: 1, created_at: -1 });
ticketScanSchema.index({ organization_id: 1, created_at: -1 });

/**
 * What makes two receipts the same within an organization (whichever user scans them): the
 * image's SHA-256, and the venue + date + total read from it. The primary key makes the first
 * scan win; later ones are duplicates.
 */
const scanFingerprintSchema = new Schema(
  {
    /** `<organization_id>|image:<sha256>` or `<organization_id>|receipt:<venue>|<date>|<total>` */
    _id: { type: String, required: true },
    scan_id: { type: String, required: true },
    /**
     * Set when the scan's owner was erased: the tombstone (no person in it), and the scan that
     * earned the receipt. The receipt was used: the fingerprint counts for good, whatever became
     * of the scan's record.
     */
    erased: { type: String },
    earned_by: { type: String },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: false }, versionKey: false },
);
// An erasure finds the fingerprints of the user's scans by scan id (the image's hash needs the
// stored original, which may be gone by then).
scanFingerprintSchema.index({ scan_id: 1 });

export interface TicketScanDoc {
  _id: string;
  organization_id: string;
  user_id: string;
  status: string;
  view: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}
export interface ScanFingerprintDoc {
  _id: string;
  scan_id: string;
  erased?: string;
  earned_by?: string;
  created_at: Date;
}

/**
 * A scan whose points an admin reversed (`_id` = the scan id), shown in the scan as `reversal`.
 * A document of its own, written once (store.ts says why).
 */
const scanReversalSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    reversal: { type: Schema.Types.Mixed, required: true },
  },
  { versionKey: false, minimize: false },
);

export interface ScanReversalDoc {
  _id: string;
  organization_id: string;
  reversal: Record<string, unknown>;
}

export const ScanReversal = mongoose.model<ScanReversalDoc>(
  'ScanReversal',
  scanReversalSchema,
  'ticket_scan_reversals',
);
export const TicketScan = mongoose.model<TicketScanDoc>('TicketScan', ticketScanSchema, 'ticket_scans');
export const ScanFingerprint = mongoose.model<ScanFingerprintDoc>(
  'ScanFingerprint',
  scanFingerprintSchema,
  'ticket_scan_fingerprints',
);
