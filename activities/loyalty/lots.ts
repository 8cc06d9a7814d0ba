/**
 * Lots (pure): what is left of each credit that expires or waits, carried on every ledger entry.
 * Points without a lot (credited while nothing expired or waited) are the "free" points:
 * balance − Σ lots; they never lapse. At an instant, a lot is lapsed (its expiry passed), pending
 * (not yet available) or live; only live lots and free points can be spent.
 */
import type { LotDoc } from './models';

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
export const isPending = (l: Lot, now: Date) => !isLapsed(l, now) && l.available_at != null && time(l.available_at) > now.getTime();

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
export function credit(s: LotState, c: { entry_id: string; seq: number; amount: number; expires_at?: Date; available_at?: Date }): LotState {
  const free = s.balance - total(s.lots);
  const points = c.amount - (free < 0 ? Math.min(c.amount, -free) : 0);
  const lot: Lot = { entry_id: c.entry_id, seq: c.seq, points, ...(c.expires_at ? { expires_at: c.expires_at } : {}), ...(c.available_at ? { available_at: c.available_at } : {}) };
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
  const live = lots.filter((l) => l !== mine && !isLapsed(l, now) && !isPending(l, now)).sort((a, b) => time(a.expires_at) - time(b.expires_at) || a.seq - b.seq);
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
