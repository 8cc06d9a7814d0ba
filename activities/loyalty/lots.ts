/**
 * Lots (pure): what is left of each credit that expires or waits, carried on every ledger entry.
 * Points without a lot (credited while nothing expired or waited) are the "free" points:
 * balance − Σ lots; they never lapse. At an instant, a lot is lapsed (its expiry passed), pending
 * (not yet available) or live; only live lots and free points can be spent.
 */
import type { LotDoc } from './models.ts';

export type Lot = LotDoc;

export interface LotState {
  balance: number;
  lots: Lot[];
}

export interface Standing {
  /** what may be spent now: never counts lapsed or pending points */
  spendable: number;
  pending: number;
  /** lapsed points the expiry run has not written yet */
  lapsed: number;
}

const time = (d: Date | null | undefined) => (d ? new Date(d).getTime() : Number.POSITIVE_INFINITY);
export const isLapsed = (l: Lot, now: Date) => time(l.expires_at) <= now.getTime();
const isPending = (l: Lot, now: Date) =>
  !isLapsed(l, now) && l.available_at != null && time(l.available_at) > now.getTime();

export function standing(s: LotState, now: Date): Standing {
  let pending = 0;
  let lapsed = 0;
  for (const l of s.lots) {
    if (isLapsed(l, now)) lapsed += l.points;
    else if (isPending(l, now)) pending += l.points;
  }
  return { spendable: s.balance - pending - lapsed, pending, lapsed };
}

const total = (lots: Lot[]) => lots.reduce((sum, l) => sum + l.points, 0);

/**
 * A credit. Points owed (free points below zero, after a reversal allowed to go negative) are
 * paid first; what remains becomes a lot when the credit expires or waits.
 */
export function credit(
  s: LotState,
  c: { entry_id: string; seq: number; amount: number; expires_at?: Date; available_at?: Date },
): LotState {
  const free = s.balance - total(s.lots);
  const points = c.amount - (free < 0 ? Math.min(c.amount, -free) : 0);
  const lot: Lot = {
    entry_id: c.entry_id,
    seq: c.seq,
    points,
    ...(c.expires_at ? { expires_at: c.expires_at } : {}),
    ...(c.available_at ? { available_at: c.available_at } : {}),
  };
  const keep = points > 0 && (c.expires_at || c.available_at);
  return { balance: s.balance + c.amount, lots: keep ? [...s.lots, lot] : s.lots };
}

/**
 * A debit of `amount` (> 0). It takes from the lot of `own` first (a reversal takes back its
 * credit's own points, lapsed or pending included; an expiry removes its lot), then from live
 * lots, the soonest to lapse first (under one expiry rule: the oldest first), then free points.
 * Lapsed and pending lots of other credits are never spent.
 */
export function debit(s: LotState, amount: number, now: Date, own?: string): LotState {
  const lots = s.lots.map((l) => ({ ...l }));
  let left = amount;
  const take = (l: Lot) => {
    const n = Math.min(left, l.points);
    l.points -= n;
    left -= n;
  };
  const mine = own === undefined ? undefined : lots.find((l) => l.entry_id === own);
  if (mine) take(mine);
  const live = lots
    .filter((l) => l !== mine && !isLapsed(l, now) && !isPending(l, now))
    .sort((a, b) => time(a.expires_at) - time(b.expires_at) || a.seq - b.seq);
  for (const l of live) {
    if (!left) break;
    take(l);
  }
  return { balance: s.balance - amount, lots: lots.filter((l) => l.points > 0) };
}

/** The next lapses, soonest first (credits lapsing at the same instant together). */
export function expiring(s: LotState, now: Date, max = 20): { points: number; expires_at: string }[] {
  const by = new Map<number, number>();
  for (const l of s.lots) {
    if (!l.expires_at || isLapsed(l, now)) continue;
    const t = time(l.expires_at);
    by.set(t, (by.get(t) ?? 0) + l.points);
  }
  return [...by.entries()]
    .sort((a, b) => a[0] - b[0])
    .slice(0, max)
    .map(([t, points]) => ({ points, expires_at: new Date(t).toISOString() }));
}

/** What a debit took: the points of each lot (as the lots were before it) and its free points. */
export interface Taken {
  lots: Lot[];
  free: number;
}

/**
 * What a debit of `amount` took, from the lots before it and after it: the difference per credit,
 * each piece keeping its credit's entry_id, seq, expires_at and available_at; the rest were free
 * points.
 */
export function taken(before: Lot[], after: Lot[], amount: number): Taken {
  const left = new Map(after.map((l) => [l.entry_id, l.points]));
  const lots: Lot[] = [];
  for (const l of before) {
    const n = l.points - (left.get(l.entry_id) ?? 0);
    if (n > 0) lots.push({ ...l, points: n });
  }
  return { lots, free: Math.max(0, amount - total(lots)) };
}

/**
 * Gives back what a debit took (a refused redemption's refund): each piece to its own credit's
 * lot, with that credit's expiry, so a refund never renews points; a piece whose credit has
 * lapsed meanwhile comes back lapsed (never spendable; the caller writes its expiry). Points owed
 * (free points below zero) are paid first from the free points given back, then from live pieces,
 * the soonest to lapse first; lapsed points never pay a debt.
 */
export function restore(s: LotState, back: Taken, now: Date): LotState {
  const amount = back.free + total(back.lots);
  let owed = Math.max(0, -(s.balance - total(s.lots)));
  owed -= Math.min(owed, back.free);
  const pieces = back.lots.map((l) => ({ ...l }));
  const payers = pieces
    .filter((l) => !isLapsed(l, now))
    .sort((a, b) => time(a.expires_at) - time(b.expires_at) || a.seq - b.seq);
  for (const l of payers) {
    if (!owed) break;
    const n = Math.min(owed, l.points);
    l.points -= n;
    owed -= n;
  }
  const lots = s.lots.map((l) => ({ ...l }));
  for (const p of pieces) {
    if (p.points <= 0) continue;
    const same = lots.find((l) => l.entry_id === p.entry_id);
    if (same) same.points += p.points;
    else lots.push(p);
  }
  return { balance: s.balance + amount, lots };
}
