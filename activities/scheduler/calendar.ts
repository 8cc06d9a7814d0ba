/**
 * Recurrence → Temporal Schedule spec, and the same rule computed here ("next runs"), so tests
 * can hold the two against each other. Times are wall-clock times in the event's IANA time zone
 * (UTC by default): a daily 09:00 in Europe/Madrid stays 09:00 across daylight-saving changes.
 * Monthly on the 29th–31st runs on the last day of shorter months.
 */
import type { CalendarSpec, ScheduleSpec } from '@temporalio/client';

export const RECURRENCES = ['daily', 'weekly', 'monthly'] as const;
export type Recurrence = (typeof RECURRENCES)[number];

const MONTHS = ['JANUARY', 'FEBRUARY', 'MARCH', 'APRIL', 'MAY', 'JUNE', 'JULY', 'AUGUST', 'SEPTEMBER', 'OCTOBER', 'NOVEMBER', 'DECEMBER'] as const;
const DAYS = ['SUNDAY', 'MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY'] as const;

export interface Timing {
  start: Date;
  end?: Date | null;
  recurrency?: Recurrence | null;
  timezone?: string | null;
}

interface Parts {
  year: number;
  month: number; // 1-12
  day: number;
  hour: number;
  minute: number;
  second: number;
  weekday: number; // 0 = Sunday
}

export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();
function localParts(date: Date, tz: string): Parts {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric', weekday: 'short' });
    formatters.set(tz, f);
  }
  const get = (type: string) => f!.formatToParts(date).find((p) => p.type === type)!.value;
  return {
    year: Number(get('year')),
    month: Number(get('month')),
    day: Number(get('day')),
    hour: Number(get('hour')),
    minute: Number(get('minute')),
    second: Number(get('second')),
    weekday: ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'].indexOf(get('weekday')),
  };
}

/** The UTC instant of a wall-clock time in a zone (for times in a DST gap: shifted forward). */
export function zonedToUtc(p: Omit<Parts, 'weekday'>, tz: string): Date {
  const wall = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  let guess = wall;
  for (let i = 0; i < 3; i += 1) {
    const seen = localParts(new Date(guess), tz);
    const seenWall = Date.UTC(seen.year, seen.month - 1, seen.day, seen.hour, seen.minute, seen.second);
    const diff = wall - seenWall;
    if (diff === 0) break;
    guess += diff;
  }
  return new Date(guess);
}

export const daysInMonth = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();
const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

function monthlyCalendars(day: number, time: Pick<CalendarSpec, 'hour' | 'minute' | 'second'>, fromYear: number): CalendarSpec[] {
  if (day <= 28) return [{ ...time, dayOfMonth: day }];
  const long = MONTHS.filter((_, i) => i !== 1 && daysInMonth(2001, i + 1) >= day);
  const calendars: CalendarSpec[] = [{ ...time, dayOfMonth: day, month: long.map((m) => ({ start: m, end: m })) }];
  if (day === 31) calendars.push({ ...time, dayOfMonth: 30, month: MONTHS.filter((_, i) => daysInMonth(2001, i + 1) === 30).map((m) => ({ start: m, end: m })) });
  // February: the 29th in leap years, else the 28th. Temporal accepts years up to 2100, so the
  // years are listed from the start year to 2100.
  const years = Array.from({ length: Math.max(0, 2101 - fromYear) }, (_, i) => fromYear + i);
  calendars.push({ ...time, dayOfMonth: 29, month: 'FEBRUARY', year: years.filter(isLeap).map((y) => ({ start: y, end: y })) });
  calendars.push({ ...time, dayOfMonth: 28, month: 'FEBRUARY', year: years.filter((y) => !isLeap(y)).map((y) => ({ start: y, end: y })) });
  return calendars;
}

export function scheduleSpec(t: Timing): ScheduleSpec {
  const tz = t.timezone || 'UTC';
  const p = localParts(t.start, tz);
  const time = { hour: p.hour, minute: p.minute, second: p.second };
  let calendars: CalendarSpec[];
  switch (t.recurrency) {
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
  return { calendars, timezone: tz, startAt: t.start, ...(t.end ? { endAt: t.end } : {}) };
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
  const at = (year: number, month: number, day: number) => zonedToUtc({ year, month, day, hour: p.hour, minute: p.minute, second: p.second }, tz);
  if (!t.recurrency) {
    push(t.start);
    return out.slice(0, count);
  }
  const fromLocal = localParts(new Date(after), tz);
  let cursor = Date.UTC(fromLocal.year, fromLocal.month - 1, fromLocal.day) - 86_400_000;
  for (let guard = 0; out.length < count && guard < 5000; guard += 1) {
    const d = new Date(cursor);
    const [y, m, day] = [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()];
    const due =
      t.recurrency === 'daily' ||
      (t.recurrency === 'weekly' && d.getUTCDay() === p.weekday) ||
      (t.recurrency === 'monthly' && day === Math.min(p.day, daysInMonth(y, m)));
    if (due) push(at(y, m, day));
    if (t.end && cursor > t.end.getTime() + 86_400_000) break;
    cursor += 86_400_000;
  }
  return out.slice(0, count);
}
