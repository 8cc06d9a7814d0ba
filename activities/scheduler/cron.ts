/**
 * Five-field cron (`minute hour day-of-month month day-of-week`, numbers, `*`, lists, ranges and
 * `/step`; day of week 0–7, 0 and 7 both Sunday), read in the event's time zone. Temporal reads a
 * restricted day of month together with a restricted day of week as "both" where classic cron
 * means "either", so an expression restricting both is refused rather than run differently.
 */
export interface Cron {
  minute: number[];
  hour: number[];
  dayOfMonth: number[] | null; // null: any
  month: number[] | null; // 1-12
  dayOfWeek: number[] | null; // 0 = Sunday
}

const FIELDS = [
  ['minute', 0, 59],
  ['hour', 0, 23],
  ['day of month', 1, 31],
  ['month', 1, 12],
  ['day of week', 0, 7],
] as const;

function field(text: string, name: string, min: number, max: number): number[] | string {
  const out = new Set<number>();
  for (const item of text.split(',')) {
    const m = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(item);
    if (!m) return `${name}: "${item}" is not a number, range, list, * or step`;
    const lo = m[1] === '*' ? min : Number(m[2]);
    const hi = m[1] === '*' ? max : m[3] !== undefined ? Number(m[3]) : m[4] !== undefined ? max : lo;
    const step = m[4] !== undefined ? Number(m[4]) : 1;
    if (lo < min || hi > max || lo > hi) return `${name}: "${item}" is outside ${min}-${max}`;
    if (step < 1) return `${name}: the step must be at least 1`;
    for (let v = lo; v <= hi; v += step) out.add(v);
  }
  return [...out].sort((a, b) => a - b);
}

/** The parsed expression, or the reason it is refused. */
export function parseCron(expr: string): Cron | string {
  const parts = expr.trim().split(/\s+/);
  if (parts.length !== 5) return 'must have 5 fields: minute hour day-of-month month day-of-week';
  const sets: number[][] = [];
  for (let i = 0; i < 5; i += 1) {
    const [name, min, max] = FIELDS[i];
    const v = field(parts[i], name, min, max);
    if (typeof v === 'string') return v;
    sets.push(v);
  }
  const any = (i: number) => parts[i] === '*';
  if (!any(2) && !any(4)) return 'restrict either the day of month or the day of week, not both';
  return {
    minute: sets[0],
    hour: sets[1],
    dayOfMonth: any(2) ? null : sets[2],
    month: any(3) ? null : sets[3],
    dayOfWeek: any(4) ? null : [...new Set(sets[4].map((d) => d % 7))].sort((a, b) => a - b),
  };
}

/** Whether the local date (month 1-12, weekday 0 = Sunday) is one of the expression's days. */
export const cronDay = (c: Cron, month: number, day: number, weekday: number) =>
  (!c.month || c.month.includes(month)) &&
  (!c.dayOfMonth || c.dayOfMonth.includes(day)) &&
  (!c.dayOfWeek || c.dayOfWeek.includes(weekday));

/** Consecutive values as ranges, for a compact calendar spec. */
export function ranges<T = number>(values: number[], named?: (v: number) => T): { start: T; end: T }[] {
  const name = named ?? ((v: number) => v as unknown as T);
  const out: { start: T; end: T }[] = [];
  let i = 0;
  while (i < values.length) {
    let j = i;
    while (j + 1 < values.length && values[j + 1] === values[j]! + 1) j += 1;
    out.push({ start: name(values[i]!), end: name(values[j]!) });
    i = j + 1;
  }
  return out;
}
