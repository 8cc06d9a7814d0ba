/**
 * Drills of the scan workflow on a task queue of its own, served by worker processes this test
 * starts: a worker killed (SIGKILL) while a scan waits for validation, a new worker, the
 * validation, points credited once; and a pending scan expiring at its deadline.
 */
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

import { config, parseEnv, setConfig } from '../../activities/core/config.ts';
import { closeRuntime, initRuntime } from '../../activities/core/runtime.ts';
import { storeUpload } from '../../activities/images/images.ts';
import {
  processedUpdate,
  type ScanInput,
  type ScanView,
  ticketScanWorkflow,
  type ValidateInput,
  validateUpdate,
} from '../../workflows/ticket-scan.ts';
import { basicUser, call, unique } from '../helpers/api.ts';
import { drillWorkerRunning, killDrillWorkers, startDrillWorker } from '../helpers/drill-worker.ts';
import { renderReceipt } from '../helpers/receipts.ts';
import { balance, groceries, shop } from '../helpers/shop.ts';

const queue = unique('scan-drill');
let client: Client;

const startWorker = () => startDrillWorker(queue);

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
  killDrillWorkers();
  await client?.connection.close();
  await closeRuntime();
});

async function startScan(
  s: Awaited<ReturnType<typeof shop>>,
  user: { user_id: string; idp_id: string },
  deadline_hours: number,
  date: string,
) {
  const spec = groceries(date);
  spec.items[3] = { name: 'Sourdough Bread', price: 5.99 }; // off the venue's price: needs validation
  const scan_id = unique('scan_drill');
  const upload = await storeUpload({
    media_id: scan_id,
    organization_id: s.t.organization_id,
    user_id: user.user_id,
    filename: 'drill.png',
    body: await renderReceipt(spec),
    content_type: 'image/png',
  });
  const input: ScanInput = {
    scan_id,
    source: 'receipt',
    upload,
    organization_id: s.t.organization_id,
    user_id: user.user_id,
    idp_id: user.idp_id,
    brand_id: null,
    venue_id: String(s.venue.id),
    threshold: 0.8,
    deadline_hours,
    image_base_url: `${config().publicUrl}/api/ticket-scan/loyalty/ticket-scan`,
  };
  const handle = await client.workflow.start(ticketScanWorkflow, {
    taskQueue: queue,
    workflowId: `ticket-scan:${scan_id}`,
    args: [input],
  });
  return { handle, scan: await handle.executeUpdate(processedUpdate) };
}

describe('scan drills', () => {
  it('survives a killed worker while waiting for validation and credits the points once', async () => {
    const s = await shop();
    const user = await basicUser(s.t);
    const first = await startWorker();
    const { handle, scan } = await startScan(s, user, 24, '2026-11-10');
    expect(scan.status).toBe('pending_validation');
    const bread = scan.products.find((p) => p.validation_status === 'pending')!;

    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    // The admin validates while no worker runs: the Update waits for one.
    const update: ValidateInput = {
      validations: [{ product_id: bread.id, is_valid: true }],
      validated_by: s.t.admin.user_id,
    };
    const validated = handle.executeUpdate(validateUpdate, { args: [update] });
    await new Promise((r) => setTimeout(r, 1000));
    await startWorker();
    const done = await validated;
    expect(done).toMatchObject({ status: 'completed', points_processed: true, total_points: 50 });
    expect(await handle.result()).toMatchObject({ status: 'completed' });
    expect(await balance(s.t, user.user_id)).toBe(50);
    const history = await call('GET', `/loyalty/points/${user.user_id}/history`, { key: s.t.adminKey });
    expect(history.body.entries ?? history.body.history).toHaveLength(1);
    // the mirror answers once the workflow is done
    expect(
      (await call('GET', `/api/ticket-scan/loyalty/ticket-scan/${scan.id}`, { key: s.t.adminKey })).body,
    ).toMatchObject({ status: 'completed', points_processed: true });
  });

  it('rejects a scan still pending at its deadline, crediting nothing', async () => {
    const s = await shop();
    const user = await basicUser(s.t);
    if (!drillWorkerRunning()) await startWorker();
    const { handle, scan } = await startScan(s, user, 2 / 3600, '2026-11-11');
    expect(scan.status).toBe('pending_validation');
    const out = (await handle.result()) as ScanView;
    expect(out).toMatchObject({ status: 'rejected', total_points: 0, points_processed: false });
    expect(out.rejection_reason).toMatch(/deadline/);
    expect(out.products.filter((p) => p.needs_validation).every((p) => p.validation_status === 'rejected')).toBe(true);
    const seen = await call('GET', `/api/ticket-scan/loyalty/ticket-scan/${scan.id}`, { key: s.t.adminKey });
    expect(seen.body.status).toBe('rejected');
    const late = await call('POST', `/api/ticket-scan/loyalty/ticket-scan/${scan.id}/validate`, {
      key: s.t.adminKey,
      json: { validations: [{ product_id: scan.products[0].id, is_valid: true }] },
    });
    expect(late.status).toBe(400);
    expect(await balance(s.t, user.user_id)).toBe(0);
  });
});
