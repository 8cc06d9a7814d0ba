import { condition, defineSignal, proxyLocalActivities, setHandler } from '@temporalio/workflow';

import type { AttemptResult, DeliveryRun } from '../activities/events/index.ts';
import type * as activities from '../activities/workflow-activities.ts';
import { BACKGROUND } from './retry.ts';

// Each attempt is a local activity: it runs in the worker that runs the workflow task, with no
// round trip through the server's task queues (a delivery is one workflow task when it succeeds).
// Its own failures (the store down) are retried by Temporal; a worker killed mid-attempt loses
// the workflow task, which another worker runs again, attempt included. The receiver's answers
// are the workflow's to schedule.
const { attemptDelivery } = proxyLocalActivities<typeof activities>({
  startToCloseTimeout: '30 seconds',
  retry: BACKGROUND,
});

/** A manual retry: an attempt now instead of at the scheduled time. */
const retryNowSignal = defineSignal('retryNow');

interface DeliveryInput extends DeliveryRun {
  /** the first retry's delay; each next one is 4 times longer, at most 12 hours, with ±20% jitter */
  base_ms: number;
  /** no attempt is scheduled later than this after the run's start */
  horizon_ms: number;
}

const MAX_DELAY_MS = 12 * 3_600_000;

/**
 * The delay before retry `n` (1-based): deterministic in the workflow (its Math.random replays).
 * The same schedule as activities/events/backoff.ts, which endpoints' actors use; this copy stays,
 * unchanged, for the runs of older builds (one per delivery) until the last of them has ended.
 */
function retryDelay(n: number, base_ms: number, random: number): number {
  const plain = Math.min(base_ms * 4 ** (n - 1), MAX_DELAY_MS);
  return Math.round(plain * (0.8 + 0.4 * random));
}

/**
 * `webhook-delivery:<delivery_id>`: one event to one endpoint, at least once. Deliveries are now
 * sent by their endpoint's actor (webhook-endpoint.ts); this workflow is kept for the runs older
 * builds started, until the last of them ends (WEBHOOK_RETRY_HOURS after it started). Attempts until one
 * succeeds, the endpoint answers 410 or is disabled or deleted, or the schedule runs out
 * (docs/components/events.md lists it); a `retryNow` signal cuts the wait.
 */
export async function webhookDeliveryWorkflow(input: DeliveryInput): Promise<AttemptResult & { attempts: number }> {
  let now = false;
  setHandler(retryNowSignal, () => {
    now = true;
  });
  const started = Date.now();
  let busy = 0;
  for (let attempt = 1; ; attempt += 1) {
    const delay = retryDelay(attempt, input.base_ms, Math.random());
    const fits = Date.now() - started + delay <= input.horizon_ms;
    now = false;
    const { base_ms: _b, horizon_ms: _h, ...run } = input;
    let out: AttemptResult;
    try {
      out = await attemptDelivery({ ...run, attempt, ...(fits && { next_delay_ms: delay }) });
    } catch {
      // The attempt itself kept failing (the store down for minutes): a failed attempt like any
      // other, so the run keeps its schedule instead of ending with the delivery still due.
      out = { outcome: fits ? 'retry' : 'failed' };
    }
    if (out.outcome === 'busy') {
      // Not an attempt: the organization's share of the worker is taken. Ask again, each time
      // later (2 s, 4 s, … at most a minute), unless the schedule has run out meanwhile.
      busy += 1;
      attempt -= 1;
      const wait = Math.min(2000 * 2 ** Math.min(busy - 1, 5), 60_000) * (0.8 + 0.4 * Math.random());
      if (Date.now() - started + wait > input.horizon_ms) return { outcome: 'failed', attempts: attempt };
      await condition(() => now, wait);
      continue;
    }
    busy = 0;
    if (out.outcome !== 'retry') return { ...out, attempts: attempt };
    await condition(() => now, delay);
  }
}
