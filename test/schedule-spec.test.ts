/** The dev server's own next action times for our specs equal the rule computed independently. */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Client, Connection, ScheduleOverlapPolicy } from '@temporalio/client';
import { nextRuns, scheduleSpec, type Timing } from '../activities/scheduler/calendar';
import { unique } from './helpers/api';

let client: Client;
beforeAll(async () => {
  const e = inject('platformEnv');
  client = new Client({ connection: await Connection.connect({ address: e.TEMPORAL_ADDRESS }), namespace: e.TEMPORAL_NAMESPACE });
});
afterAll(async () => client?.connection.close());

describe.each<[string, Timing]>([
  ['daily in UTC', { start: new Date('2030-01-07T09:30:00Z'), recurrency: 'daily' }],
  ['weekly in Madrid', { start: new Date('2030-03-25T08:00:00Z'), recurrency: 'weekly', timezone: 'Europe/Madrid' }],
  ['monthly on the 31st', { start: new Date('2030-01-31T06:15:00Z'), recurrency: 'monthly' }],
  ['daily across DST in New York', { start: new Date('2030-03-08T14:00:00Z'), recurrency: 'daily', timezone: 'America/New_York' }],
  ['once', { start: new Date('2030-06-01T12:00:00Z') }],
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
