/**
 * A key's credits: when a key has some, every authenticated request spends one (edge/auth.ts),
 * by a conditional decrement, so two requests racing for the last credit never both pass. A
 * refill schedule sets the credits back to its amount at each UTC day's or month's start, lazily:
 * the first request after that start refills and spends in one conditional write. A key without
 * credits is unlimited (its per-minute limits still apply).
 */
import { rateLimited } from '../core/errors.ts';
import type { RefillInterval } from './constants.ts';
import { type ApiKeyCreditsDoc, creditsDoc, decrementCredit, refillAndSpend } from './store.ts';

const dayStart = (now: Date) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
const monthStart = (now: Date) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));

const periodStart = (interval: RefillInterval, now: Date) => (interval === 'daily' ? dayStart(now) : monthStart(now));

/** The start of the period after the one `at` falls in: when a refill is next due. */
function nextRefill(interval: RefillInterval, at: Date): Date {
  return interval === 'daily'
    ? new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1))
    : new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}

export interface CreditsView {
  remaining: number;
  refill: { amount: number; interval: RefillInterval; next_refill_at: string } | null;
}

/** The credits as a request would find them now: a refill that is due counts as done. */
export function creditsView(doc: ApiKeyCreditsDoc, now = new Date()): CreditsView {
  if (!doc.refill_interval || !doc.refill_amount) return { remaining: doc.remaining, refill: null };
  const due = doc.refilled_at < periodStart(doc.refill_interval, now);
  return {
    remaining: due ? doc.refill_amount : doc.remaining,
    refill: {
      amount: doc.refill_amount,
      interval: doc.refill_interval,
      next_refill_at: nextRefill(doc.refill_interval, due ? now : doc.refilled_at).toISOString(),
    },
  };
}

/** The refusal of a key whose credits are spent: 429 with Retry-After until the next refill (a day without one). */
function exhausted(doc: ApiKeyCreditsDoc, now: Date) {
  const next = doc.refill_interval && doc.refill_amount ? nextRefill(doc.refill_interval, now) : undefined;
  const wait = next ? Math.max(1, Math.ceil((next.getTime() - now.getTime()) / 1000)) : 86_400;
  return rateLimited(
    next
      ? `API key has no credits left (no_credits): refilled to ${doc.refill_amount} at ${next.toISOString()}`
      : 'API key has no credits left (no_credits): an admin of its organization may add some',
    wait,
  );
}

/**
 * Spends one of the key's credits, answering what remains (null: the credits were removed, the
 * key is unlimited again); throws the 429 above when none is left.
 */
export async function spendKeyCredit(credits_id: string): Promise<number | null> {
  for (let round = 0; ; round += 1) {
    const now = new Date();
    const left = await decrementCredit(credits_id, dayStart(now), monthStart(now));
    if (left !== null) return left;
    const doc = await creditsDoc(credits_id);
    if (!doc) return null;
    const due = doc.refill_interval && doc.refill_amount && doc.refilled_at < periodStart(doc.refill_interval, now);
    // Refilled by another request between the decrement and this read: spend from what it put
    // there (each lost decrement is another request's spend, so this ends).
    if (!due && doc.remaining > 0) continue;
    if (!due || round >= 3) throw exhausted(doc, now);
    if (await refillAndSpend(credits_id, doc.refilled_at, doc.refill_amount! - 1, now)) return doc.refill_amount! - 1;
    // Another request refilled first: spend from what it put there.
  }
}
