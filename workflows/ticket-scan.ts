import {
  allHandlersFinished,
  CancellationScope,
  condition,
  defineQuery,
  defineUpdate,
  log,
  patched,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';

import type { StoredUpload } from '../activities/images/index.ts';
import type { ReadReceipt, ScanProduct, ScanStatus, VenueMatch } from '../activities/scanning/index.ts';
import type * as activities from '../activities/workflow-activities.ts';
import { isClientFailure, refusal } from './failures.ts';
import { INTERACTIVE } from './retry.ts';

// Local activities: the caller waits over HTTP for the first answer (see workflows/images.ts).
const { readReceipt, analyseScan, mirrorScan, discardUpload, recordScanStarted, dropScanPlaceholder } =
  proxyLocalActivities<typeof activities>({ startToCloseTimeout: '2 minutes', retry: INTERACTIVE });
// The credit is the scan's whole point and is idempotent (one ledger operation per scan): a busy
// ledger gets more attempts (about two and a half minutes) before the scan fails.
const { creditScan } = proxyLocalActivities<typeof activities>({
  startToCloseTimeout: '30 seconds',
  retry: { ...INTERACTIVE, maximumAttempts: 20 },
});

export interface ScanInput {
  scan_id: string;
  source: 'ticket_scan' | 'receipt';
  upload: StoredUpload;
  organization_id: string;
  user_id: string;
  idp_id: string;
  brand_id: string | null;
  venue_id: string | null;
  threshold: number;
  deadline_hours: number;
  /** where the edge serves the stored images: `<public url>/api/ticket-scan/loyalty/ticket-scan/<id>` */
  image_base_url: string;
}

export interface Validation {
  product_id: string;
  is_valid: boolean;
  notes?: string;
}

export interface ValidateInput {
  validations: Validation[];
  validated_by: string;
}

export type ScanView = ReturnType<typeof viewOf>;

export const scanQuery = defineQuery<ScanView>('scan');
/** Answers once processing is over (pending validation or finished); fails like the scan failed. */
export const processedUpdate = defineUpdate<ScanView>('processed');
export const validateUpdate = defineUpdate<ScanView, [ValidateInput]>('validate');

interface State {
  status: ScanStatus;
  read?: ReadReceipt;
  venue_match: VenueMatch | null;
  products: ScanProduct[];
  unmatched_lines: string[];
  flags: string[];
  duplicate_of: string | null;
  /** absent in runs analysed before the cap existed */
  max_points_per_scan?: number;
  rejection_reason: string | null;
  points_processed: boolean;
  points_processed_at: string | null;
  created_at: string;
  updated_at: string;
  expires_at: string | null;
  timings: { image_ms: number; ocr_ms: number; matching_ms: number } | null;
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

/** The points of the approved products, and what the scan credits under the organization's cap. */
function earned(s: State): { approved: number; credited: number } {
  const approved = s.products
    .filter((p) => p.validation_status === 'approved' || p.validation_status === 'auto_approved')
    .reduce((a, p) => a + p.points, 0);
  return {
    approved,
    credited: s.max_points_per_scan === undefined ? approved : Math.min(approved, s.max_points_per_scan),
  };
}

function viewOf(input: ScanInput, s: State) {
  const pending = s.products.some((p) => p.validation_status === 'pending');
  const needed = s.products.some((p) => p.needs_validation);
  const points = earned(s);
  const confidence = s.products.length ? s.products.reduce((a, p) => a + p.confidence, 0) / s.products.length : 0;
  const url = `${input.image_base_url}/${input.scan_id}`;
  return {
    id: input.scan_id,
    source: input.source,
    organization_id: input.organization_id,
    user_id: input.user_id,
    idp_id: input.idp_id,
    brand_id: input.brand_id,
    venue_id: input.venue_id,
    status: s.status,
    original_image_url: s.read ? `${url}/image` : null,
    thumbnail_url: s.read ? `${url}/thumbnail` : null,
    media_public_id: input.upload.media_id,
    storage: s.read ? { original_path: s.read.original_path, thumbnail_path: s.read.thumbnail_path } : null,
    venue_match: s.venue_match,
    products: s.products,
    confidence_score: round3(s.venue_match ? 0.8 * confidence + 0.2 * s.venue_match.confidence : confidence),
    total_points: s.status === 'rejected' ? 0 : points.credited,
    max_points_per_scan: s.max_points_per_scan ?? null,
    points_capped: s.status !== 'rejected' && points.credited < points.approved,
    points_processed: s.points_processed,
    points_processed_at: s.points_processed_at,
    validation_required: needed,
    validation_status: pending ? 'pending' : needed ? 'completed' : 'not_required',
    flags: s.flags,
    duplicate_of: s.duplicate_of,
    rejection_reason: s.rejection_reason,
    receipt: s.read
      ? {
          merchant: s.read.receipt.merchant,
          date: s.read.receipt.date,
          total: s.read.receipt.total,
          items_total: s.read.receipt.items_total,
          lines_read: s.read.receipt.items.length,
        }
      : null,
    unmatched_lines: s.unmatched_lines,
    ocr: s.read ? { engine: s.read.ocr.engine, confidence: s.read.ocr.confidence } : null,
    timings: s.timings,
    workflow_id: workflowInfo().workflowId,
    created_at: s.created_at,
    updated_at: s.updated_at,
    expires_at: s.expires_at,
  };
}

function refuse(message: string): never {
  throw refusal('malformed', message, 'validations');
}

/**
 * `ticket-scan:<scan id>`: records the scan (`processing`, so it is listed from its start), reads
 * the receipt (image, OCR), matches venue and products, then, if any product is under the
 * confidence threshold, waits (durably, up to deadline_hours) for the `validate` Update; credits
 * the approved products' points exactly once; mirrors every state to MongoDB. Duplicates and
 * scans without recognized products are rejected without points. A run that fails drops the
 * record it made before it fails (a failed scan is not listed).
 */
export async function ticketScanWorkflow(input: ScanInput): Promise<ScanView> {
  const now = () => new Date().toISOString();
  const s: State = {
    status: 'processing',
    venue_match: null,
    products: [],
    unmatched_lines: [],
    flags: [],
    duplicate_of: null,
    rejection_reason: null,
    points_processed: false,
    points_processed_at: null,
    created_at: now(),
    updated_at: now(),
    expires_at: null,
    timings: null,
  };
  let failure: unknown;
  const view = () => viewOf(input, s);
  // Runs recorded before this change had their record written and dropped by the edge.
  const recordsItself = patched('scan-records-itself');
  let recorded = false;
  /**
   * A scan that fails is not listed: the run drops its record (a mirrored state stays), even when
   * cancelled. A failed drop never replaces the run's own failure (a client's 400 stays a 400, the
   * upload is still discarded); the list drops such a record later (activities/scanning/list.ts).
   */
  const forget = async () => {
    if (!recorded) return;
    recorded = false;
    try {
      await CancellationScope.nonCancellable(() => dropScanPlaceholder(input.organization_id, input.scan_id));
    } catch (err) {
      log.warn('could not drop the record of a failed scan', { scan_id: input.scan_id, error: String(err) });
    }
  };
  setHandler(scanQuery, view);
  setHandler(processedUpdate, async () => {
    await condition(() => s.status !== 'processing' || failure !== undefined);
    if (failure !== undefined) throw failure;
    return view();
  });
  setHandler(
    validateUpdate,
    async ({ validations, validated_by }) => {
      const at = now();
      for (const v of validations) {
        const p = s.products.find((x) => x.id === v.product_id)!;
        p.validation_status = v.is_valid ? 'approved' : 'rejected';
        p.validated_by = validated_by;
        p.validated_at = at;
        p.notes = v.notes ?? null;
      }
      s.updated_at = at;
      // The answer shows the outcome: when nothing is pending any more, wait for the credit.
      await condition(
        () => s.status !== 'pending_validation' || s.products.some((p) => p.validation_status === 'pending'),
      );
      return view();
    },
    {
      validator: ({ validations }) => {
        if (s.status !== 'pending_validation')
          refuse(`Scan ${input.scan_id} is ${s.status}; there is nothing to validate`);
        if (!validations.length) refuse('validations: at least one product is required');
        const seen = new Set<string>();
        for (const v of validations) {
          const p = s.products.find((x) => x.id === v.product_id);
          if (!p) refuse(`Product ${v.product_id} is not part of scan ${input.scan_id}`);
          if (p.validation_status !== 'pending')
            refuse(`Product ${v.product_id} is not pending validation (${p.validation_status})`);
          if (seen.has(v.product_id)) refuse(`Product ${v.product_id} appears twice in validations`);
          seen.add(v.product_id);
        }
      },
    },
  );

  try {
    if (recordsItself) {
      recorded = true;
      await recordScanStarted(view());
    }
    const read = await readReceipt(input.upload);
    s.read = read;
    const analysis = await analyseScan({
      scan_id: input.scan_id,
      organization_id: input.organization_id,
      user_id: input.user_id,
      venue_id: input.venue_id === null ? null : Number(input.venue_id),
      image_sha256: read.image_sha256,
      receipt: read.receipt,
      threshold: input.threshold,
    });
    Object.assign(s, {
      venue_match: analysis.venue_match,
      products: analysis.products,
      unmatched_lines: analysis.unmatched_lines,
      flags: analysis.flags,
      duplicate_of: analysis.duplicate_of,
      max_points_per_scan: analysis.max_points_per_scan,
    });
    s.timings = { image_ms: read.image_ms, ocr_ms: read.ocr.ms, matching_ms: analysis.matching_ms };
  } catch (err) {
    await forget(); // before `processed` answers: the client then never lists the failed scan
    failure = err;
    if (isClientFailure(err)) await discardUpload(input.upload.original_path);
    await condition(allHandlersFinished);
    throw err;
  }

  const reject = async (reason: string) => {
    s.status = 'rejected';
    s.rejection_reason = reason;
    for (const p of s.products) {
      if (p.validation_status === 'pending') p.validation_status = 'rejected';
    }
    s.updated_at = now();
    await mirrorScan(view());
  };

  try {
    if (s.duplicate_of) {
      await reject(`Duplicate of scan ${s.duplicate_of}: this receipt was already submitted`);
    } else if (!s.products.length) {
      await reject('No catalogue products were recognized on the receipt');
    } else {
      if (s.products.some((p) => p.validation_status === 'pending')) {
        s.status = 'pending_validation';
        s.expires_at = new Date(Date.now() + input.deadline_hours * 3_600_000).toISOString();
        s.updated_at = now();
        await mirrorScan(view());
        const decided = await condition(
          () => !s.products.some((p) => p.validation_status === 'pending'),
          input.deadline_hours * 3_600_000,
        );
        if (!decided) {
          await reject(`Validation deadline passed (${input.deadline_hours} h) with products still pending`);
        }
      }
      if (s.status !== 'rejected') {
        const points = earned(s).credited;
        if (points > 0) {
          const credited = await creditScan({
            organization_id: input.organization_id,
            user_id: input.user_id,
            scan_id: input.scan_id,
            points,
            source: input.source,
          });
          s.points_processed = true;
          s.points_processed_at = credited.processed_at;
          s.status = 'completed';
          s.updated_at = now();
          await mirrorScan(view());
        } else {
          await reject('Every product was rejected in validation');
        }
      }
    }
  } catch (err) {
    // e.g. the credit failing past its retries while still `processing`: the record goes too
    await forget();
    throw err;
  }
  await condition(allHandlersFinished);
  return view();
}
