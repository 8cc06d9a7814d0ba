/**
 * The ledger's head for a user this process has never seen (entries written by another process):
 * one query, the user's entries newest first through the index {organization_id, user_id, seq},
 * which the server answers by reading one row whatever the length of the ledger. And the entry's
 * unique key, not a process's idea of the head, decides between two writers of one user.
 */
import { beforeAll, describe, expect, it } from 'vitest';

import { append, creditPoints, getBalance, getHistory, ledgerHead } from '../../activities/loyalty/ledger.ts';
import { LedgerEntry } from '../../activities/loyalty/models.ts';
import { planOf, queriesOf, scans } from '../helpers/queries.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();

/** What another process would have appended: entries 1..n of 3 points each. */
async function writtenElsewhere(organization_id: string, user_id: string, n: number, from = 0) {
  // In slices, so a long ledger does not hold the store's writer away from other test files for seconds.
  for (; from < n; from += 500) {
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

const run = `${Date.now()}`;

beforeAll(async () => {
  // Other users' entries around the measured ones, so an answer that read more than the user's
  // newest entry would show in the plan rather than hide in a small table.
  await writtenElsewhere('default', `head-${run}-neighbour`, 300);
});

describe('ledger head of an unseen user', () => {
  it.each([1, 2, 64, 1000])('finds entry %i as the newest when another process wrote entries 1 to it', async (n) => {
    const user = `head-${run}-${n}`;
    await writtenElsewhere('default', user, n);
    expect(await ledgerHead('default', user)).toMatchObject({ seq: n, balance: 3 * n });
    expect(await getBalance('default', user)).toMatchObject({ points: 3 * n, entries: n });
    // The next change appends right after it.
    const next = await creditPoints({
      organization_id: 'default',
      user_id: user,
      points: 5,
      reason: 'action',
      operation_id: `award:${user}:next`,
    });
    expect(next.entry).toMatchObject({ seq: n + 1, balance_after: 3 * n + 5 });
    expect((await getHistory('default', user, 1, 2)).entries.map((e) => e.seq)).toEqual([n + 1, n]);
  });

  it.each([0, 1, 1000])('finds the newest of %i entries in one query answered from an index', async (n) => {
    const user = `head-reads-${run}-${n}`;
    if (n) await writtenElsewhere('default', user, n);
    const qs = await queriesOf(async () => {
      expect(await ledgerHead('default', user)).toMatchObject({ seq: n, balance: 3 * n });
    });
    expect(qs).toHaveLength(1);
    expect(qs[0]).toMatchObject({ collection: 'ledger_entries', sort: { seq: -1 } });
    expect(await scans(qs)).toEqual([]);
    // Newest first in the index's own order: no sort of the user's entries (the embedded server's
    // plan would say `USE TEMP B-TREE FOR ORDER BY`), so the limit stops at the first row.
    expect((await planOf(qs[0])).plan).not.toMatch(/TEMP B-TREE/);
  });

  it('answers "not found" for a user without entries', async () => {
    await expect(getBalance('default', `head-${run}-none`)).rejects.toMatchObject({ status: 404 });
  });
});

describe('two writers of one user', () => {
  it('lets the entry written first by another process win entry n+1: the append is drafted again on the newer head', async () => {
    const user = `head-race-${run}`;
    await writtenElsewhere('default', user, 3);
    const heads: number[] = [];
    const out = await append(
      { organization_id: 'default', user_id: user, reason: 'action', operation_id: `award:${user}:mine` },
      async (head) => {
        heads.push(head.seq);
        // Another process appends entry 4 after this writer read entry 3 as the head.
        if (heads.length === 1) await writtenElsewhere('default', user, 4, 3);
        return { amount: 10, lots: head.lots };
      },
    );
    expect(heads).toEqual([3, 4]);
    expect(out).toMatchObject({ duplicate: false, entry: { seq: 5, balance_after: 22 } });
    const entries = await LedgerEntry.find({ organization_id: 'default', user_id: user }).lean();
    expect(entries.map((e) => [e.seq, e.balance_after]).sort((a, b) => a[0] - b[0])).toEqual([
      [1, 3],
      [2, 6],
      [3, 9],
      [4, 12],
      [5, 22],
    ]);
  });

  it('applies an operation once when it was applied by another process meanwhile', async () => {
    const user = `head-op-${run}`;
    const first = await creditPoints({
      organization_id: 'default',
      user_id: user,
      points: 7,
      reason: 'action',
      operation_id: `award:${user}:once`,
    });
    const again = await Promise.all(
      Array.from({ length: 5 }, () =>
        creditPoints({
          organization_id: 'default',
          user_id: user,
          points: 7,
          reason: 'action',
          operation_id: `award:${user}:once`,
        }),
      ),
    );
    expect(again.map((r) => [r.duplicate, r.entry.entry_id])).toEqual(Array(5).fill([true, first.entry.entry_id]));
    expect(await getBalance('default', user)).toMatchObject({ points: 7, entries: 1 });
  });
});
