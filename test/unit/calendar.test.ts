import { describe, expect, it } from 'vitest';

import { isFoldTwin, minGapSeconds, nextRuns, scheduleSpec, zonedToUtc } from '../../activities/scheduler/calendar.ts';
import { parseCron } from '../../activities/scheduler/cron.ts';

const iso = (ds: Date[]) => ds.map((d) => d.toISOString());

describe('recurrence rules', () => {
  it('daily, weekly and one-off in UTC', () => {
    const start = new Date('2027-01-04T09:30:00Z'); // a Monday
    expect(iso(nextRuns({ start, recurrency: 'daily' }, start, 3))).toEqual([
      '2027-01-04T09:30:00.000Z',
      '2027-01-05T09:30:00.000Z',
      '2027-01-06T09:30:00.000Z',
    ]);
    expect(iso(nextRuns({ start, recurrency: 'weekly' }, new Date('2027-01-05T00:00:00Z'), 2))).toEqual([
      '2027-01-11T09:30:00.000Z',
      '2027-01-18T09:30:00.000Z',
    ]);
    expect(iso(nextRuns({ start }, new Date('2026-01-01T00:00:00Z'), 5))).toEqual(['2027-01-04T09:30:00.000Z']);
  });

  it('runs a monthly 31st on the last day of shorter months, Feb 29 in leap years', () => {
    const start = new Date('2027-12-31T08:00:00Z');
    expect(iso(nextRuns({ start, recurrency: 'monthly' }, start, 6))).toEqual([
      '2027-12-31T08:00:00.000Z',
      '2028-01-31T08:00:00.000Z',
      '2028-02-29T08:00:00.000Z',
      '2028-03-31T08:00:00.000Z',
      '2028-04-30T08:00:00.000Z',
      '2028-05-31T08:00:00.000Z',
    ]);
    const feb = nextRuns(
      { start: new Date('2026-01-30T08:00:00Z'), recurrency: 'monthly' },
      new Date('2026-02-01T00:00:00Z'),
      2,
    );
    expect(iso(feb)).toEqual(['2026-02-28T08:00:00.000Z', '2026-03-30T08:00:00.000Z']);
  });

  it('keeps the local time across a daylight-saving change', () => {
    const start = zonedToUtc({ year: 2027, month: 3, day: 12, hour: 9, minute: 0, second: 0 }, 'America/New_York');
    expect(start.toISOString()).toBe('2027-03-12T14:00:00.000Z'); // EST, UTC-5
    // DST starts on 2027-03-14: 09:00 EDT is 13:00 UTC.
    expect(iso(nextRuns({ start, recurrency: 'daily', timezone: 'America/New_York' }, start, 4))).toEqual([
      '2027-03-12T14:00:00.000Z',
      '2027-03-13T14:00:00.000Z',
      '2027-03-14T13:00:00.000Z',
      '2027-03-15T13:00:00.000Z',
    ]);
  });

  it('stops at the end date', () => {
    const start = new Date('2027-01-01T10:00:00Z');
    expect(nextRuns({ start, end: new Date('2027-01-03T10:00:00Z'), recurrency: 'daily' }, start, 10)).toHaveLength(3);
  });

  it('builds calendar specs in the event time zone', () => {
    const spec = scheduleSpec({
      start: new Date('2027-01-04T09:30:15Z'),
      recurrency: 'weekly',
      timezone: 'Europe/Madrid',
    });
    expect(spec.timezone).toBe('Europe/Madrid');
    expect(spec.calendars).toEqual([{ hour: 10, minute: 30, second: 15, dayOfWeek: 'MONDAY' }]);
    expect(scheduleSpec({ start: new Date('2027-05-31T00:00:00Z'), recurrency: 'monthly' }).calendars).toHaveLength(4);
  });
});

describe('cron and daylight-saving changes', () => {
  const madrid = (start: string) => ({ start: new Date(start), timezone: 'Europe/Madrid' });
  it('reads five-field cron in the time zone (weekdays at 09:00 Madrid)', () => {
    const t = { ...madrid('2031-01-01T00:00:00Z'), recurrency: 'cron' as const, cron: '0 9 * * 1-5' };
    // 2031-01-03 is a Friday; winter: UTC+1
    expect(iso(nextRuns(t, new Date('2031-01-03T00:00:00Z'), 3))).toEqual([
      '2031-01-03T08:00:00.000Z',
      '2031-01-06T08:00:00.000Z',
      '2031-01-07T08:00:00.000Z',
    ]);
    const spec = scheduleSpec(t);
    expect(spec.calendars?.[0]).toMatchObject({
      minute: [{ start: 0, end: 0 }],
      hour: [{ start: 9, end: 9 }],
      dayOfWeek: [{ start: 'MONDAY', end: 'FRIDAY' }],
    });
    expect(spec.calendars).toHaveLength(1); // 09:00 is never skipped by a clock change in Madrid
  });

  it('refuses malformed expressions and day-of-month with day-of-week', () => {
    for (const bad of [
      '0 9 * *',
      '60 9 * * *',
      '0 24 * * *',
      '0 9 1 * 1',
      'a b c d e',
      '0 9 * * 8',
      '*/0 * * * *',
      '5-1 * * * *',
    ])
      expect(typeof parseCron(bad), bad).toBe('string');
    expect(parseCron('*/15 9-17 * 1,7 0,7')).toMatchObject({
      minute: [0, 15, 30, 45],
      hour: [9, 10, 11, 12, 13, 14, 15, 16, 17],
      month: [1, 7],
      dayOfWeek: [0],
    });
  });

  // Europe/Madrid: 2031-03-30 02:00 → 03:00 (02:30 does not exist); 2031-10-26 03:00 → 02:00 (02:30 twice).
  it('spring forward: a 02:30 run that day runs once, at 03:30 (shifted by the gap)', () => {
    for (const t of [
      { ...madrid('2031-03-28T12:00:00Z'), recurrency: 'cron' as const, cron: '30 2 * * *' },
      { ...madrid('2031-03-29T01:30:00Z'), recurrency: 'daily' as const },
    ]) {
      expect(iso(nextRuns(t, new Date('2031-03-29T00:00:00Z'), 3))).toEqual([
        '2031-03-29T01:30:00.000Z',
        '2031-03-30T01:30:00.000Z',
        '2031-03-31T00:30:00.000Z',
      ]);
      // The Schedule gets that day at 03:30 as its own entry (Temporal would skip 02:30 that day).
      expect(scheduleSpec(t).calendars).toContainEqual({
        year: 2031,
        month: 'MARCH',
        dayOfMonth: 30,
        hour: 3,
        minute: [{ start: 30, end: 30 }],
        second: 0,
      });
    }
  });

  it('fall back: a 02:30 run that day runs once, at its second occurrence', () => {
    const t = { ...madrid('2031-10-20T12:00:00Z'), recurrency: 'cron' as const, cron: '30 2 * * *' };
    expect(iso(nextRuns(t, new Date('2031-10-25T00:00:00Z'), 3))).toEqual([
      '2031-10-25T00:30:00.000Z',
      '2031-10-26T01:30:00.000Z',
      '2031-10-27T01:30:00.000Z',
    ]);
    // New York: 01:30 is repeated on 2031-11-02 (05:30Z EDT, 06:30Z EST); the first is the twin.
    const ny = {
      start: new Date('2031-10-20T12:00:00Z'),
      timezone: 'America/New_York',
      recurrency: 'cron' as const,
      cron: '30 1 * * *',
    };
    expect(iso(nextRuns(ny, new Date('2031-11-01T12:00:00Z'), 2))).toEqual([
      '2031-11-02T06:30:00.000Z',
      '2031-11-03T06:30:00.000Z',
    ]);
    expect(isFoldTwin(ny, new Date('2031-11-02T05:30:00Z'))).toBe(true);
    expect(isFoldTwin(ny, new Date('2031-11-02T06:30:00Z'))).toBe(false);
    expect(isFoldTwin(ny, new Date('2031-11-01T05:30:00Z'))).toBe(false);
  });
});

describe("the smallest gap between runs (a basic saver's minimum interval)", () => {
  const start = new Date('2031-01-05T09:30:00Z');
  const gap = (
    cron: string | null,
    timezone?: string,
    recurrency: 'daily' | 'weekly' | 'monthly' | 'cron' | null = 'cron',
  ) => minGapSeconds({ start, recurrency, cron, timezone });

  it("cron: between the times of a day, and from a day's last time to the next day's first", () => {
    expect(gap('* * * * *')).toBe(60);
    expect(gap('*/20 8,17 * * *')).toBe(1200);
    expect(gap('0 9,17 * * 1-5')).toBe(8 * 3600);
    expect(gap('0 * * * *')).toBe(3600);
    expect(gap('30 0,23 * * *')).toBe(3600); // 23:30 to 00:30 the next day
    // Not on consecutive days (Mondays only): the next run is at least two days on.
    expect(gap('30 0,23 * * 1')).toBe(23 * 3600);
    expect(gap('0 12 * * 1,3,5')).toBe(2 * 86_400);
    expect(gap('0 12 1,15 * *')).toBe(2 * 86_400); // a lower bound: never closer
    expect(gap('0 12 1,31 * *')).toBe(86_400); // the 31st, then the 1st
  });

  it('daily, weekly, monthly and one-off', () => {
    expect(gap(null, undefined, 'daily')).toBe(86_400);
    expect(gap(null, undefined, 'weekly')).toBe(7 * 86_400);
    expect(gap(null, undefined, 'monthly')).toBe(28 * 86_400);
    expect(gap(null, undefined, null)).toBe(Number.POSITIVE_INFINITY);
    // A daily run is 23 real hours after the previous one across a spring-forward night.
    expect(gap(null, 'Europe/Madrid', 'daily')).toBe(23 * 3600);
  });

  it('a spring-forward day shortens gaps across the missing hour, as the runs really happen', () => {
    // Madrid: 02:00 becomes 03:00. 01:00 and 03:00 are two hours apart on the wall, one in fact.
    expect(gap('0 1,3 * * *', 'Europe/Madrid')).toBe(3600);
    expect(gap('0 1,3 * * *', 'UTC')).toBe(2 * 3600);
    // Hourly stays hourly: the skipped 02:30 runs at 03:30, with the 03:30 run (one run).
    expect(gap('30 * * * *', 'Europe/Madrid')).toBe(3600);
    // The spring-forward rule checked against the runs nextRuns computes for that day.
    const t = {
      start: new Date('2031-03-29T00:00:00Z'),
      recurrency: 'cron' as const,
      cron: '0 1,3 * * *',
      timezone: 'Europe/Madrid',
    };
    const [a, b] = nextRuns(t, new Date('2031-03-30T00:00:00Z'), 2);
    expect((b.getTime() - a.getTime()) / 1000).toBe(minGapSeconds(t));
  });
});
