/**
 * Pledges (activities/loyalty/pledges.ts): debits that run elsewhere are admitted only while the
 * member's balance covers them beside what this process already pledged. What the fresh balance
 * cannot cover is refused with the ledger's 409 and never runs; what only a failed pledge would
 * cover waits for the pledges to settle.
 */
import { describe, expect, it } from 'vitest';

import { creditPoints, debitPoints, getBalance } from '../../activities/loyalty/ledger.ts';
import { whilePledged } from '../../activities/loyalty/pledges.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();

const run = `${Date.now()}`;
const org = 'default';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function funded(name: string, points: number) {
  const user_id = `pledge-${run}-${name}`;
  await creditPoints({ organization_id: org, user_id, points, reason: 'action', operation_id: `seed:${user_id}` });
  return user_id;
}

/** A hold written a while after it was admitted, as a redemption's run writes it in a worker. */
const hold = (user_id: string, i: number, points: number) => async () => {
  await sleep(30);
  return debitPoints({
    organization_id: org,
    user_id,
    points,
    reason: 'redemption',
    operation_id: `hold:${user_id}:${i}`,
  });
};

describe('pledges of a member', () => {
  it('30 debits of 100 with points for 10: exactly 10 run and are written, 20 are refused 409 without running', async () => {
    const user_id = await funded('thirty', 1000);
    let ran = 0;
    const outcomes = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) =>
        whilePledged({ organization_id: org, user_id, points: 100, operation_id: `hold:${user_id}:${i}` }, () => {
          ran += 1;
          return hold(user_id, i, 100)();
        }),
      ),
    );
    expect(ran).toBe(10);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(10);
    const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(refused).toHaveLength(20);
    for (const r of refused) {
      expect(r.reason).toMatchObject({ status: 409 });
      expect(r.reason.message).toMatch(/^Not enough points: balance 0, needed 100$/);
    }
    expect((await getBalance(org, user_id)).points).toBe(0);
  });

  it('a pledge that fails gives its points back: the debit waiting on it is admitted and runs', async () => {
    const user_id = await funded('fails', 100);
    const order: string[] = [];
    const first = whilePledged(
      { organization_id: org, user_id, points: 100, operation_id: `hold:${user_id}:1` },
      async () => {
        order.push('first runs');
        await sleep(100);
        throw new Error('the hold was not written');
      },
    );
    const second = whilePledged(
      { organization_id: org, user_id, points: 100, operation_id: `hold:${user_id}:2` },
      async () => {
        order.push('second runs');
        return hold(user_id, 2, 100)();
      },
    );
    await expect(first).rejects.toThrow('the hold was not written');
    await expect(second).resolves.toMatchObject({ entry: { amount: -100 } });
    expect(order).toEqual(['first runs', 'second runs']);
  });

  it('members do not wait on each other, and an unknown member is refused 409 (nothing to spend)', async () => {
    const a = await funded('a', 100);
    const b = await funded('b', 100);
    let release!: () => void;
    const slow = whilePledged(
      { organization_id: org, user_id: a, points: 100, operation_id: `hold:${a}:1` },
      () => new Promise<void>((r) => (release = r)),
    );
    // b is admitted while a's pledge is still open
    await expect(
      whilePledged({ organization_id: org, user_id: b, points: 100, operation_id: `hold:${b}:1` }, hold(b, 1, 100)),
    ).resolves.toMatchObject({ entry: { amount: -100 } });
    release();
    await slow;
    const nobody = `pledge-${run}-nobody`;
    await expect(
      whilePledged({ organization_id: org, user_id: nobody, points: 1, operation_id: 'x' }, async () => 'ran'),
    ).rejects.toMatchObject({
      status: 409,
    });
  });

  it('a pledge stops counting once its hold is written: the next is decided then, not when the first settles', async () => {
    const user_id = await funded('written', 100);
    let settle!: () => void;
    const first = whilePledged(
      { organization_id: org, user_id, points: 100, operation_id: `hold:${user_id}:1` },
      async () => {
        await hold(user_id, 1, 100)();
        await new Promise<void>((r) => (settle = r)); // the run still waits on the provider
      },
    );
    await new Promise((r) => setTimeout(r, 50)); // the first is admitted
    // Refused from the balance its written hold left, while the first is still open.
    await expect(
      whilePledged(
        { organization_id: org, user_id, points: 100, operation_id: `hold:${user_id}:2` },
        async () => 'ran',
      ),
    ).rejects.toMatchObject({ status: 409, message: 'Not enough points: balance 0, needed 100' });
    settle();
    await first;
  });

  it('the same hold pledged again while the first is open (a retried request) is admitted: its run is joined', async () => {
    const user_id = await funded('same', 100);
    const op = `hold:${user_id}:1`;
    const pledge = { organization_id: org, user_id, points: 100, operation_id: op };
    const debit = () =>
      debitPoints({ organization_id: org, user_id, points: 100, reason: 'redemption', operation_id: op });
    let settle!: () => void;
    const first = whilePledged(pledge, async () => {
      const held = await debit();
      await new Promise<void>((r) => (settle = r)); // the run still waits on the provider
      return held;
    });
    await new Promise((r) => setTimeout(r, 50));
    // The balance is 0 now, yet the retry of the same hold is admitted, not refused.
    const again = await whilePledged(pledge, debit);
    settle();
    expect([(await first).duplicate, again.duplicate]).toEqual([false, true]);
  });
});
