import { allHandlersFinished, condition, defineUpdate, proxyActivities, setHandler, sleep } from '@temporalio/workflow';
import type * as activities from '../activities/workflow-activities';
import type { FulfilAnswer, RedemptionInput, RedemptionState } from '../activities/gifts/fulfilment';
import { isClientFailure } from './failures';
import { BACKGROUND, INTERACTIVE } from './retry';

export type { RedemptionInput, RedemptionState };

const { reserveRedemption } = proxyActivities<typeof activities>({ startToCloseTimeout: '15 seconds', retry: INTERACTIVE });
// The order may wait on the provider; a short heartbeat timeout moves it to another worker soon
// after its worker dies, and the retry finds the first order by its customIdentifier.
const { fulfilRedemption, checkRedemption } = proxyActivities<typeof activities>({ startToCloseTimeout: '1 minute', heartbeatTimeout: '5 seconds', retry: BACKGROUND });
const { settleRedemption, releaseRedemption, closeUnreserved } = proxyActivities<typeof activities>({ startToCloseTimeout: '30 seconds', retry: BACKGROUND });

/** Answers once the points are held (the redemption is recorded); fails with the run when they could not be. */
export const reservedUpdate = defineUpdate<RedemptionState>('reserved');

/** An order still PROCESSING after this is given up: the points go back. */
const PROCESSING_LIMIT_MS = 24 * 3600_000;
/** Longer than any attempt of the reserve step can still be running. */
const RESERVE_GRACE = '2 minutes';

/** Waits between polls of a PROCESSING order: 1, 2, 4, then 5 s for ten minutes, then a minute. */
const pollDelay = (n: number, elapsedMs: number) => (elapsedMs > 600_000 ? 60_000 : Math.min(5_000, 1000 * 2 ** n));

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

async function fulfil(input: RedemptionInput): Promise<FulfilAnswer> {
  try {
    let answer = await fulfilRedemption(input);
    const started = Date.now();
    for (let n = 0; answer.state === 'processing'; n += 1) {
      if (Date.now() - started > PROCESSING_LIMIT_MS) return { state: 'refused', transaction_id: answer.transaction_id, reason: 'The provider did not confirm the delivery within 24 hours' };
      await sleep(pollDelay(n, Date.now() - started));
      answer = await checkRedemption(input, answer.transaction_id);
    }
    return answer;
  } catch (err) {
    // Past every retry: the order either never reached the provider or the provider keeps failing.
    return { state: 'refused', transaction_id: null, reason: isClientFailure(err) ? 'The provider refused the order' : 'The gift provider could not be reached; the order was not delivered' };
  }
}

/**
 * `redemption:<redemption_id>`: reserve (a ledger hold of the gift's points) → fulfil through the
 * gift provider (polling a PROCESSING order with durable sleeps) → settle (`completed`, the hold
 * is the debit) or release (`refunded`, one refund entry, with the provider's reason). A hold that
 * is refused fails the run with that 409 and leaves nothing behind. Every step is idempotent, so a
 * worker killed at any point delivers once and debits once.
 */
export async function redemptionWorkflow(input: RedemptionInput): Promise<RedemptionState> {
  let reserved: RedemptionState | undefined;
  setHandler(reservedUpdate, async () => {
    await condition(() => reserved !== undefined);
    return reserved!;
  });
  try {
    reserved = await reserveRedemption(input);
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
  const final = await untilDone(() => (answer.state === 'delivered' ? settleRedemption(input, answer) : releaseRedemption(input, answer as Exclude<FulfilAnswer, { state: 'delivered' | 'processing' }>)));
  await condition(allHandlersFinished);
  return final;
}
