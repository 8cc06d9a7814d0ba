/**
 * Wall-clock time in an IANA time zone: an instant's local parts, and the instant of a local
 * wall-clock time (Intl does the zone arithmetic). Shared by the scheduler's recurrences and the
 * loyalty program's calendar.
 */
export interface Parts {
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
export function localParts(date: Date, tz: string): Parts {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      weekday: 'short',
    });
    formatters.set(tz, f);
  }
  const parts = f.formatToParts(date);
  const get = (type: string) => parts.find((p) => p.type === type)!.value;
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

export const wallMs = (p: Omit<Parts, 'weekday'>) => Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
/** The zone's offset from UTC at an instant, in ms. */
export const offsetAt = (t: number, tz: string) => wallMs(localParts(new Date(t), tz)) - t;

/**
 * The UTC instant of a wall-clock time in a zone. A time the clock skips (spring forward) is
 * shifted forward by the gap (02:30 → 03:30); a time the clock shows twice (fall back) is its
 * second occurrence, after the clock went back. The Schedule's spec follows the same rule.
 */
export function zonedToUtc(p: Omit<Parts, 'weekday'>, tz: string): Date {
  const wall = wallMs(p);
  const before = offsetAt(wall - 43_200_000, tz);
  const after = offsetAt(wall + 43_200_000, tz);
  const valid = [wall - before, wall - after].filter((t) => wallMs(localParts(new Date(t), tz)) === wall);
  if (!valid.length) return new Date(wall - before);
  return new Date(Math.max(...valid));
}
