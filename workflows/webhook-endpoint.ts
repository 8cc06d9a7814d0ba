import {
  condition,
  continueAsNew,
  defineSignal,
  proxyLocalActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';

import type { EndpointActorInput } from '../activities/events/index.ts';
import type * as activities from '../activities/workflow-activities.ts';
import { BACKGROUND } from './retry.ts';

// A round is a local activity: it runs in the worker holding the workflow task, with no activity
// task to schedule and record. A worker killed mid-round loses the task; another worker runs the
// round again, and what was sent but not recorded is sent again (same webhook-id: at least once).
const { deliverDue, beforeSleep } = proxyLocalActivities<typeof activities>({
  startToCloseTimeout: '1 minute',
  retry: BACKGROUND,
});

/** A fan-out queued deliveries for this endpoint (or an admin retried one): look at the queue now. */
export const wakeSignal = defineSignal('wake');

/** Rounds per run before it continues as new (its history stays small). */
const ROUNDS_PER_RUN = 500;
/** Events in the history past which it continues as new whatever the rounds (long rounds heartbeat). */
const HISTORY_LIMIT = 5_000;

/**
 * `webhook-endpoint:<endpoint_id>`: the endpoint's actor. Each round sends its due deliveries
 * (activities/events/actor.ts); idle, it sleeps until the next queued delivery is due or a wake
 * signal comes; when the worker's share of rounds is taken it asks again 1 s later, then later
 * (at most 30 s); paused, it waits for the resume's wake. It ends when the endpoint is deleted. One run per endpoint, not per delivery.
 */
export async function webhookEndpointWorkflow(input: EndpointActorInput): Promise<void> {
  let woken = false;
  setHandler(wakeSignal, () => {
    woken = true;
  });
  let busy = 0;
  for (let round = 0; round < ROUNDS_PER_RUN; round += 1) {
    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength > HISTORY_LIMIT) break;
    woken = false;
    let out;
    try {
      out = await deliverDue(input);
    } catch {
      // The store kept failing past the retries: try again in a minute (nothing is lost: the queue is in the store).
      await condition(() => woken, '1 minute');
      continue;
    }
    if (out.state === 'gone') return;
    if (out.state === 'held') {
      // Another round holds the queue (one that died): back when its hold passes, or when woken.
      await condition(() => woken, Math.max(1, out.until_ms - Date.now()));
      continue;
    }
    if (out.state === 'paused') {
      // Fan-outs do not wake a paused endpoint's actor; resuming does.
      await condition(() => woken);
      continue;
    }
    if (out.state === 'busy') {
      busy += 1;
      await sleep(Math.min(30_000, 1000 * 2 ** Math.min(busy - 1, 5)));
      continue;
    }
    busy = 0;
    if (out.state === 'more' || woken) continue;
    // A round marked the actor asleep itself (`asleep`); one of an older build left it to beforeSleep.
    const rest = out.asleep
      ? { due: false, next_due_ms: out.next_due_ms }
      : await beforeSleep(input).catch(() => ({ due: true, next_due_ms: null }));
    if (rest.due) continue;
    if (rest.next_due_ms === null) await condition(() => woken);
    else await condition(() => woken, Math.max(1, rest.next_due_ms - Date.now()));
  }
  await continueAsNew<typeof webhookEndpointWorkflow>(input);
}
