import {
  allHandlersFinished,
  condition,
  defineUpdate,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
} from '@temporalio/workflow';

import type { RedemptionStatus, SettleOutcome } from '../activities/gifts/constants.ts';
import type {
  FulfilAnswer,
  RedemptionInput,
  RedemptionState,
  ReviewCheck,
  Settlement,
} from '../activities/gifts/index.ts';
import type * as activities from '../activities/workflow-activities.ts';
import { isClientFailure, refusal as platformRefusal } from './failures.ts';
import { BACKGROUND, INTERACTIVE } from './retry.ts';

export type { RedemptionInput, RedemptionState };

const reserveOptions = { startToCloseTimeout: '15 seconds', retry: INTERACTIVE } as const;
const settleOptions = { startToCloseTimeout: '30 seconds', retry: BACKGROUND } as const;
const { settleRedemption, releaseRedemption, closeUnreserved, reviewRedemption, settleReviewed } =
  proxyActivities<typeof activities>(settleOptions);

/**
 * The ledger steps around the order (the hold before it, the settlement after it) are short
 * writes, idempotent by their operation ids: as local activities they run inside the workflow
 * task that reaches them, with no activity task of their own to schedule, dispatch and record.
 * A run then costs two workflow tasks and one activity (the order) instead of four and three.
 * The order stays a regular activity: it may wait on the provider, heartbeats, and a retry must
 * know it is one (it looks the first order up by its customIdentifier).
 */
const PATCH_LOCAL_STEPS = 'ledger-steps-local';
const ledgerSteps = () =>
  patched(PATCH_LOCAL_STEPS)
    ? {
        reserve: proxyLocalActivities<typeof activities>(reserveOptions).reserveRedemption,
        settle: proxyLocalActivities<typeof activities>(settleOptions).settleRedemption,
        release: proxyLocalActivities<typeof activities>(settleOptions).releaseRedemption,
      }
    : {
        reserve: proxyActivities<typeof activities>(reserveOptions).reserveRedemption,
        settle: settleRedemption,
        release: releaseRedemption,
      };

/** Answers once the points are held (the redemption is recorded); fails with the run when they could not be. */
export const reservedUpdate = defineUpdate<RedemptionState>('reserved');

export interface SettleRequest {
  outcome: SettleOutcome;
  reason: string | null;
  /** the admin's user_id */
  settled_by: string;
}
/** `duplicate`: this outcome had already been decided (by an earlier or concurrent request). */
export type SettleAnswer = RedemptionState & { duplicate: boolean };

/**
 * An admin's settlement of a redemption in needs_review (POST /api/gifts/redemptions/{id}/settle).
 * The run takes updates one at a time, so of two different settlements only the first is
 * accepted: the second is refused 409 before anything is written; the same one again joins it.
 * Either outcome first asks the provider (askProvider), once for all who joined: for "completed"
 * a final refusal, for "refunded" a delivery, refuses it 409 (and whoever joined it), leaving the
 * redemption in needs_review for the other outcome.
 */
export const settleUpdate = defineUpdate<SettleAnswer, [SettleRequest]>('settle');

/** Defaults of runs started without limits in their input (before they existed). */
const PROCESSING_LIMIT_MS = 24 * 3600_000;
/** Longer than any attempt of the reserve step can still be running. */
const RESERVE_GRACE = '2 minutes';

/** Waits between polls of a PROCESSING order: 1, 2, 4, then 5 s for ten minutes, then a minute. */
const pollDelay = (n: number, elapsedMs: number) => (elapsedMs > 600_000 ? 60_000 : Math.min(5_000, 1000 * 2 ** n));

const span = (ms: number) => (ms % 3600_000 === 0 ? `${ms / 3600_000} hours` : `${Math.round(ms / 1000)} seconds`);

function refuse(message: string): never {
  throw platformRefusal('conflict', message);
}

/** A settling step keeps its retries: the ledger and the record must end consistent, whatever it takes. */
async function untilDone<T>(step: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await step();
    } catch (err) {
      if (isClientFailure(err)) throw err;
      await sleep('5 minutes');
    }
  }
}

/**
 * Workflow changes are versioned with patched(): a run recorded by older code replays the old
 * path; new decisions take the new one. Never remove a patch while runs that started before it
 * may still be open (a redemption may wait in needs_review for weeks).
 */
const PATCH_NEEDS_REVIEW = 'needs-review';
const PATCH_SETTLE_CHECK = 'settle-asks-provider';
/**
 * Its own id, not PATCH_SETTLE_CHECK: a run that asked for a "completed" settlement (refused)
 * and then took a "refunded" one without asking would otherwise replay as asking.
 */
const PATCH_REFUND_CHECK = 'refund-asks-provider';

/**
 * An admin settles: the provider is asked once where the order stands. Its final answer
 * (delivered or refused) is returned as such, and the one contradicting the admin refuses the
 * settlement; no answer within a few attempts, or nothing final, is `unconfirmed` (settled on the
 * admin's word).
 */
async function askProvider(input: RedemptionInput, transaction_id: string | null): Promise<ReviewCheck> {
  const { checkRedemption } = proxyActivities<typeof activities>({
    startToCloseTimeout: '30 seconds',
    retry: { ...INTERACTIVE, maximumAttempts: Math.min(3, input.limits?.attempts ?? 3) },
  });
  try {
    const answer = await checkRedemption(input, transaction_id);
    if (answer.state === 'processing')
      return { state: 'unconfirmed', transaction_id: answer.transaction_id, reason: 'it still answers PROCESSING' };
    return answer;
  } catch {
    return { state: 'unconfirmed', transaction_id, reason: 'it could not be asked' };
  }
}

/** The provider gave no final answer: it may still deliver (or have delivered). */
type Unknown = { state: 'unknown'; transaction_id: string | null; reason: string };

/**
 * Only a final answer of the provider decides: delivered, or refused. No answer within the
 * processing limit, an order or status check failing past its retries, a timeout: the order may
 * still be fulfilled, so the outcome is unknown, never a refusal (refunding then would let the
 * user keep both the gift and the points).
 */
async function fulfil(input: RedemptionInput): Promise<FulfilAnswer | Unknown> {
  const limit = input.limits?.processing_ms ?? PROCESSING_LIMIT_MS;
  const retry = { ...BACKGROUND, maximumAttempts: input.limits?.attempts ?? BACKGROUND.maximumAttempts };
  // The order may wait on the provider; a short heartbeat timeout moves it to another worker soon
  // after its worker dies, and the retry finds the first order by its customIdentifier.
  const { fulfilRedemption, checkRedemption } = proxyActivities<typeof activities>({
    startToCloseTimeout: '1 minute',
    heartbeatTimeout: '5 seconds',
    retry,
  });
  let transaction_id: string | null = null;
  try {
    let answer = await fulfilRedemption(input);
    const started = Date.now();
    for (let n = 0; answer.state === 'processing'; n += 1) {
      transaction_id = answer.transaction_id;
      if (Date.now() - started > limit)
        return {
          state: 'unknown',
          transaction_id,
          reason: `The provider has not confirmed the delivery within ${span(limit)}; it may still deliver`,
        };
      await sleep(pollDelay(n, Date.now() - started));
      answer = await checkRedemption(input, answer.transaction_id);
    }
    return answer;
  } catch {
    return {
      state: 'unknown',
      transaction_id,
      reason: transaction_id
        ? "The provider's status checks kept failing; the order may still be delivered"
        : 'The order could not be confirmed with the gift provider; it may have reached it',
    };
  }
}

/**
 * `redemption:<redemption_id>`: reserve (a ledger hold of the gift's points) → fulfil through the
 * gift provider (polling a PROCESSING order with durable sleeps) → settle (`completed`, the hold
 * is the debit) or release (`refunded`, one refund entry giving back the held lots, with the
 * provider's reason) on the provider's final answer. An unknown outcome keeps the hold and waits,
 * `needs_review`, for an admin's settlement (settleUpdate). A hold that is refused fails the run
 * with that 409 and leaves nothing behind. Every step is idempotent, so a worker killed at any
 * point delivers once and debits once.
 */
export async function redemptionWorkflow(input: RedemptionInput): Promise<RedemptionState> {
  let reserved: RedemptionState | undefined;
  let status: RedemptionStatus = 'processing';
  let decision: Settlement | undefined;
  let check: ReviewCheck | undefined;
  let settled: RedemptionState | undefined;
  /** the outcome of the settlement being decided (a "completed" one waits for the provider's answer) */
  let claim: Settlement['outcome'] | undefined;
  /** bumped when a claimed settlement is refused: whoever joined it is refused too */
  let round = 0;
  let refusal = '';
  let transaction_id: string | null = null;
  setHandler(reservedUpdate, async () => {
    await condition(() => reserved !== undefined);
    return reserved!;
  });
  setHandler(
    settleUpdate,
    async (req) => {
      if (claim !== undefined) {
        // The same outcome is being (or was) decided: join it, and share its refusal if any.
        const mine = round;
        await condition(() => settled !== undefined || round !== mine);
        if (settled === undefined) refuse(refusal);
        return { ...settled, duplicate: true };
      }
      claim = req.outcome;
      const settled_at = new Date().toISOString();
      let answer: ReviewCheck | undefined;
      if (req.outcome === 'completed' ? patched(PATCH_SETTLE_CHECK) : patched(PATCH_REFUND_CHECK)) {
        const asked = await askProvider(input, transaction_id);
        // The provider's final answer contradicts the admin: nothing is written, and the
        // redemption stays in needs_review for the other outcome (a refund of a delivered order
        // would leave the user both the gift and the points).
        const contradicts =
          req.outcome === 'completed' && asked.state === 'refused'
            ? `cannot be settled as completed: the provider answers that the order failed (${asked.reason}); settle it as refunded`
            : req.outcome === 'refunded' && asked.state === 'delivered'
              ? `cannot be settled as refunded: the provider answers that the order was delivered (transaction ${asked.transaction_id}); settle it as completed`
              : undefined;
        if (contradicts) {
          claim = undefined;
          round += 1;
          refusal = `Redemption ${input.redemption_id} ${contradicts}`;
          refuse(refusal);
        }
        answer = asked;
      }
      check = answer;
      decision = { outcome: req.outcome, settled_by: req.settled_by, reason: req.reason, settled_at };
      await condition(() => settled !== undefined);
      return { ...settled!, duplicate: false };
    },
    {
      validator: (req) => {
        const taken = decision?.outcome ?? claim;
        if (taken && taken !== req.outcome)
          refuse(
            `Redemption ${input.redemption_id} ${decision ? 'was already settled' : 'is being settled'} as ${taken}`,
          );
        if (!taken && status !== 'needs_review')
          refuse(`Redemption ${input.redemption_id} is ${status}; only a redemption in needs_review can be settled`);
      },
    },
  );
  const steps = ledgerSteps();
  try {
    reserved = await steps.reserve(input);
  } catch (err) {
    if (isClientFailure(err)) throw err;
    // Server errors past the retries: a hold may or may not have been written. Once no attempt
    // can still write one, the points are released if held, else the redemption failed.
    await sleep(RESERVE_GRACE);
    reserved = await untilDone(() => closeUnreserved(input, 'The points could not be reserved; nothing was taken'));
    await condition(allHandlersFinished);
    return reserved;
  }
  if (reserved.status !== 'processing') return reserved;
  const answer = await fulfil(input);
  // Runs recorded before needs_review existed released the points on an unknown outcome: their
  // replay keeps that path (patched() is false there), or it would not match their history.
  if (answer.state === 'unknown' && patched(PATCH_NEEDS_REVIEW)) {
    status = 'needs_review';
    transaction_id = answer.transaction_id;
    await untilDone(() => reviewRedemption(input, answer));
    await condition(() => decision !== undefined);
    settled = await untilDone(() => settleReviewed(input, decision!, check));
    await condition(allHandlersFinished);
    return settled;
  }
  const final = await untilDone(() =>
    answer.state === 'delivered'
      ? steps.settle(input, answer)
      : steps.release(input, answer as Exclude<FulfilAnswer, { state: 'delivered' | 'processing' | 'unknown' }>),
  );
  status = final.status;
  await condition(allHandlersFinished);
  return final;
}
