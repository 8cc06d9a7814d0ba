/**
 * Outgoing events when processes die: a worker killed (SIGKILL) in the middle of an attempt, a
 * process that died between a ledger change and its event, or between recording an event and
 * starting its deliveries (the sweep finishes both), and an endpoint failing for days.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

import { parseEnv, setConfig } from '../../activities/core/config.ts';
import { closeRuntime, initRuntime } from '../../activities/core/runtime.ts';
import { deliveryId } from '../../activities/events/emit.ts';
import { attemptDelivery, eventId, sweepEvents } from '../../activities/events/index.ts';
import { PlatformEvent, WebhookEndpoint } from '../../activities/events/models.ts';
import { stopRevocationWatcher } from '../../activities/identity/api-keys.ts';
import { creditPoints } from '../../activities/loyalty/index.ts';
import { LedgerEntry } from '../../activities/loyalty/models.ts';
import { basicUser, call, newTenant, unique, until } from '../helpers/api.ts';
import { drillWorkerRunning, killDrillWorkers, startDrillWorker } from '../helpers/drill-worker.ts';
import { addEndpoint, receivedAt, type Receiver, startReceiver, verified } from '../helpers/receiver.ts';

const queue = unique('events-drill');
let rx: Receiver;

const startWorker = () => startDrillWorker(queue);

// This file's own deliveries go to the drill's task queue: only its workers run them.
beforeAll(async () => {
  setConfig(parseEnv({ ...process.env, ...inject('platformEnv'), TEMPORAL_TASK_QUEUE: queue }));
  await initRuntime();
  rx = await startReceiver();
});
afterAll(async () => {
  killDrillWorkers();
  await rx.close();
  await stopRevocationWatcher();
  await closeRuntime();
});

const deliveries = async (key: string, endpoint_id: string) =>
  (await call('GET', `/api/webhooks/deliveries?endpoint_id=${endpoint_id}`, { key })).body.deliveries;

describe('events when processes die', () => {
  it('delivers an event whose worker was killed (SIGKILL) during the attempt, once recorded', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const path = unique('/killed');
    rx.plan(path, ['hang']); // the first attempt never gets an answer: the worker dies meanwhile
    const ep = await addEndpoint(t, rx, path, ['points.credited']);
    const first = await startWorker();
    const credit = await creditPoints({
      organization_id: t.organization_id,
      user_id: u.user_id,
      points: 7,
      reason: 'action',
      operation_id: unique('drill'),
    });
    await receivedAt(rx, path, 1, 30_000);
    first.kill('SIGKILL');
    await startWorker();
    const got = await receivedAt(rx, path, 2, 60_000);
    expect(got[1].headers['webhook-id']).toBe(got[0].headers['webhook-id']);
    expect(verified(ep.secret, got[1])).toMatchObject({
      type: 'points.credited',
      data: { entry_id: credit.entry.entry_id, amount: 7 },
    });
    const [d] = await until(
      'the delivery recorded',
      () => deliveries(t.adminKey, ep.id),
      (x) => x[0]?.status === 'succeeded',
      10_000,
    );
    expect(d.attempts.at(-1).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1000));
    expect(rx.received(path)).toHaveLength(2);
  }, 120_000);

  it('records the event of a ledger change whose process died before recording it (the sweep)', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const path = unique('/swept');
    const ep = await addEndpoint(t, rx, path, ['points.credited']);
    if (!drillWorkerRunning()) await startWorker();
    // The entry as the ledger writes it, marked, with no event recorded: what a crash leaves.
    const operation_id = unique('crashed');
    await LedgerEntry.create({
      _id: `${t.organization_id}|${u.user_id}|1`,
      entry_id: unique('pte'),
      organization_id: t.organization_id,
      user_id: u.user_id,
      seq: 1,
      amount: 12,
      balance_after: 12,
      reason: 'action',
      operation_id,
      event_pending: true,
    });
    const id = eventId(t.organization_id, 'points.credited', operation_id);
    expect(await PlatformEvent.findById(id)).toBeNull();
    const swept = await sweepEvents(new Date(Date.now() + 15_000));
    expect(swept.recorded.loyalty).toBeGreaterThanOrEqual(1);
    const [got] = await receivedAt(rx, path, 1, 30_000);
    expect(verified(ep.secret, got)).toMatchObject({
      id,
      type: 'points.credited',
      data: { operation_id, amount: 12, balance_after: 12, seq: 1 },
    });
    expect(
      (await LedgerEntry.findOne({ organization_id: t.organization_id, operation_id }).lean())?.event_pending,
    ).toBeUndefined();
    // Swept again: nothing twice.
    await sweepEvents(new Date(Date.now() + 15_000));
    await new Promise((r) => setTimeout(r, 1500));
    expect(rx.received(path)).toHaveLength(1);
  }, 60_000);

  it('starts the deliveries of an event recorded by a process that died before fanning it out (the sweep)', async () => {
    const t = await newTenant();
    const path = unique('/unfanned');
    const ep = await addEndpoint(t, rx, path);
    if (!drillWorkerRunning()) await startWorker();
    const id = eventId(t.organization_id, 'points.expired', 'crash-test');
    const body = JSON.stringify({
      id,
      type: 'points.expired',
      created_at: new Date().toISOString(),
      organization_id: t.organization_id,
      data: { note: 'recorded before a crash' },
    });
    await PlatformEvent.create({
      _id: id,
      organization_id: t.organization_id,
      type: 'points.expired',
      body,
      fanned_out: false,
      created_at: new Date(),
    });
    await sweepEvents(new Date(Date.now() + 15_000));
    const [got] = await receivedAt(rx, path, 1, 30_000);
    expect(verified(ep.secret, got).id).toBe(id);
    expect((await PlatformEvent.findById(id).lean())?.fanned_out).toBe(true);
  }, 60_000);

  it('disables an endpoint that has failed without a success for WEBHOOK_DISABLE_AFTER_DAYS, saying why', async () => {
    const t = await newTenant();
    const path = unique('/failing');
    rx.plan(path, [500]);
    const ep = await addEndpoint(t, rx, path);
    await WebhookEndpoint.updateOne({ _id: ep.id }, { $set: { failing_since: new Date(Date.now() - 6 * 86_400_000) } });
    const event_id = eventId(t.organization_id, 'points.credited', 'failing-test');
    await PlatformEvent.create({
      _id: event_id,
      organization_id: t.organization_id,
      type: 'points.credited',
      body: JSON.stringify({ id: event_id }),
      fanned_out: true,
      created_at: new Date(),
    });
    const out = await attemptDelivery({
      delivery_id: deliveryId(event_id, ep.id),
      organization_id: t.organization_id,
      endpoint_id: ep.id,
      event_id,
      event_type: 'points.credited',
      attempt: 3,
      next_delay_ms: 60_000,
    });
    expect(out).toEqual({ outcome: 'failed', status: 500 });
    const e = (await call('GET', `/api/webhooks/endpoints/${ep.id}`, { key: t.adminKey })).body.endpoint;
    expect(e.enabled).toBe(false);
    expect(e.disabled_reason).toMatch(/no successful delivery since .* \(5 days\)/);
    const [d] = await deliveries(t.adminKey, ep.id);
    expect(d).toMatchObject({ status: 'failed', attempts: [{ status: 500 }] });
    expect(d.final_reason).toMatch(/5 days/);
  });
});
