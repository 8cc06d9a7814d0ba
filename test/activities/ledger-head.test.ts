/**
 * The ledger's head for a user this process has never seen (entries written by another process):
 * found by primary-key reads, at every length around the powers of two and the gap sizes the search
 * turns on, in a bounded number of reads.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { useSuiteRuntime } from '../helpers/runtime';
import { creditPoints, getBalance, getHistory, headFromProbes } from '../../activities/loyalty/ledger';
import { LedgerEntry } from '../../activities/loyalty/models';
import { queriesOf, show } from '../helpers/queries';

useSuiteRuntime();

beforeAll(async () => {
  // The ledger is asked once whether it holds entries older than operation documents (store.ts):
  // asked here, before this file writes entries without them, it is marked complete for every
  // process of the stack (else another test file's reads would fall back to the unkeyed index).
  await creditPoints({ organization_id: 'default', user_id: `head-warm-up-${Date.now()}`, points: 1, reason: 'action', operation_id: `award:head-warm-up-${Date.now()}` });
});

/** What another process would have appended: entries 1..n of 3 points each. */
async function writtenElsewhere(organization_id: string, user_id: string, n: number) {
  // In slices, so a long ledger does not hold the store's writer away from other test files for seconds.
  for (let from = 0; from < n; from += 500) {
    await LedgerEntry.insertMany(
      Array.from({ length: Math.min(500, n - from) }, (_, k) => {
        const seq = from + k + 1;
        return {
          _id: `${organization_id}|${user_id}|${seq}`,
          entry_id: `pte_${user_id}_${seq}`,
          organization_id,
          user_id,
          seq,
          amount: 3,
          balance_after: 3 * seq,
          reason: 'action',
          operation_id: `award:${user_id}:${seq}`,
        };
      }),
    );
  }
}

describe('ledger head of an unseen user', () => {
  const run = `${Date.now()}`;
  it.each([1, 2, 3, 7, 8, 9, 37, 64, 65, 100, 1000])('finds entry %i as the newest when another process wrote entries 1 to it', async (n) => {
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

  // One read of the powers of two, then the gap between two of them read whole (two reads up to
  // 64 entries) or cut by probes first (three up to 8,191).
  it.each([
    [0, 1],
    [1, 2],
    [64, 2],
    [65, 3],
    [1000, 3],
    [8191, 3],
  ])('finds the newest of %i entries in at most %i reads, each by _id', async (n, reads) => {
    const user = `head-reads-${run}-${n}`;
    if (n) await writtenElsewhere('default', user, n);
    const qs = await queriesOf(async () => {
      expect(await headFromProbes('default', user)).toMatchObject({ seq: n, balance: 3 * n });
    });
    expect(qs.length).toBeGreaterThan(0);
    expect(qs.length).toBeLessThanOrEqual(reads);
    expect(show(qs.filter((q) => !('_id' in q.filter)))).toEqual([]);
  });

  it('answers "not found" for a user without entries', async () => {
    await expect(getBalance('default', `head-${run}-none`)).rejects.toMatchObject({ status: 404 });
  });
});
