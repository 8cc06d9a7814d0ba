/**
 * Activities of the scan workflow (workflows/ticket-scan.ts): read the receipt (image checks,
 * thumbnail, OCR, parsing), analyse it against the catalogue, mirror the scan to MongoDB and
 * credit its points once.
 */
import { createHash } from 'node:crypto';

import { receiptImages } from '../adapters/images.ts';
import { recognize } from '../adapters/ocr.ts';
import { getObject, putObject } from '../adapters/storage.ts';
import { PlatformError } from '../core/errors.ts';
import { type StoredUpload, uploadPaths } from '../images/index.ts';
import { visionModel } from '../llm/index.ts';
import { creditPoints, getRules, receiptEarning } from '../loyalty/index.ts';
import {
  getVenue,
  nearbyVenues,
  noteUnmatchedReceiptLines,
  organizationProducts,
  organizationVenues,
  venueProducts,
} from '../retail/index.ts';
import { scanMirrorView } from './list.ts';
import { matchProducts, matchVenue, VENUE_CONFIRMED, type VenueMatch } from './matching.ts';
import type { ScanProduct } from './products.ts';
import { type MirroredScan, recordScanEvent } from './publish.ts';
import { type ParsedReceipt, parseReceipt } from './receipt.ts';
import { scanningSettings } from './settings.ts';
import { dropFingerprint, fingerprint, insertFingerprint, scanStatus, writeScanMirror } from './store.ts';

export type { ScanProduct, ScanStatus } from './products.ts';

export interface ReadReceipt {
  media_public_id: string;
  original_path: string;
  thumbnail_path: string;
  image_sha256: string;
  ocr: { engine: string; confidence: number | null; ms: number; text: string };
  receipt: ParsedReceipt;
  image_ms: number;
}

/** Checks the stored image, writes its thumbnail, runs OCR and parses the text. */
export async function readReceipt(upload: StoredUpload): Promise<ReadReceipt> {
  const started = performance.now();
  const body = await getObject(upload.original_path);
  if (!body) throw new PlatformError('not_found', `Upload not found in storage: ${upload.original_path}`);
  const { thumbnail, page } = await receiptImages(body, {
    maxPixels: scanningSettings().MAX_IMAGE_MEGAPIXELS * 1_000_000,
  });
  const { thumbnail_path } = uploadPaths(upload.organization_id, upload.user_id, upload.media_id, upload.filename);
  await putObject(thumbnail_path, thumbnail, 'image/jpeg');
  const image_ms = Math.round(performance.now() - started);
  const ocr = await recognize(page, visionModel({ organization_id: upload.organization_id, user_id: upload.user_id }));
  return {
    media_public_id: upload.media_id,
    original_path: upload.original_path,
    thumbnail_path,
    image_sha256: createHash('sha256').update(body).digest('hex'),
    ocr: {
      engine: ocr.engine,
      confidence: ocr.confidence === null ? null : Math.round(ocr.confidence * 1000) / 1000,
      ms: ocr.ms,
      text: ocr.text,
    },
    receipt: parseReceipt(ocr.text),
    image_ms,
  };
}

/** A fingerprint left by a scan that failed, or that never got past processing, does not count. */
const STALE_FINGERPRINT_MS = 10 * 60_000;

/** Claims the fingerprint for this scan; answers the earlier scan's id when another one holds it. */
async function claim(key: string, scan_id: string): Promise<string | null> {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    if (await insertFingerprint(key, scan_id)) return null;
    const held = await fingerprint(key);
    if (!held || held.scan_id === scan_id) return null;
    // Its scan's owner was erased: the receipt was used all the same, for good.
    if (held.erased) return held.earned_by ?? held.scan_id;
    const earlier = await scanStatus(held.scan_id);
    // A scan still processing has only its first record (list.ts): its age decides.
    const abandoned =
      earlier && earlier.status !== 'processing'
        ? earlier.status === 'failed'
        : Date.now() - new Date(held.created_at).getTime() > STALE_FINGERPRINT_MS;
    // A copy of a copy names the scan that earned (another photo of a receipt holds its own image).
    if (!abandoned) return typeof earlier?.view?.duplicate_of === 'string' ? earlier.view.duplicate_of : held.scan_id;
    await dropFingerprint(key, held.scan_id);
  }
  return null;
}

interface AnalyseInput {
  scan_id: string;
  organization_id: string;
  user_id: string;
  venue_id: number | null;
  image_sha256: string;
  receipt: ParsedReceipt;
  threshold: number;
}

interface Analysis {
  venue_match: VenueMatch;
  products: ScanProduct[];
  unmatched_lines: string[];
  flags: string[];
  duplicate_of: string | null;
  /** the organization's cap at analysis time: the scan credits at most this */
  max_points_per_scan: number;
  matching_ms: number;
}

/** Points for one unit: `product:<id>`, else `brand:<id>`, else `purchase` in the organization's rules. */
function pointsPerUnit(actions: Record<string, number>, product_id: number, brand_id: number): number {
  return actions[`product:${product_id}`] ?? actions[`brand:${brand_id}`] ?? actions.purchase ?? 10;
}

export async function analyseScan(input: AnalyseInput): Promise<Analysis> {
  const started = performance.now();
  const { organization_id, scan_id, receipt } = input;
  // A receipt earns once in the organization, whoever scans it: per user, a shop's customers
  // would pass one receipt around.
  let duplicate_of = await claim(`${organization_id}|image:${input.image_sha256}`, scan_id);

  const given = input.venue_id === null ? null : await getVenue(organization_id, input.venue_id).catch(() => null);
  // Other venues are compared only when the given one is not confirmed: those within 25 km of
  // it, or every venue of the organization when none was given.
  let venue_match = matchVenue(receipt, given, []);
  if (!given || venue_match.confidence < VENUE_CONFIRMED) {
    const others = given
      ? (await nearbyVenues(organization_id, given.latitude, given.longitude, 25_000, 5000)).venues
      : await organizationVenues(organization_id);
    venue_match = matchVenue(receipt, given, others);
  }
  const matchedVenue = venue_match.venue_id === null ? null : Number(venue_match.venue_id);
  const [products, mapped] = await Promise.all([
    organizationProducts(organization_id),
    matchedVenue ? venueProducts(organization_id, matchedVenue) : Promise.resolve([]),
  ]);
  const prices = new Map(mapped.map((m) => [m.product_id, m]));
  const { matches, unmatched } = matchProducts(
    receipt.items,
    products.map((p) => ({
      id: p.id,
      name: p.name,
      brand_id: p.brand_id,
      price: prices.get(p.id)?.price ?? null,
      status: prices.get(p.id)?.status ?? null,
    })),
  );

  // What the catalogue lacks: the item names of the lines no product matched (counted once a day
  // per user and name, so this step run again counts nothing more; no user id is stored).
  const unmatchedLines = new Set(unmatched);
  await noteUnmatchedReceiptLines(
    organization_id,
    receipt.items.filter((i) => unmatchedLines.has(i.text)).map((i) => i.name),
    input.user_id,
  );

  const flags: string[] = [];
  if (receipt.total !== null && receipt.items_total > receipt.total + 0.01) flags.push('items_exceed_total');
  if (venue_match.confidence < VENUE_CONFIRMED) flags.push('venue_unconfirmed');
  if (!matches.length) flags.push('no_products_recognized');
  if (!duplicate_of && matchedVenue && receipt.date && receipt.total !== null) {
    duplicate_of = await claim(
      `${organization_id}|receipt:${matchedVenue}|${receipt.date}|${receipt.total.toFixed(2)}`,
      scan_id,
    );
  }
  if (duplicate_of) flags.push('duplicate');
  // A receipt whose lines exceed its total, or from an unconfirmed venue, is reviewed whole.
  const reviewAll = flags.includes('items_exceed_total') || flags.includes('venue_unconfirmed');

  const [{ actions, max_points_per_scan: scanCap }, byAmount] = await Promise.all([
    getRules(organization_id),
    receiptEarning(organization_id),
  ]);
  // With an earning rule for `purchase`, the lines earn by their prices as an award's amount would.
  const belowMinimum = byAmount?.belowMinimum(receipt.total) ?? false;
  if (belowMinimum) flags.push('below_min_amount');
  const max_points_per_scan = Math.min(scanCap, byAmount?.rule.max_points ?? scanCap);
  const pointsOf = (m: (typeof matches)[number]) =>
    byAmount
      ? belowMinimum
        ? 0
        : byAmount.linePoints(m.line_price, m.product.id, m.product.brand_id)
      : pointsPerUnit(actions, m.product.id, m.product.brand_id) * m.quantity;
  const scanProducts: ScanProduct[] = matches.map((m) => {
    const needs = reviewAll || m.confidence < input.threshold;
    return {
      id: String(m.product.id),
      name: m.product.name,
      brand_id: m.product.brand_id,
      confidence: m.confidence,
      points: pointsOf(m),
      quantity: m.quantity,
      unit_price: m.unit_price,
      line_price: m.line_price,
      expected_price: m.product.price,
      lines: m.lines,
      needs_validation: needs,
      validation_status: needs ? 'pending' : 'auto_approved',
      validated_by: null,
      validated_at: null,
      notes: null,
    };
  });
  return {
    venue_match,
    products: scanProducts,
    unmatched_lines: unmatched,
    flags,
    duplicate_of,
    max_points_per_scan,
    matching_ms: Math.round(performance.now() - started),
  };
}

/**
 * Mirrors the scan as the workflow answers it, then records the event of the state it entered
 * (pending_validation, completed, rejected; publish.ts) before answering: a step run again writes
 * the same mirror and records nothing new.
 */
export async function mirrorScan(view: MirroredScan): Promise<void> {
  await writeScanMirror(view);
  await recordScanEvent(view);
}

export async function readScanMirror(
  organization_id: string,
  scan_id: string,
): Promise<Record<string, unknown> | null> {
  return scanMirrorView(organization_id, scan_id);
}

/** Credits the scan's points; the ledger operation `scan:<id>` makes a second call a no-op. */
export async function creditScan(input: {
  organization_id: string;
  user_id: string;
  scan_id: string;
  points: number;
  source: 'ticket_scan' | 'receipt';
}): Promise<{ processed_at: string; duplicate: boolean }> {
  const out = await creditPoints({
    organization_id: input.organization_id,
    user_id: input.user_id,
    points: input.points,
    reason: input.source,
    operation_id: `scan:${input.scan_id}`,
    description: `${input.source === 'receipt' ? 'Receipt' : 'Ticket'} scan ${input.scan_id}`,
  });
  return { processed_at: out.entry.created_at, duplicate: out.duplicate };
}
