/**
 * The program's calendar in its time zone (rules.time_zone): the local date and hour of an
 * instant, and the instant a local midnight falls on, from the zone arithmetic the scheduler
 * uses too (core/zoned-time.ts).
 */
import { localParts, zonedToUtc } from '../core/zoned-time.ts';

export { isTimeZone } from '../core/zoned-time.ts';

const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;

export interface LocalTime {
  year: number;
  /** 1-12 */
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** mon, tue, … */
  weekday: string;
}

export function localTime(at: Date, tz: string): LocalTime {
  const p = localParts(at, tz);
  return { ...p, weekday: WEEKDAYS[p.weekday] };
}

/** The local date `YYYY-MM-DD` of an instant. */
export function localDate(at: Date, tz: string): string {
  const t = localParts(at, tz);
  return `${t.year}-${String(t.month).padStart(2, '0')}-${String(t.day).padStart(2, '0')}`;
}

/** The instant of local midnight starting the day (month 1-12; out-of-range months and days roll over). */
export function localMidnight(year: number, month: number, day: number, tz: string): Date {
  const d = new Date(Date.UTC(year, month - 1, day));
  return zonedToUtc(
    { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: 0, minute: 0, second: 0 },
    tz,
  );
}

/**
 * The instant `months` calendar months after `at` in the zone, at the same local time (the day
 * clamped to the month's last).
 */
export function addMonths(at: Date, months: number, tz: string): Date {
  const t = localParts(at, tz);
  const first = new Date(Date.UTC(t.year, t.month - 1 + months, 1));
  const y = first.getUTCFullYear();
  const m = first.getUTCMonth() + 1;
  const last = new Date(Date.UTC(y, m, 0)).getUTCDate();
  const midnight = localMidnight(y, m, Math.min(t.day, last), tz);
  return new Date(midnight.getTime() + ((t.hour * 60 + t.minute) * 60 + t.second) * 1000 + at.getMilliseconds());
}
