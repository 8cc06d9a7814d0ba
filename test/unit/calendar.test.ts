import { describe, expect, it } from 'vitest';
import { nextRuns, scheduleSpec, zonedToUtc } from '../../activities/scheduler/calendar';

const iso = (ds: Date[]) => ds.map((d) => d.toISOString());

describe('recurrence rules', () => {
  it('daily, weekly and one-off in UTC', () => {
    const start = new Date('2027-01-04T09:30:00Z'); // a Monday
    expect(iso(nextRuns({ start, recurrency: 'daily' }, start, 3))).toEqual(['2027-01-04T09:30:00.000Z', '2027-01-05T09:30:00.000Z', '2027-01-06T09:30:00.000Z']);
    expect(iso(nextRuns({ start, recurrency: 'weekly' }, new Date('2027-01-05T00:00:00Z'), 2))).toEqual(['2027-01-11T09:30:00.000Z', '2027-01-18T09:30:00.000Z']);
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
    const feb = nextRuns({ start: new Date('2026-01-30T08:00:00Z'), recurrency: 'monthly' }, new Date('2026-02-01T00:00:00Z'), 2);
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
    const spec = scheduleSpec({ start: new Date('2027-01-04T09:30:15Z'), recurrency: 'weekly', timezone: 'Europe/Madrid' });
    expect(spec.timezone).toBe('Europe/Madrid');
    expect(spec.calendars).toEqual([{ hour: 10, minute: 30, second: 15, dayOfWeek: 'MONDAY' }]);
    expect(scheduleSpec({ start: new Date('2027-05-31T00:00:00Z'), recurrency: 'monthly' }).calendars).toHaveLength(4);
  });
});
