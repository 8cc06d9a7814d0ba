/**
 * The program's calendar in its time zone (rules.time_zone): the local date and hour of an
 * instant, and the instant a local midnight falls on. Intl does the zone arithmetic.
 */
const formats = new Map<string, Intl.DateTimeFormat>();

function formatOf(tz: string): Intl.DateTimeFormat {
  let f = formats.get(tz);
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
    formats.set(tz, f);
  }
  return f;
}

/** Whether the runtime knows the IANA zone. */
export function isTimeZone(tz: string): boolean {
  try {
    formatOf(tz);
    return true;
  } catch {
    return false;
  }
}

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
  const p = Object.fromEntries(
    formatOf(tz)
      .formatToParts(at)
      .map((x) => [x.type, x.value]),
  );
  return {
    year: Number(p.year),
    month: Number(p.month),
    day: Number(p.day),
    hour: Number(p.hour),
    minute: Number(p.minute),
    second: Number(p.second),
    weekday: p.weekday.toLowerCase().slice(0, 3),
  };
}

/** The local date `YYYY-MM-DD` of an instant. */
export function localDate(at: Date, tz: string): string {
  const t = localTime(at, tz);
  return `${t.year}-${String(t.month).padStart(2, '0')}-${String(t.day).padStart(2, '0')}`;
}

const offsetAt = (at: number, tz: string) => {
  const t = localTime(new Date(at), tz);
  return Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second) - Math.floor(at / 1000) * 1000;
};

/** The instant of local midnight starting the day (month 1-12; out-of-range months and days roll over). */
export function localMidnight(year: number, month: number, day: number, tz: string): Date {
  const wall = Date.UTC(year, month - 1, day);
  let at = wall - offsetAt(wall, tz);
  at = wall - offsetAt(at, tz);
  return new Date(at);
}

/**
 * The instant `months` calendar months after `at` in the zone, at the same local time (the day
 * clamped to the month's last).
 */
export function addMonths(at: Date, months: number, tz: string): Date {
  const t = localTime(at, tz);
  const first = new Date(Date.UTC(t.year, t.month - 1 + months, 1));
  const y = first.getUTCFullYear();
  const m = first.getUTCMonth() + 1;
  const last = new Date(Date.UTC(y, m, 0)).getUTCDate();
  const midnight = localMidnight(y, m, Math.min(t.day, last), tz);
  return new Date(midnight.getTime() + ((t.hour * 60 + t.minute) * 60 + t.second) * 1000 + at.getMilliseconds());
}
