/**
 * The drill: an event's Schedule comes due several times while no worker polls its task queue;
 * when a worker starts, the missed event runs exactly once (overlap policy SKIP).
 * Runs in this process with a worker of its own on a task queue of its own.
 */
import { fileURLToPath } from 'node:url';

import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

import { parseEnv, setConfig } from '../../activities/core/config.ts';
import { closeRuntime, initRuntime } from '../../activities/core/runtime.ts';
import * as activities from '../../activities/workflow-activities.ts';
import { wrapActivities } from '../../workers/activity-wrapper.ts';
import { call, newTenant, unique } from '../helpers/api.ts';

let client: Client;
beforeAll(async () => {
  const env = inject('platformEnv');
  setConfig(parseEnv({ ...process.env, ...env }));
  await initRuntime();
  client = new Client({
    connection: await Connection.connect({ address: env.TEMPORAL_ADDRESS }),
    namespace: env.TEMPORAL_NAMESPACE,
  });
});
afterAll(async () => {
  await client?.connection.close();
  await closeRuntime();
});

describe('scheduler drill', () => {
  it('runs a missed event once when a worker comes back, not once per missed time', async () => {
    const t = await newTenant();
    const idp = unique('drill');
    const ev = (
      await call('POST', '/api/scheduler-service/events', {
        key: t.adminKey,
        json: {
          idp_id: idp,
          type_of_event: 'loyalty',
          recurrency: 'daily',
          start_event: '2031-01-01T10:00:00Z',
          metadata: { action_type: 'purchase' },
        },
      })
    ).body.event;
    const queue = unique('drill-queue');
    const handle = client.schedule.getHandle(`event:${ev.id}`);
    // Due every 2 s, on a task queue nobody polls yet: the worker is "down".
    await handle.update((prev) => ({
      ...prev,
      spec: { intervals: [{ every: '2 seconds' }] },
      action: { ...prev.action, taskQueue: queue } as typeof prev.action,
    }));
    await new Promise((r) => setTimeout(r, 7000));
    await handle.pause('drill: no more due times while the worker comes back');
    const missed = (await handle.describe()).info;
    expect(missed.numActionsTaken).toBe(1); // the first due time started a run that waits for a worker
    expect(missed.numActionsSkippedOverlap).toBeGreaterThanOrEqual(2); // the later ones were skipped

    const worker = await Worker.create({
      connection: await NativeConnection.connect({ address: inject('platformEnv').TEMPORAL_ADDRESS }),
      namespace: inject('platformEnv').TEMPORAL_NAMESPACE,
      taskQueue: queue,
      workflowsPath: fileURLToPath(new URL('../../workflows/index.ts', import.meta.url)),
      activities: wrapActivities(activities),
    });
    const running = worker.run();
    try {
      let runs: any[] = [];
      for (let i = 0; i < 100 && runs.length === 0; i += 1) {
        runs = (await call('GET', `/scheduler/events/${ev.id}/runs`, { key: t.adminKey })).body.runs;
        if (!runs.length) await new Promise((r) => setTimeout(r, 200));
      }
      await new Promise((r) => setTimeout(r, 2000));
      runs = (await call('GET', `/scheduler/events/${ev.id}/runs`, { key: t.adminKey })).body.runs;
      expect(runs).toHaveLength(1);
      expect(runs[0]).toMatchObject({ outcome: 'success', result: { points_awarded: 10 } });
      expect((await call('GET', `/loyalty/points/${idp}`, { key: t.adminKey })).body.points).toBe(10);
    } finally {
      worker.shutdown();
      await running;
      await handle.delete();
    }
  }, 90_000);
});
