/**
 * What scanning publishes to the outgoing event log (activities/events).
 * The scans' events: each state a scan enters that a receiver acts on (pending_validation,
 * completed, rejected) is told as one event, keyed by the scan id (an event's identity is its
 * organization, type and key, and a scan enters each of these states once). The scan workflow
 * mirrors every state it enters (mirrorScan); the mirror records the state's event right after it
 * is written, before the step answers, so a step run again (a retried local activity) records
 * nothing new. The data leaves out what an admin typed (validation notes) and the receipt's text:
 * products are the catalogue's (id and name), and a rejection is told by its code.
 */
import { type EventType, recordEvent } from '../events/index.ts';
import type { VenueMatch } from './matching.ts';
import type { ScanProduct } from './products.ts';

/** The scan as the workflow mirrors it (its view, workflows/ticket-scan.ts): what the events read of it. */
export interface MirroredScan {
  id: string;
  organization_id: string;
  user_id: string;
  status: string;
  source?: string;
  venue_id?: string | null;
  venue_match?: VenueMatch | null;
  products?: ScanProduct[];
  total_points?: number;
  max_points_per_scan?: number | null;
  points_capped?: boolean;
  points_processed?: boolean;
  points_processed_at?: string | null;
  validation_status?: string;
  flags?: string[];
  duplicate_of?: string | null;
  rejection_reason?: string | null;
  receipt?: { date: string | null; total: number | null } | null;
  updated_at?: string;
  expires_at?: string | null;
}

const TYPES: Record<string, EventType> = {
  pending_validation: 'scan.pending_validation',
  completed: 'scan.completed',
  rejected: 'scan.rejected',
};

/** Why a scan was rejected, as a code: the workflow's reasons (workflows/ticket-scan.ts) are sentences. */
function rejectionCode(reason: string | null | undefined): string | null {
  if (!reason) return null;
  if (reason.startsWith('Duplicate of scan')) return 'duplicate';
  if (reason.startsWith('No catalogue products')) return 'no_products_recognized';
  if (reason.startsWith('Validation deadline passed')) return 'validation_expired';
  if (reason.startsWith('Every product was rejected')) return 'all_products_rejected';
  return 'other';
}

/** The event's data: what a receiver needs to act on the scan. */
function scanEventData(v: MirroredScan): Record<string, unknown> {
  return {
    scan_id: v.id,
    user_id: v.user_id,
    source: v.source ?? null,
    status: v.status,
    venue_id: v.venue_id ?? null,
    matched_venue_id: v.venue_match?.venue_id ?? null,
    total_points: v.total_points ?? 0,
    max_points_per_scan: v.max_points_per_scan ?? null,
    points_capped: v.points_capped ?? false,
    points_processed: v.points_processed ?? false,
    points_processed_at: v.points_processed_at ?? null,
    // the ledger operation of the scan's credit (its points.credited event carries the same)
    operation_id: v.points_processed ? `scan:${v.id}` : null,
    validation_status: v.validation_status ?? null,
    validation_expires_at: v.status === 'pending_validation' ? (v.expires_at ?? null) : null,
    products: (v.products ?? []).map((p) => ({
      id: p.id,
      name: p.name,
      quantity: p.quantity,
      points: p.points,
      validation_status: p.validation_status,
    })),
    flags: v.flags ?? [],
    duplicate_of: v.duplicate_of ?? null,
    rejection_reason: rejectionCode(v.rejection_reason),
    receipt: v.receipt ? { date: v.receipt.date ?? null, total: v.receipt.total ?? null } : null,
  };
}

/** Records the event of the state the mirrored scan is in (none for processing or failed). */
export async function recordScanEvent(v: MirroredScan): Promise<void> {
  const type = TYPES[v.status];
  if (!type) return;
  await recordEvent({
    organization_id: v.organization_id,
    type,
    key: v.id,
    ...(v.updated_at && { at: new Date(v.updated_at) }),
    data: scanEventData(v),
  });
}
