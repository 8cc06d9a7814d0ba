/**
 * Ticket scanning and receipts: both start the scan workflow `ticket-scan:<id>` and answer once
 * it has read and matched the receipt; validation is a Temporal Update on the waiting workflow;
 * status comes from the workflow or its MongoDB mirror. A scan goes processing →
 * pending_validation (only when a product is under the confidence threshold) → completed,
 * rejected or failed, and its points are credited once, when no product is pending any more.
 * What a scan records (listed from its start, not listed once failed) is the workflow's own.
 */
import type { H3Event } from 'h3';
import { z } from 'zod';

import { config } from '../../activities/core/config.ts';
import { invalid, notFound, PlatformError } from '../../activities/core/errors.ts';
import { newId } from '../../activities/core/ids.ts';
import type { Principal } from '../../activities/identity/index.ts';
import { readStoredObject } from '../../activities/images/index.ts';
import { getBrand, getVenue } from '../../activities/retail/index.ts';
import { listScans, readScanMirror } from '../../activities/scanning/index.ts';
import { ticketScanState, validateTicketScan } from '../../workers/runs/ticket-scans.ts';
import { ticketScanRun } from '../../workers/runs/uploads.ts';
import type { ScanInput, ScanView } from '../../workflows/ticket-scan.ts';
import { actingUser, existingUser, organizationFor } from '../auth.ts';
import { answerField, defineRoute } from '../http.ts';
import { runOnUpload } from '../idempotency.ts';
import { organizationId, requiredId } from '../schemas.ts';

const tag = 'ticket scan';
const BASE = '/api/ticket-scan/loyalty/ticket-scan';
const FINAL = new Set(['completed', 'rejected', 'failed']);

const numericId = (field: string) =>
  z
    .union([z.string(), z.number(), z.null()])
    .transform((v) => (v === null || String(v).trim() === '' ? undefined : String(v).trim()))
    .refine((v) => v === undefined || /^[1-9]\d{0,15}$/.test(v), `${field} must be a catalogue id (a positive integer)`)
    .optional();

const scanObject = z
  .object({
    id: z.string(),
    user_id: z.string(),
    brand_id: z.string().nullable(),
    venue_id: z.string().nullable(),
    status: z.enum(['processing', 'pending_validation', 'completed', 'rejected', 'failed']),
    original_image_url: z.string().nullable(),
    thumbnail_url: z.string().nullable(),
    media_public_id: z.string(),
    venue_match: z
      .object({ venue_id: z.string().nullable(), confidence: z.number(), explanation: z.string() })
      .nullable(),
    products: z.array(
      z
        .object({
          id: z.string(),
          name: z.string(),
          confidence: z.number(),
          points: z.number(),
          needs_validation: z.boolean(),
          validation_status: z.enum(['auto_approved', 'pending', 'approved', 'rejected']),
          validated_by: z.string().nullable(),
          validated_at: z.string().nullable(),
        })
        .passthrough(),
    ),
    confidence_score: z.number(),
    total_points: z
      .number()
      .describe("what the scan credits: its approved products' points, at most max_points_per_scan"),
    max_points_per_scan: z.number().nullable().describe("the organization's cap when the scan was analysed"),
    points_capped: z.boolean().describe("the approved products' points exceed the organization's cap"),
    points_processed: z.boolean(),
    points_processed_at: z.string().nullable(),
    validation_required: z.boolean(),
    validation_status: z.enum(['not_required', 'pending', 'completed']),
  })
  .passthrough();

/** Decodes the JSON's base64 image (a data: URL prefix is allowed); refuses what is not base64. */
function decodeImage(image: string): Buffer {
  const data = image.replace(/^data:[\w/+.-]+;base64,/, '').replace(/\s+/g, '');
  if (!data) throw invalid('image', 'is empty');
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(data) || data.length % 4 === 1) throw invalid('image', 'is not valid base64');
  const body = Buffer.from(data, data.includes('-') || data.includes('_') ? 'base64url' : 'base64');
  if (!body.length) throw invalid('image', 'is empty');
  const limit = config().maxUploadBytes;
  if (body.length > limit)
    throw new PlatformError('too_large', `image is larger than the ${config().MAX_UPLOAD_MB} MB limit`, 'image');
  return body;
}

type ScanRequest = {
  organization_id?: string;
  user_ref: string;
  source: ScanInput['source'];
  body: Buffer;
  filename: string;
  content_type: string;
  brand_id?: string;
  venue_id?: string;
};

async function startScan(event: H3Event, p: Principal, req: ScanRequest): Promise<ScanView> {
  const org = organizationFor(p, req.organization_id);
  const user = await actingUser(p, org, req.user_ref);
  if (req.venue_id)
    await getVenue(org, Number(req.venue_id)).catch(() =>
      Promise.reject(invalid('venue_id', `venue ${req.venue_id} does not exist in this organization`)),
    );
  if (req.brand_id)
    await getBrand(org, Number(req.brand_id)).catch(() =>
      Promise.reject(invalid('brand_id', `brand ${req.brand_id} does not exist in this organization`)),
    );
  const cfg = config();
  return runOnUpload({
    event,
    route: req.source === 'receipt' ? 'retail_receipts' : 'ticket_scan',
    organization_id: org,
    user_id: user.user_id,
    file: { data: req.body, filename: req.filename, contentType: req.content_type },
    fields: { brand_id: req.brand_id ?? null, venue_id: req.venue_id ?? null },
    newId: () => newId('scan', 12),
    workflow: ticketScanRun,
    input: {
      source: req.source,
      organization_id: org,
      user_id: user.user_id,
      idp_id: user.idp_id,
      brand_id: req.brand_id ?? null,
      venue_id: req.venue_id ?? null,
      threshold: cfg.SCAN_CONFIDENCE_THRESHOLD,
      deadline_hours: cfg.SCAN_VALIDATION_DEADLINE_HOURS,
      image_base_url: `${cfg.publicUrl}${BASE}`,
    },
  });
}

/** The scan as the caller may see it: its organization's, and a basic key only its own user's. */
async function readScan(p: Principal, organization_id: string | undefined, scan_id: string): Promise<ScanView> {
  const org = organizationFor(p, organization_id);
  const mirror = (await readScanMirror(org, scan_id)) as ScanView | null;
  let scan: ScanView | null = mirror && FINAL.has(mirror.status) ? mirror : null;
  if (!scan) {
    try {
      scan = await ticketScanState(scan_id);
    } catch {
      scan = mirror; // the workflow is gone (retention) or unreachable: the mirror answers
    }
  }
  if (!scan || scan.organization_id !== org) throw notFound('Scan not found');
  if (p.level === 0 && scan.user_id !== p.user_id) throw notFound('Scan not found');
  return scan;
}

defineRoute({
  method: 'POST',
  paths: [BASE],
  statuses: {
    402: "The organization's token budget cannot cover the model call",
    502: 'The model provider failed',
    503: 'Model calls are busy for this organization; retry after Retry-After',
  },
  tag,
  summary:
    'Scans a ticket (base64 image): OCR, venue match, products with confidence and points; products under the threshold wait for validation (workflow ticket-scan:<id>)',
  auth: 'key',
  audit: {
    action: 'ticket_scan.create',
    target: ({ result }) => ({ type: 'ticket_scan', id: answerField(result, 'id') }),
    keep: ['brand_id', 'venue_id'],
  },
  idempotent: true,
  jsonUpload: true,
  body: z.object({
    user_id: requiredId,
    brand_id: numericId('brand_id'),
    venue_id: numericId('venue_id'),
    image: z.string().describe('the ticket image, base64 (a data: URL is accepted)'),
    organization_id: organizationId,
  }),
  response: scanObject,
  handler: async ({ event, principal, body }) =>
    startScan(event, principal, {
      organization_id: body.organization_id,
      user_ref: body.user_id,
      source: 'ticket_scan',
      body: decodeImage(body.image),
      filename: 'ticket',
      content_type: 'application/octet-stream',
      brand_id: body.brand_id,
      venue_id: body.venue_id,
    }),
});

defineRoute({
  method: 'POST',
  paths: ['/retail/receipts'],
  statuses: {
    402: "The organization's token budget cannot cover the model call",
    502: 'The model provider failed',
    503: 'Model calls are busy for this organization; retry after Retry-After',
  },
  tag: 'retail',
  summary:
    'Processes a receipt photo (multipart field `file`) for venue_id: the same scan pipeline and answer as ticket scanning',
  auth: 'key',
  audit: {
    action: 'receipt_scan.create',
    target: ({ result }) => ({ type: 'ticket_scan', id: answerField(result, 'id') }),
  },
  idempotent: true,
  query: z.object({
    venue_id: z.coerce.number({ message: 'must be a number' }).int().positive(),
    organization_id: organizationId,
  }),
  form: {
    file: true,
    fields: z.object({
      user_id: z.string().trim().min(1).max(200).optional().describe("defaults to the key's user"),
      organization_id: organizationId,
    }),
  },
  response: scanObject,
  handler: async ({ event, principal, query, form, file }) =>
    startScan(event, principal, {
      organization_id: form.organization_id ?? query.organization_id,
      user_ref: form.user_id ?? principal.user_id,
      source: 'receipt',
      body: file!.data,
      filename: file!.filename,
      content_type: file!.contentType,
      venue_id: String(query.venue_id),
    }),
});

const scanParams = z.object({ ticket_id: requiredId });
const instant = z
  .string()
  .trim()
  .refine((v) => !Number.isNaN(Date.parse(v)), 'must be an ISO 8601 date or date-time')
  .transform((v) => new Date(v))
  .optional();

defineRoute({
  method: 'GET',
  paths: [BASE],
  tag,
  summary:
    "A user's scans (receipts and tickets), newest first, paged: a basic key its own user's; an admin any user's, or the organization's without user_id. A scan is listed from its start (processing); one that fails is not",
  auth: 'key',
  query: z.object({
    user_id: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .describe("default: the key's own user for a basic key, every user of the organization for an admin"),
    status: z.enum(['processing', 'pending_validation', 'completed', 'rejected', 'failed']).optional(),
    source: z.enum(['ticket_scan', 'receipt']).optional(),
    from: instant.describe('scans created at or after this time'),
    to: instant.describe('scans created before this time'),
    page: z.coerce.number().int().min(1).default(1),
    limit: z.coerce.number().int().min(1).max(100).default(20),
    organization_id: organizationId,
  }),
  response: z.object({
    success: z.literal(true),
    scans: z.array(scanObject),
    page: z.number(),
    limit: z.number(),
    total: z.number(),
    has_more: z.boolean(),
  }),
  handler: async ({ principal, query }) => {
    const org = organizationFor(principal, query.organization_id);
    if (query.from && query.to && query.to <= query.from) throw invalid('to', 'must be after from');
    const user_id = query.user_id
      ? (await existingUser(principal, org, query.user_id, 'User not found')).user_id
      : principal.level === 0
        ? principal.user_id
        : undefined;
    const { page, limit } = query;
    // A failed run drops its own record (workflows/ticket-scan.ts); the list drops those of runs that are gone.
    const { scans, total } = await listScans({
      organization_id: org,
      user_id,
      status: query.status,
      source: query.source,
      from: query.from,
      to: query.to,
      page,
      limit,
    });
    return { success: true, scans, page, limit, total, has_more: page * limit < total };
  },
});
const orgQuery = z.object({ organization_id: organizationId });

defineRoute({
  method: 'GET',
  paths: [`${BASE}/:ticket_id`],
  tag,
  summary: 'The scan: from the running workflow, or from its MongoDB mirror once finished',
  auth: 'key',
  params: scanParams,
  query: orgQuery,
  response: scanObject,
  handler: async ({ principal, params, query }) => readScan(principal, query.organization_id, params.ticket_id),
});

defineRoute({
  method: 'POST',
  paths: [`${BASE}/:ticket_id/validate`],
  tag,
  summary:
    'Approves or rejects products pending validation (admin; a Temporal Update on the scan workflow). When none is pending, the points are credited once',
  auth: 'admin',
  audit: {
    action: 'ticket_scan.validate',
    target: ({ params }) => ({ type: 'ticket_scan', id: params.ticket_id }),
    keep: ['validations.product_id'],
  },
  params: scanParams,
  query: orgQuery,
  body: z.object({
    validations: z
      .array(
        z.object({
          product_id: z.union([z.string(), z.number()]).transform(String),
          is_valid: z.boolean(),
          notes: z.string().max(1000).optional(),
        }),
      )
      .min(1)
      .max(500),
  }),
  response: scanObject,
  handler: async ({ principal, params, query, body }) => {
    const scan = await readScan(principal, query.organization_id, params.ticket_id);
    if (scan.status !== 'pending_validation')
      throw new PlatformError(
        'malformed',
        `Scan ${scan.id} is ${scan.status}; there is nothing to validate`,
        'validations',
      );
    return validateTicketScan(scan.id, { validations: body.validations, validated_by: principal.user_id });
  },
});

for (const [kind, pick] of [
  ['image', (s: ScanView) => s.storage?.original_path],
  ['thumbnail', (s: ScanView) => s.storage?.thumbnail_path],
] as const) {
  defineRoute({
    method: 'GET',
    paths: [`${BASE}/:ticket_id/${kind}`],
    tag,
    summary: kind === 'image' ? 'The scanned image as uploaded' : 'The JPEG thumbnail of the scanned image',
    auth: 'key',
    params: scanParams,
    query: orgQuery,
    produces: kind === 'image' ? 'application/octet-stream' : 'image/jpeg',
    handler: async ({ principal, params, query }) => {
      const path = pick(await readScan(principal, query.organization_id, params.ticket_id));
      if (!path) throw notFound('Scan image not found');
      return readStoredObject(path);
    },
  });
}
