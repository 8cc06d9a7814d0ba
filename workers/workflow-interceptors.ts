/**
 * Workflow interceptors of the platform's workers (bundled into the workflow sandbox: deterministic
 * code, Temporal packages only).
 *
 * An activity that runs in a worker killed with SIGKILL is only noticed when one of its timeouts
 * passes: its startToCloseTimeout (up to 5 minutes for a transcription) unless it has a heartbeat
 * timeout. Every activity scheduled with a longer startToCloseTimeout and no heartbeat timeout
 * gets HEARTBEAT_TIMEOUT_MS; the worker heartbeats for each running activity (activity-wrapper.ts),
 * so a dead worker's activity is retried elsewhere within that time.
 */
import { msOptionalToNumber } from '@temporalio/common/lib/time.js';
import type {
  ActivityInput,
  Next,
  WorkflowInterceptorsFactory,
  WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';

export const HEARTBEAT_TIMEOUT_MS = 20_000;

class HeartbeatTimeouts implements WorkflowOutboundCallsInterceptor {
  scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>) {
    const { options } = input;
    const limit = msOptionalToNumber(options.startToCloseTimeout) ?? msOptionalToNumber(options.scheduleToCloseTimeout);
    if (options.heartbeatTimeout !== undefined || (limit !== undefined && limit <= HEARTBEAT_TIMEOUT_MS))
      return next(input);
    return next({ ...input, options: { ...options, heartbeatTimeout: HEARTBEAT_TIMEOUT_MS } });
  }
}

export const interceptors: WorkflowInterceptorsFactory = () => ({ outbound: [new HeartbeatTimeouts()] });
