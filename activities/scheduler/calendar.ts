/**
 * Recurrence → Temporal Schedule spec, and the same rule computed here ("next runs"), so tests
 * can hold the two against each other. Times are wall-clock times in the event's IANA time zone
 * (UTC by default): a daily 09:00 in Europe/Madrid stays 09:00 across daylight-saving changes.
 * Monthly on the 29th–31st runs on the last day of shorter months.
 */
import type { CalendarSpec, ScheduleSpec } from '@temporalio/client';

import { Cache } from '../core/db/cache.ts';
import { isTimeZone, localParts, offsetAt, type Parts, wallMs, zonedToUtc } from '../core/zoned-time.ts';
import { type Cron, cronDay, parseCron, ranges } from './cron.ts';

export const RECURRENCES = ['daily', 'weekly', 'monthly', 'cron'] as const;
export type Recurrence = (typeof RECURRENCES)[number];

const MONTHS = [
  'JANUARY',
  'FEBRUARY',
  'MARCH',
  'APRIL',
  'MAY',
  'JUNE',
  'JULY',
  'AUGUST',
  'SEPTEMBER',
  'OCTOBER',
  'NOVEMBER',
  'DECEMBER',
] as const;
export { isTimeZone, zonedToUtc };

const DAYS = ['SUNDAY', 'MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY'] as const;

export interface Timing {
  start: Date;
  end?: Date | null;
  recurrency?: Recurrence | null;
  timezone?: string | null;
  /** with recurrency 'cron': the five-field expression (checked by parseCron when saved) */
  cron?: string | null;
}

const daysInMonth = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();
const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

function monthlyCalendars(
  day: number,
  time: Pick<CalendarSpec, 'hour' | 'minute' | 'second'>,
  fromYear: number,
): CalendarSpec[] {
  if (day <= 28) return [{ ...time, dayOfMonth: day }];
  const long = MONTHS.filter((_, i) => i !== 1 && daysInMonth(2001, i + 1) >= day);
  const calendars: CalendarSpec[] = [{ ...time, dayOfMonth: day, month: long.map((m) => ({ start: m, end: m })) }];
  if (day === 31)
    calendars.push({
      ...time,
      dayOfMonth: 30,
      month: MONTHS.filter((_, i) => daysInMonth(2001, i + 1) === 30).map((m) => ({ start: m, end: m })),
    });
  // February: the 29th in leap years, else the 28th. Temporal accepts years up to 2100, so the
  // years are listed from the start year to 2100.
  const years = Array.from({ length: Math.max(0, 2101 - fromYear) }, (_, i) => fromYear + i);
  calendars.push({
    ...time,
    dayOfMonth: 29,
    month: 'FEBRUARY',
    year: years.filter(isLeap).map((y) => ({ start: y, end: y })),
  });
  calendars.push({
    ...time,
    dayOfMonth: 28,
    month: 'FEBRUARY',
    year: years.filter((y) => !isLeap(y)).map((y) => ({ start: y, end: y })),
  });
  return calendars;
}

/** Parsed expressions (pure: an entry never goes stale, so no time to live). */
const parsedCrons = new Cache<string, Cron>({ max: 1000 });
const cronOf = (t: Timing): Cron => {
  const text = t.cron ?? '';
  let c = parsedCrons.get(text);
  if (!c) {
    const parsed = parseCron(text);
    if (typeof parsed === 'string') throw new Error(`cron: ${parsed}`);
    c = parsed;
    parsedCrons.set(text, c);
  }
  return c;
};

export function scheduleSpec(t: Timing): ScheduleSpec {
  const tz = t.timezone || 'UTC';
  const p = localParts(t.start, tz);
  const time = { hour: p.hour, minute: p.minute, second: p.second };
  let calendars: CalendarSpec[];
  switch (t.recurrency) {
    case 'cron': {
      const c = cronOf(t);
      calendars = [
        {
          second: 0,
          minute: ranges<number>(c.minute),
          hour: ranges<number>(c.hour),
          ...(c.dayOfMonth ? { dayOfMonth: ranges<number>(c.dayOfMonth) } : {}),
          ...(c.month ? { month: ranges(c.month, (m) => MONTHS[m - 1]) } : {}),
          ...(c.dayOfWeek ? { dayOfWeek: ranges(c.dayOfWeek, (d) => DAYS[d]) } : {}),
        },
      ];
      break;
    }
    case 'daily':
      calendars = [time];
      break;
    case 'weekly':
      calendars = [{ ...time, dayOfWeek: DAYS[p.weekday] }];
      break;
    case 'monthly':
      calendars = monthlyCalendars(p.day, time, p.year);
      break;
    default:
      calendars = [{ ...time, dayOfMonth: p.day, month: MONTHS[p.month - 1], year: p.year }];
  }
  if (t.recurrency) calendars.push(...gapCalendars(t, tz));
  return { calendars, timezone: tz, startAt: t.start, ...(t.end ? { endAt: t.end } : {}) };
}

/** The rule's times of day, as [hour, minute, second]. */
function timesOfDay(t: Timing, p: Parts): [number, number, number][] {
  if (t.recurrency !== 'cron') return [[p.hour, p.minute, p.second]];
  const c = cronOf(t);
  return c.hour.flatMap((h) => c.minute.map((m): [number, number, number] => [h, m, 0]));
}

/** Whether the rule runs on a local date (weekday 0 = Sunday). */
function onDay(t: Timing, p: Parts, y: number, m: number, day: number, weekday: number): boolean {
  switch (t.recurrency) {
    case 'daily':
      return true;
    case 'weekly':
      return weekday === p.weekday;
    case 'monthly':
      return day === Math.min(p.day, daysInMonth(y, m));
    case 'cron':
      return cronDay(cronOf(t), m, day, weekday);
    default:
      return false;
  }
}

/** Spring-forward transitions of a zone in a year: [instant, offset before, offset after] (ms). */
const gapCache = new Cache<string, [number, number, number][]>({ max: 10_000 });
function springForwards(tz: string, year: number): [number, number, number][] {
  const key = `${tz}/${year}`;
  let out = gapCache.get(key);
  if (out) return out;
  out = [];
  for (let m = 0; m < 12; m += 1) {
    let lo = Date.UTC(year, m, 1);
    let hi = Date.UTC(year, m + 1, 1);
    const [a, b] = [offsetAt(lo, tz), offsetAt(hi, tz)];
    if (b <= a) continue;
    while (hi - lo > 60_000) {
      const mid = lo + Math.floor((hi - lo) / 120_000) * 60_000;
      if (offsetAt(mid, tz) === a) lo = mid;
      else hi = mid;
    }
    out.push([hi, a, b]);
  }
  gapCache.set(key, out);
  return out;
}

/**
 * Temporal skips a wall time that does not exist (the hour the clock jumps on the spring-forward
 * day); the rule runs it once, shifted forward by the gap (zonedToUtc). So each such day gets its
 * own calendar entry at the shifted time, from the start year to the end of the calendar (2100).
 */
function gapCalendars(t: Timing, tz: string): CalendarSpec[] {
  const p = localParts(t.start, tz);
  const times = timesOfDay(t, p);
  const lastYear = t.end ? Math.min(2100, t.end.getUTCFullYear()) : 2100;
  const out: CalendarSpec[] = [];
  for (let year = p.year; year <= lastYear; year += 1) {
    for (const [at, before, after] of springForwards(tz, year)) {
      const gapStart = at + before; // the skipped wall times, as UTC-based wall ms
      const gap = after - before;
      const d = new Date(gapStart);
      const [y, m, day] = [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()];
      if (!onDay(t, p, y, m, day, d.getUTCDay())) continue;
      const byHour = new Map<string, number[]>();
      for (const [h, mi, sec] of times) {
        const wall = Date.UTC(y, m - 1, day, h, mi, sec);
        if (wall < gapStart || wall >= gapStart + gap) continue;
        const shifted = new Date(wall + gap);
        const k = `${shifted.getUTCFullYear()}-${shifted.getUTCMonth()}-${shifted.getUTCDate()}-${shifted.getUTCHours()}-${sec}`;
        byHour.set(k, [...(byHour.get(k) ?? []), shifted.getUTCMinutes()]);
      }
      for (const [k, minutes] of byHour) {
        const [sy, sm, sd, sh, ss] = k.split('-').map(Number);
        out.push({
          year: sy,
          month: MONTHS[sm],
          dayOfMonth: sd,
          hour: sh,
          minute: ranges<number>(minutes.sort((a, b) => a - b)),
          second: ss,
        });
      }
    }
  }
  return out;
}

/**
 * A Schedule time that is the other occurrence of a rule time repeated when the clock went back
 * (Temporal may start both in zones behind UTC): the rule runs only the second occurrence.
 */
export function isFoldTwin(t: Timing, time: Date): boolean {
  if (!t.recurrency) return false;
  const tz = t.timezone || 'UTC';
  const wall = wallMs(localParts(time, tz));
  return nextRuns(t, new Date(time.getTime() - 10_800_000), 20).some(
    (r) =>
      r.getTime() !== time.getTime() &&
      Math.abs(r.getTime() - time.getTime()) <= 10_800_000 &&
      wallMs(localParts(r, tz)) === wall,
  );
}

/** The next `count` run times at or after `from`, by the same rule, computed independently. */
export function nextRuns(t: Timing, from: Date, count: number): Date[] {
  const tz = t.timezone || 'UTC';
  const p = localParts(t.start, tz);
  const out: Date[] = [];
  const after = Math.max(from.getTime(), t.start.getTime());
  const push = (d: Date) => {
    if (d.getTime() >= after && (!t.end || d.getTime() <= t.end.getTime())) out.push(d);
  };
  const times = t.recurrency ? timesOfDay(t, p) : [];
  if (!t.recurrency) {
    push(t.start);
    return out.slice(0, count);
  }
  const fromLocal = localParts(new Date(after), tz);
  let cursor = Date.UTC(fromLocal.year, fromLocal.month - 1, fromLocal.day) - 86_400_000;
  for (let guard = 0; out.length < count && guard < 5000; guard += 1) {
    const d = new Date(cursor);
    const [y, m, day] = [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()];
    if (onDay(t, p, y, m, day, d.getUTCDay())) {
      // A shifted gap time may land on another rule time: one run (as in the Schedule).
      const seen = new Set<number>();
      for (const [hour, minute, second] of times)
        seen.add(zonedToUtc({ year: y, month: m, day, hour, minute, second }, tz).getTime());
      [...seen].sort((a, b) => a - b).forEach((ms) => push(new Date(ms)));
    }
    if (t.end && cursor > t.end.getTime() + 86_400_000) break;
    cursor += 86_400_000;
  }
  return out.slice(0, count);
}

const DAY_S = 86_400;

/** Whether two consecutive dates can both match (the month ignored: a lower bound). */
function consecutiveDays(c: Cron): boolean {
  if (c.dayOfWeek) return c.dayOfWeek.some((d) => c.dayOfWeek!.includes((d + 1) % 7));
  if (c.dayOfMonth)
    return (
      c.dayOfMonth.some((d) => c.dayOfMonth!.includes(d + 1)) ||
      (c.dayOfMonth.includes(1) && c.dayOfMonth.some((d) => d >= 28))
    );
  return true;
}

/** The smallest positive difference between consecutive values (equal ones are one run). */
function smallestStep(xs: number[]): number {
  const s = [...new Set(xs)].sort((a, b) => a - b);
  let min = Number.POSITIVE_INFINITY;
  for (let i = 1; i < s.length; i += 1) min = Math.min(min, s[i]! - s[i - 1]!);
  return min;
}

/**
 * The shortest time between two consecutive runs of the rule, in seconds (Infinity: a one-off
 * event), computed rather than sampled so a rule that is dense only on some days is caught: the
 * gaps between the rule's times of day, from a day's last time to the next run day's first (as
 * if two consecutive dates ran whenever the rule allows it: a lower bound), and the same on each
 * spring-forward day of the zone this year and next, where the missing hour brings times across
 * it closer (01:00 and 03:00 run one real hour apart in Madrid that night). Fall-back days only
 * lengthen gaps: the rule runs the second occurrence of a repeated time.
 */
export function minGapSeconds(t: Timing): number {
  if (!t.recurrency) return Number.POSITIVE_INFINITY;
  const tz = t.timezone || 'UTC';
  const p = localParts(t.start, tz);
  const times = [...new Set(timesOfDay(t, p).map(([h, m, s]) => h * 3600 + m * 60 + s))].sort((a, b) => a - b);
  const dayStep =
    t.recurrency === 'weekly'
      ? 7
      : t.recurrency === 'monthly'
        ? 28
        : t.recurrency === 'daily' || consecutiveDays(cronOf(t))
          ? 1
          : 2;
  const first = times[0]!;
  const last = times[times.length - 1]!;
  let min = smallestStep([...times, first + dayStep * DAY_S]);
  for (const year of [p.year, p.year + 1]) {
    for (const [at, before, after] of springForwards(tz, year)) {
      const g = ((((at + before) % 86_400_000) + 86_400_000) % 86_400_000) / 1000; // the wall time skipped from
      const skip = (after - before) / 1000;
      // Seconds of the old offset's day: times before the end of the skipped span keep their
      // place (a skipped time runs shifted, at the same instant), later ones come `skip` earlier.
      const real = times.map((w) => (w < g + skip ? w : w - skip));
      min = Math.min(min, smallestStep([last - dayStep * DAY_S, ...real, first + dayStep * DAY_S - skip]));
    }
  }
  return min;
}
