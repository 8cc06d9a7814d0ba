/**
 * Fuzzy matching of a receipt against the catalogue (pure): which venue printed it and which
 * products its lines are, each with a confidence 0..1 and the reason.
 */
import { isOnSaleStatus } from '../retail/constants.ts';
import type { ParsedReceipt, ReceiptItem } from './receipt.ts';

const normalize = (s: string) =>
  s
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();

function bigrams(s: string): Map<string, number> {
  const padded = ` ${s} `;
  const grams = new Map<string, number>();
  for (let i = 0; i < padded.length - 1; i += 1) {
    const g = padded.slice(i, i + 2);
    grams.set(g, (grams.get(g) ?? 0) + 1);
  }
  return grams;
}

/** Sørensen–Dice coefficient over character bigrams of the normalized texts: 1 equal, 0 unrelated. */
export function similarity(a: string, b: string): number {
  const x = normalize(a);
  const y = normalize(b);
  if (!x || !y) return 0;
  if (x === y) return 1;
  const gx = bigrams(x);
  const gy = bigrams(y);
  let common = 0;
  let total = 0;
  for (const [g, n] of gx) {
    common += Math.min(n, gy.get(g) ?? 0);
    total += n;
  }
  for (const n of gy.values()) total += n;
  return (2 * common) / total;
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

export interface VenueCandidate {
  id: number;
  name: string;
  address: string;
}

/** A venue whose name and address agree at least this much with the receipt's header. */
export const VENUE_CONFIRMED = 0.6;

export interface VenueMatch {
  venue_id: string | null;
  confidence: number;
  explanation: string;
}

function scoreVenue(header: string[], v: VenueCandidate): { score: number; name: number; address: number } {
  const name = Math.max(0, ...header.map((l) => similarity(l, v.name)));
  if (!v.address) return { score: name, name, address: 0 };
  const address = Math.max(0, ...header.map((l) => similarity(l, v.address)));
  return { score: 0.65 * name + 0.35 * address, name, address };
}

/** The given venue when the header agrees with it, else the organization's best match. */
export function matchVenue(receipt: ParsedReceipt, given: VenueCandidate | null, others: VenueCandidate[]): VenueMatch {
  const header = receipt.header.length ? receipt.header : [receipt.merchant ?? ''];
  const g = given ? scoreVenue(header, given) : null;
  let best: { v: VenueCandidate; s: ReturnType<typeof scoreVenue> } | null = null;
  for (const v of others) {
    if (given && v.id === given.id) continue;
    const s = scoreVenue(header, v);
    if (!best || s.score > best.s.score) best = { v, s };
  }
  const quoted = `"${receipt.merchant ?? header[0] ?? ''}"`;
  const parts = (s: ReturnType<typeof scoreVenue>, v: VenueCandidate) =>
    `name ${s.name.toFixed(2)}${v.address ? `, address ${s.address.toFixed(2)}` : ''}`;
  if (given && g && g.score >= VENUE_CONFIRMED) {
    return {
      venue_id: String(given.id),
      confidence: round3(g.score),
      explanation: `Receipt header ${quoted} matches venue ${given.id} "${given.name}" given by the caller (${parts(g, given)})`,
    };
  }
  if (best && best.s.score >= 0.75 && best.s.score > (g?.score ?? 0)) {
    const not = given
      ? `, not the given venue ${given.id} "${given.name}" (${given && g ? g.score.toFixed(2) : '0'})`
      : '';
    return {
      venue_id: String(best.v.id),
      confidence: round3(best.s.score),
      explanation: `Receipt header ${quoted} matches venue ${best.v.id} "${best.v.name}" (${parts(best.s, best.v)})${not}`,
    };
  }
  if (given && g) {
    return {
      venue_id: String(given.id),
      confidence: round3(g.score),
      explanation: `Receipt header ${quoted} does not clearly match venue ${given.id} "${given.name}" given by the caller (${parts(g, given)}); needs review`,
    };
  }
  return {
    venue_id: null,
    confidence: 0,
    explanation: `No venue of the organization matches the receipt header ${quoted}`,
  };
}

export interface ProductCandidate {
  id: number;
  name: string;
  brand_id: number;
  /** the venue's price, when the product is mapped to the matched venue */
  price: number | null;
  status: string | null;
}

export interface ProductMatch {
  product: ProductCandidate;
  quantity: number;
  unit_price: number;
  line_price: number;
  lines: string[];
  name_similarity: number;
  price_agreement: number | null;
  confidence: number;
}

/** Below this name similarity a line is not taken for any product. */
const MIN_NAME_SIMILARITY = 0.5;

function priceAgreement(unit: number, expected: number | null): number | null {
  if (expected === null || expected <= 0) return null;
  const rel = Math.abs(unit - expected) / expected;
  if (rel <= 0.02) return 1;
  if (rel >= 0.3) return 0;
  return 1 - (rel - 0.02) / 0.28;
}

/**
 * Each line's best product. Confidence = name similarity × (0.6 + 0.4 × price agreement),
 * price agreement 0.75 when the venue has no price for it; ×0.9 when the venue's status for it
 * says not on sale (isOnSaleStatus). Lines of the same product are merged (quantities add, the
 * lowest confidence).
 */
export function matchProducts(
  items: ReceiptItem[],
  candidates: ProductCandidate[],
): { matches: ProductMatch[]; unmatched: string[] } {
  const byProduct = new Map<number, ProductMatch>();
  const unmatched: string[] = [];
  for (const item of items) {
    let best: { c: ProductCandidate; sim: number } | null = null;
    for (const c of candidates) {
      const sim = similarity(item.name, c.name);
      if (!best || sim > best.sim) best = { c, sim };
    }
    if (!best || best.sim < MIN_NAME_SIMILARITY) {
      unmatched.push(item.text);
      continue;
    }
    const agreement = priceAgreement(item.unit_price, best.c.price);
    let confidence = best.sim * (0.6 + 0.4 * (agreement ?? 0.75));
    if (best.c.status && !isOnSaleStatus(best.c.status)) confidence *= 0.9;
    const m: ProductMatch = {
      product: best.c,
      quantity: item.quantity,
      unit_price: item.unit_price,
      line_price: item.price,
      lines: [item.text],
      name_similarity: round3(best.sim),
      price_agreement: agreement === null ? null : round3(agreement),
      confidence: round3(confidence),
    };
    const seen = byProduct.get(best.c.id);
    if (seen) {
      seen.quantity += m.quantity;
      seen.line_price = Math.round((seen.line_price + m.line_price) * 100) / 100;
      seen.lines.push(item.text);
      seen.confidence = Math.min(seen.confidence, m.confidence);
    } else byProduct.set(best.c.id, m);
  }
  return { matches: [...byProduct.values()], unmatched };
}
