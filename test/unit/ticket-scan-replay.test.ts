/**
 * Workflow versioning: scan runs recorded by the code before the workflow recorded its own scan
 * (the edge wrote and dropped the `processing` record then) replay on today's code without a
 * non-determinism error, because the new steps sit behind patched('scan-records-itself').
 * The histories (test/fixtures/ticket-scan-history-*.bin, binary temporal Histories) were recorded
 * once by running the older workflows/ticket-scan.ts on a local Temporal dev server with stand-in
 * activities, the client sending `processed` (and `validate`) like the edge and an admin do:
 * - validated: read, analysed with a product pending, mirrored, validated, credited, mirrored;
 * - failed-read: the read refused (a 400), `processed` failing, the upload discarded, the run failed.
 * ticket-scan-history-records-itself-failed.bin was recorded the same way with the code that added
 * the patch (the same failed read): kept so that later changes replay runs of this version too.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';

const workflowsPath = fileURLToPath(new URL('../../workflows/ticket-scan.ts', import.meta.url));
const load = (name: string) =>
  temporal.api.history.v1.History.decode(
    fs.readFileSync(fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url))),
  );

/** The local activities a history ran, in order (each is a `core_local_activity` marker). */
const localActivities = (history: temporal.api.history.v1.IHistory) =>
  history.events!.flatMap((e) => {
    const m = e.markerRecordedEventAttributes;
    if (m?.markerName !== 'core_local_activity') return [];
    return [JSON.parse(Buffer.from(m.details!.data!.payloads![0].data!).toString()).activity_type as string];
  });

describe('ticket-scan workflow versioning', () => {
  it('replays a validated run recorded before the workflow recorded its own scan', async () => {
    const history = load('ticket-scan-history-validated.bin');
    expect(localActivities(history)).toEqual(['readReceipt', 'analyseScan', 'mirrorScan', 'creditScan', 'mirrorScan']);
    await expect(
      Worker.runReplayHistory({ workflowsPath, replayName: 'ticket-scan-validated' }, history),
    ).resolves.toBeUndefined();
  }, 180_000);

  it('replays a failed run recorded then: no record dropped by the run (the edge did it)', async () => {
    const history = load('ticket-scan-history-failed-read.bin');
    expect(localActivities(history)).toEqual(['readReceipt', 'discardUpload']);
    expect(history.events!.at(-1)!.workflowExecutionFailedEventAttributes).toBeTruthy();
    await expect(
      Worker.runReplayHistory({ workflowsPath, replayName: 'ticket-scan-failed-read' }, history),
    ).resolves.toBeUndefined();
  }, 180_000);

  it('replays a failed run recorded with scan-records-itself: recorded, dropped before `processed` failed', async () => {
    const history = load('ticket-scan-history-records-itself-failed.bin');
    expect(localActivities(history)).toEqual([
      'recordScanStarted',
      'readReceipt',
      'dropScanPlaceholder',
      'discardUpload',
    ]);
    const types = history.events!.map((e) =>
      e.markerRecordedEventAttributes?.markerName === 'core_local_activity'
        ? localActivities({ events: [e] })[0]
        : e.eventType,
    );
    expect(types.indexOf('dropScanPlaceholder')).toBeLessThan(
      types.indexOf(temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED),
    );
    await expect(
      Worker.runReplayHistory({ workflowsPath, replayName: 'ticket-scan-records-itself-failed' }, history),
    ).resolves.toBeUndefined();
  }, 180_000);
});
