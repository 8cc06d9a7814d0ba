/**
 * Replays a recorded history of the redemption workflow on today's code: a change to the workflow
 * that does not keep runs of older code replaying (patched()) fails with a non-determinism error.
 */
import { fileURLToPath } from 'node:url';

import type { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';

export const replayRedemption = (history: temporal.api.history.v1.IHistory, replayName: string) =>
  Worker.runReplayHistory(
    { workflowsPath: fileURLToPath(new URL('../../workflows/redemption.ts', import.meta.url)), replayName },
    history,
  );
