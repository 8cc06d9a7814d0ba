/**
 * The ledger's head for a user this process has never seen (entries written by another process):
 * found by primary-key probes, at every length around the powers of two the search turns on.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseEnv, setConfig } from '../../activities/config';
import { closeRuntime, initRuntime } from '../../activities/runtime';
import { creditPoints, getBalance, getHistory, headFromProbes } from '../../activities/loyalty/ledger';
import { LedgerEntry } from '../../activities/loyalty/models';

beforeAll(async () => {
  setConfig(parseEnv({ ...process.env, ...inject('platformEnv') }));
  await initRuntime();
});

afterAll(async () => {
  await closeRuntime();
});

/** What another process would have appended: entries 1..n of 3 points each. */
async function writtenElsewhere(organization_id: string, user_id: string, n: number) {
  await LedgerEntry.insertMany(
    Array.from({ length: n }, (_, i) => ({
      _id: `${organization_id}|${user_id}|${i + 1}`,
      entry_id: `pte_${user_id}_${i + 1}`,
      organization_id,
      user_id,
      seq: i + 1,
      amount: 3,
      balance_after: 3 * (i + 1),
      reason: 'action',
      operation_id: `award:${user_id}:${i + 1}`,
    })),
  );
}

describe('ledger head of an unseen user', () => {
  const run = `${Date.now()}`;
  it.each([1, 2, 3, 7, 8, 9, 37, 64, 65, 100])('finds entry %i as the newest of %i entries written by another process', async (n) => {
    const user = `head-${run}-${n}`;
    await writtenElsewhere('default', user, n);
    // The probes alone land on entry n (the caller's forward walk would mend a near miss).
    expect(await headFromProbes('default', user)).toMatchObject({ seq: n, balance: 3 * n });
    expect(await getBalance('default', user)).toMatchObject({ points: 3 * n, entries: n });
    // The next change appends right after it.
    const next = await creditPoints({ organization_id: 'default', user_id: user, points: 5, reason: 'action', operation_id: `award:${user}:next` });
    expect(next.entry).toMatchObject({ seq: n + 1, balance_after: 3 * n + 5 });
    expect((await getHistory('default', user, 1, 2)).entries.map((e) => e.seq)).toEqual([n + 1, n]);
  });

  it('answers "not found" for a user without entries', async () => {
    await expect(getBalance('default', `head-${run}-none`)).rejects.toMatchObject({ status: 404 });
  });
});
