/**
 * The scan workflow owns its record: a scan is listed (`processing`) from its run's first step,
 * and a run that fails, or that an operator cancels, drops the record before it ends, so the scan
 * is not listed. The workflow runs in this process on a task queue of its own, with the real
 * record keeping activities and a receipt reader this test holds and then fails (a scan through
 * the edge reads too fast to be seen in progress).
 */
import { fileURLToPath } from 'node:url';

import { Context } from '@temporalio/activity';
import {
  Client,
  Connection,
  WorkflowFailedError,
  WorkflowUpdateFailedError,
  WorkflowUpdateStage,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

import { config, parseEnv, setConfig } from '../../activities/core/config.ts';
import { closeRuntime, initRuntime } from '../../activities/core/runtime.ts';
import { dropScanPlaceholder, mirrorScan, recordScanStarted } from '../../activities/scanning/index.ts';
import { TicketScan } from '../../activities/scanning/models.ts';
import { wrapActivities } from '../../workers/activity-wrapper.ts';
import { processedUpdate, type ScanInput, ticketScanWorkflow } from '../../workflows/ticket-scan.ts';
import { basicUser, call, newTenant, unique, until } from '../helpers/api.ts';

const L = '/api/ticket-scan/loyalty/ticket-scan';
const queue = unique('scan-record');
/** The held reads, by scan id: the test settles each one. */
const reads = new Map<string, { fail(err: Error): void }>();
const unexpected = async () => {
  throw ApplicationFailure.nonRetryable('not reached in this test');
};
const activities = {
  recordScanStarted,
  dropScanPlaceholder,
  mirrorScan,
  // held until the test fails it, or until the run is cancelled
  readReceipt: (upload: { media_id: string }) =>
    Promise.race([
      new Promise<never>((_, reject) => reads.set(upload.media_id, { fail: reject })),
      Context.current().cancelled,
    ]),
  discardUpload: async () => undefined,
  analyseScan: unexpected,
  creditScan: unexpected,
};

let client: Client;
let worker: Worker;
let running: Promise<void>;
beforeAll(async () => {
  const env = inject('platformEnv');
  setConfig(parseEnv({ ...process.env, ...env }));
  await initRuntime();
  client = new Client({
    connection: await Connection.connect({ address: env.TEMPORAL_ADDRESS }),
    namespace: env.TEMPORAL_NAMESPACE,
  });
  worker = await Worker.create({
    connection: await NativeConnection.connect({ address: env.TEMPORAL_ADDRESS }),
    namespace: env.TEMPORAL_NAMESPACE,
    taskQueue: queue,
    workflowsPath: fileURLToPath(new URL('../../workflows/ticket-scan.ts', import.meta.url)),
    activities: wrapActivities(activities),
  });
  running = worker.run();
});
afterAll(async () => {
  worker?.shutdown();
  await running;
  await client?.connection.close();
  await closeRuntime();
});

async function startScan(organization_id: string, user: { user_id: string; idp_id: string }) {
  const scan_id = unique('scan_record');
  const input: ScanInput = {
    scan_id,
    source: 'ticket_scan',
    upload: {
      media_id: scan_id,
      organization_id,
      user_id: user.user_id,
      filename: 'ticket',
      original_path: `${organization_id}/${user.user_id}/originals/${scan_id}-ticket`,
    },
    organization_id,
    user_id: user.user_id,
    idp_id: user.idp_id,
    brand_id: null,
    venue_id: null,
    threshold: 0.8,
    deadline_hours: 24,
    image_base_url: `${config().publicUrl}${L}`,
  };
  // A short workflow task: the task held open by the read is heartbeated (completed) after 1.6 s,
  // so an Update sent meanwhile is accepted while the read still runs.
  const handle = await client.workflow.start(ticketScanWorkflow, {
    taskQueue: queue,
    workflowId: `ticket-scan:${scan_id}`,
    args: [input],
    workflowTaskTimeout: '2 seconds',
  });
  return { scan_id, handle };
}

describe('what a scan records', () => {
  it('is listed as processing from its start, and not once its run failed or was cancelled', async () => {
    const t = await newTenant();
    const user = await basicUser(t);
    const listed = async () => (await call('GET', L, { key: user.key })).body;

    const failing = await startScan(t.organization_id, user);
    const seen = await until('the scan listed', listed, (b) => b.total === 1, 30_000);
    expect(seen.scans[0]).toMatchObject({
      id: failing.scan_id,
      status: 'processing',
      user_id: user.user_id,
      products: [],
      total_points: 0,
      workflow_id: `ticket-scan:${failing.scan_id}`,
    });
    expect((await call('GET', `${L}?status=processing`, { key: user.key })).body.scans.map((x: any) => x.id)).toEqual([
      failing.scan_id,
    ]);
    // the scan itself answers from the running workflow
    expect((await call('GET', `${L}/${failing.scan_id}`, { key: user.key })).body).toMatchObject({
      id: failing.scan_id,
      status: 'processing',
    });

    // the edge waits on `processed`: it fails only once the record is gone
    await until(
      'the read started',
      async () => reads.get(failing.scan_id),
      (r) => r !== undefined,
      30_000,
    );
    const processed = await failing.handle.startUpdate(processedUpdate, { waitForStage: WorkflowUpdateStage.ACCEPTED });
    reads.get(failing.scan_id)!.fail(ApplicationFailure.nonRetryable('OCR engine unavailable', 'OcrDown'));
    await expect(processed.result()).rejects.toBeInstanceOf(WorkflowUpdateFailedError);
    expect(await listed()).toMatchObject({ total: 0, scans: [] });
    await expect(failing.handle.result()).rejects.toBeInstanceOf(WorkflowFailedError);

    // an operator cancels a scan in progress (Temporal UI or CLI): its run drops the record too
    const cancelled = await startScan(t.organization_id, user);
    await until('the second scan listed', listed, (b) => b.total === 1 && b.scans[0].id === cancelled.scan_id, 30_000);
    await until(
      'the read started',
      async () => reads.get(cancelled.scan_id),
      (r) => r !== undefined,
      30_000,
    );
    await cancelled.handle.cancel();
    await expect(cancelled.handle.result()).rejects.toBeInstanceOf(WorkflowFailedError);
    expect(await listed()).toMatchObject({ total: 0, scans: [] });
  }, 120_000);

  it('drops, instead of listing, a processing record older than a minute whose run is gone (terminated), and keeps one whose run is open', async () => {
    const t = await newTenant();
    const user = await basicUser(t);
    const listed = async () => (await call('GET', L, { key: user.key })).body;
    const terminated = await startScan(t.organization_id, user);
    const open = await startScan(t.organization_id, user);
    await until('both scans listed', listed, (b) => b.total === 2, 30_000);
    // terminated: no code of the run executes, so the run cannot drop its record
    await terminated.handle.terminate('operator');
    const aged = new Date(Date.now() - 2 * 60_000);
    await TicketScan.collection.updateMany({ _id: { $in: [terminated.scan_id, open.scan_id] } } as never, {
      $set: { created_at: aged },
    });
    const after = await listed();
    expect(after.scans.map((x: any) => x.id)).toEqual([open.scan_id]);
    expect(after.total).toBe(1);
    expect(await TicketScan.exists({ _id: terminated.scan_id })).toBeNull();

    await until(
      'the read started',
      async () => reads.get(open.scan_id),
      (r) => r !== undefined,
      30_000,
    );
    reads.get(open.scan_id)!.fail(ApplicationFailure.nonRetryable('OCR engine unavailable', 'OcrDown'));
    await expect(open.handle.result()).rejects.toBeInstanceOf(WorkflowFailedError);
  }, 120_000);
});
