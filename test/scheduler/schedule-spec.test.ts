/** The dev server's own next action times for our specs equal the rule computed independently. */
import { Client, Connection, ScheduleOverlapPolicy } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

import { isFoldTwin, nextRuns, scheduleSpec, type Timing } from '../../activities/scheduler/calendar.ts';
import { unique } from '../helpers/api.ts';

let client: Client;
beforeAll(async () => {
  const e = inject('platformEnv');
  client = new Client({
    connection: await Connection.connect({ address: e.TEMPORAL_ADDRESS }),
    namespace: e.TEMPORAL_NAMESPACE,
  });
});
afterAll(async () => client?.connection.close());

describe.each<[string, Timing]>([
  ['daily in UTC', { start: new Date('2030-01-07T09:30:00Z'), recurrency: 'daily' }],
  ['weekly in Madrid', { start: new Date('2030-03-25T08:00:00Z'), recurrency: 'weekly', timezone: 'Europe/Madrid' }],
  ['monthly on the 31st', { start: new Date('2030-01-31T06:15:00Z'), recurrency: 'monthly' }],
  [
    'daily across DST in New York',
    { start: new Date('2030-03-08T14:00:00Z'), recurrency: 'daily', timezone: 'America/New_York' },
  ],
  ['once', { start: new Date('2030-06-01T12:00:00Z') }],
  [
    'cron on weekdays in Madrid',
    { start: new Date('2031-01-01T00:00:00Z'), recurrency: 'cron', cron: '0 9 * * 1-5', timezone: 'Europe/Madrid' },
  ],
  [
    'cron every 20 minutes of two hours',
    { start: new Date('2031-01-01T00:00:00Z'), recurrency: 'cron', cron: '*/20 8,17 * 1,6 *', timezone: 'Asia/Tokyo' },
  ],
  // Europe/Madrid 2031-03-30: 02:00 → 03:00; 02:30 runs once that day, at 03:30 (by itself Temporal skips it).
  [
    'cron 02:30 across spring forward',
    { start: new Date('2031-03-28T12:00:00Z'), recurrency: 'cron', cron: '30 2 * * *', timezone: 'Europe/Madrid' },
  ],
  [
    'daily 02:30 across spring forward',
    { start: new Date('2031-03-29T01:30:00Z'), recurrency: 'daily', timezone: 'Europe/Madrid' },
  ],
  [
    'cron 02:00-02:59 across spring forward in New York',
    { start: new Date('2031-03-08T00:00:00Z'), recurrency: 'cron', cron: '0,45 2 * * *', timezone: 'America/New_York' },
  ],
  // 2031-10-26: 03:00 → 02:00; 02:30 happens twice and runs once, at the second.
  [
    'cron 02:30 across fall back',
    { start: new Date('2031-10-24T12:00:00Z'), recurrency: 'cron', cron: '30 2 * * *', timezone: 'Europe/Madrid' },
  ],
])('Temporal Schedule spec: %s', (_name, timing) => {
  it('has the next action times the rule gives', async () => {
    const scheduleId = unique('spec-test');
    const handle = await client.schedule.create({
      scheduleId,
      spec: scheduleSpec(timing),
      action: { type: 'startWorkflow', workflowType: 'noSuchWorkflow', taskQueue: 'spec-tests-never-polled' },
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
    });
    try {
      const { info } = await handle.describe();
      const expected = nextRuns(timing, new Date(), info.nextActionTimes.length);
      expect(info.nextActionTimes.length).toBeGreaterThan(0);
      expect(info.nextActionTimes.map((d) => d.toISOString())).toEqual(expected.map((d) => d.toISOString()));
    } finally {
      await handle.delete();
    }
  });
});

describe('Temporal Schedule spec: a time repeated when the clock goes back, behind UTC', () => {
  it('Temporal starts both occurrences; the first is the twin the run skips, the rest are the rule', async () => {
    // America/New_York 2031-11-02: 02:00 EDT → 01:00 EST, so 01:30 is 05:30Z and 06:30Z.
    const timing: Timing = {
      start: new Date('2031-11-01T00:00:00Z'),
      recurrency: 'cron',
      cron: '30 1 * * *',
      timezone: 'America/New_York',
    };
    const handle = await client.schedule.create({
      scheduleId: unique('spec-test'),
      spec: scheduleSpec(timing),
      action: { type: 'startWorkflow', workflowType: 'noSuchWorkflow', taskQueue: 'spec-tests-never-polled' },
    });
    try {
      const times = (await handle.describe()).info.nextActionTimes;
      expect(times.slice(0, 3).map((d) => d.toISOString())).toEqual([
        '2031-11-01T05:30:00.000Z',
        '2031-11-02T05:30:00.000Z',
        '2031-11-02T06:30:00.000Z',
      ]);
      const kept = times.filter((d) => !isFoldTwin(timing, d));
      expect(kept.map((d) => d.toISOString())).toEqual(
        nextRuns(timing, new Date(), kept.length).map((d) => d.toISOString()),
      );
    } finally {
      await handle.delete();
    }
  });
});
