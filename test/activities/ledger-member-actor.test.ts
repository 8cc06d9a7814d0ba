/**
 * The ledger's actor per member and its group commit (activities/loyalty/member.ts): a member's
 * concurrent changes are drafted together on one read of the head and written in one command,
 * members alone share one insert, and across processes the entry's keys still decide.
 */
import mongoose from 'mongoose';
import { describe, expect, it } from 'vitest';

import { append, creditPoints, debitPoints, getBalance } from '../../activities/loyalty/ledger.ts';
import { LedgerEntry } from '../../activities/loyalty/models.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();

const run = `${Date.now()}`;
const org = 'default';

/** The commands `work` sends to the ledger's collection, by method. */
async function ledgerCommands(work: () => Promise<unknown>): Promise<Record<string, number>> {
  const seen: Record<string, number> = {};
  mongoose.set('debug', (collection: string, method: string) => {
    if (collection === 'ledger_entries') seen[method] = (seen[method] ?? 0) + 1;
  });
  try {
    await work();
  } finally {
    mongoose.set('debug', false);
  }
  return seen;
}

/** Entry `seq` of the user as another process would have appended it. */
async function writtenElsewhere(user_id: string, seq: number, amount: number, balance_after: number) {
  await LedgerEntry.collection.insertOne({
    _id: `${org}|${user_id}|${seq}` as never,
    entry_id: `pte_${user_id}_elsewhere`,
    organization_id: org,
    user_id,
    seq,
    amount,
    balance_after,
    reason: 'action',
    operation_id: `elsewhere:${user_id}`,
    created_at: new Date(),
  });
}

async function denseLedger(user_id: string) {
  const rows = await LedgerEntry.find({ organization_id: org, user_id }).sort({ seq: 1 }).lean();
  let sum = 0;
  rows.forEach((r, i) => {
    sum += r.amount;
    expect([r.seq, r.balance_after]).toEqual([i + 1, sum]);
  });
  return rows;
}

describe("one member's concurrent changes", () => {
  it('200 debits with points for 100: exactly 100 written and 100 refused 409, in a few commands', async () => {
    const user_id = `actor-${run}-debits`;
    await creditPoints({
      organization_id: org,
      user_id,
      points: 1000,
      reason: 'action',
      operation_id: `top:${user_id}`,
    });
    let outcomes: PromiseSettledResult<unknown>[] = [];
    const commands = await ledgerCommands(async () => {
      outcomes = await Promise.allSettled(
        Array.from({ length: 200 }, (_, i) =>
          debitPoints({
            organization_id: org,
            user_id,
            points: 10,
            reason: 'redemption',
            operation_id: `debit:${user_id}:${i}`,
          }),
        ),
      );
    });
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(100);
    const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(refused).toHaveLength(100);
    for (const r of refused) expect(r.reason).toMatchObject({ status: 409 });
    expect(await getBalance(org, user_id)).toMatchObject({ points: 0, entries: 101 });
    expect(await denseLedger(user_id)).toHaveLength(101);
    // One at a time this was 200 head reads and 100 inserts (plus a read per refusal).
    const writes = (commands.insertMany ?? 0) + (commands.insertOne ?? 0);
    expect(writes).toBeLessThanOrEqual(10);
    expect(commands.findOne ?? 0).toBeLessThanOrEqual(10 + 100);
  });

  it('the same operation twice in one batch is written once; the copy answers the first entry', async () => {
    const user_id = `actor-${run}-same-op`;
    await creditPoints({
      organization_id: org,
      user_id,
      points: 5,
      reason: 'action',
      operation_id: `first:${user_id}`,
    });
    const both = await Promise.all(
      [1, 2, 3].map(() =>
        creditPoints({ organization_id: org, user_id, points: 7, reason: 'action', operation_id: `same:${user_id}` }),
      ),
    );
    expect(both.filter((r) => !r.duplicate)).toHaveLength(1);
    expect(new Set(both.map((r) => r.entry.entry_id)).size).toBe(1);
    expect(await getBalance(org, user_id)).toMatchObject({ points: 12, entries: 2 });
  });

  it('a batch that loses entry n+1 to another process drafts it and what followed again on the newer head', async () => {
    const user_id = `actor-${run}-lost`;
    await creditPoints({ organization_id: org, user_id, points: 10, reason: 'action', operation_id: `a:${user_id}` });
    const spec = (op: string) => ({
      organization_id: org,
      user_id,
      reason: 'action' as const,
      operation_id: `${op}:${user_id}`,
    });
    // Holds the member's actor while the next four changes queue behind it: they form one batch.
    const blocker = append(spec('blocker'), async (head) => {
      await new Promise((r) => setTimeout(r, 100));
      return { amount: 1, lots: head.lots };
    });
    let once = true;
    const first = append(spec('b'), async (head) => {
      if (once) {
        once = false;
        // Another process writes entry 3 between this batch's read of the head and its write.
        await writtenElsewhere(user_id, 3, 1, 12);
      }
      return { amount: 2, lots: head.lots };
    });
    const rest = [3, 4, 5].map((points, i) => append(spec(`c${i}`), (head) => ({ amount: points, lots: head.lots })));
    const out = await Promise.all([blocker, first, ...rest]);
    expect(out.every((r) => r && !r.duplicate)).toBe(true);
    const rows = await denseLedger(user_id);
    expect(rows.map((r) => r.amount)).toEqual([10, 1, 1, 2, 3, 4, 5]);
    expect(await getBalance(org, user_id)).toMatchObject({ points: 26, entries: 7 });
  });
});

describe('members alone', () => {
  it('50 members credited at once share a few inserts, each answered with its own entry', async () => {
    const users = Array.from({ length: 50 }, (_, i) => `actor-${run}-m${i}`);
    let out: Awaited<ReturnType<typeof creditPoints>>[] = [];
    const commands = await ledgerCommands(async () => {
      out = await Promise.all(
        users.map((user_id) =>
          creditPoints({ organization_id: org, user_id, points: 3, reason: 'action', operation_id: `m:${user_id}` }),
        ),
      );
    });
    expect(out.map((r) => r.entry.seq)).toEqual(users.map(() => 1));
    expect(new Set(out.map((r) => r.entry.entry_id)).size).toBe(50);
    // One head read each (a member's head is never kept between batches), the writes grouped.
    expect(commands.findOne).toBe(50);
    expect((commands.insertMany ?? 0) + (commands.insertOne ?? 0)).toBeLessThanOrEqual(10);
    for (const user_id of users.slice(0, 3)) expect(await getBalance(org, user_id)).toMatchObject({ points: 3 });
  });

  it("one member's refused insert does not fail the others written with it", async () => {
    const taken = `actor-${run}-taken`;
    await creditPoints({
      organization_id: org,
      user_id: taken,
      points: 1,
      reason: 'action',
      operation_id: `t:${taken}`,
    });
    const others = Array.from({ length: 10 }, (_, i) => `actor-${run}-o${i}`);
    const out = await Promise.all([
      // The operation exists under another user: refused by the unique operation index, answered as a duplicate.
      creditPoints({
        organization_id: org,
        user_id: `actor-${run}-thief`,
        points: 9,
        reason: 'action',
        operation_id: `t:${taken}`,
      }),
      ...others.map((user_id) =>
        creditPoints({ organization_id: org, user_id, points: 2, reason: 'action', operation_id: `o:${user_id}` }),
      ),
    ]);
    expect(out[0]).toMatchObject({ duplicate: true, entry: { amount: 1 } });
    expect(out.slice(1).every((r) => !r.duplicate && r.entry.amount === 2)).toBe(true);
    await expect(getBalance(org, `actor-${run}-thief`)).rejects.toMatchObject({ status: 404 });
  });
});

describe("a member's head between batches", () => {
  it('drafts the next change on the head it wrote, without a read, for a second at most', async () => {
    const user_id = `actor-${run}-kept`;
    const credit = (n: number) =>
      creditPoints({ organization_id: org, user_id, points: 1, reason: 'action', operation_id: `k${n}:${user_id}` });
    await credit(0);
    const warm = await ledgerCommands(() => credit(1));
    expect(warm.findOne ?? 0).toBe(0);
    await new Promise((r) => setTimeout(r, 1100));
    const later = await ledgerCommands(() => credit(2));
    expect(later.findOne).toBe(1);
    expect(await getBalance(org, user_id)).toMatchObject({ points: 3, entries: 3 });
  });

  it('a kept head another process wrote past: the write collides and is drafted again on a fresh read', async () => {
    const user_id = `actor-${run}-passed`;
    const credit = (op: string, points: number) =>
      creditPoints({ organization_id: org, user_id, points, reason: 'action', operation_id: `${op}:${user_id}` });
    await credit('a', 10);
    await writtenElsewhere(user_id, 2, 5, 15);
    const out = await credit('b', 1);
    expect(out.entry).toMatchObject({ seq: 3, balance_after: 16 });
    await denseLedger(user_id);
  });

  it('a debit refused on a kept head is decided again on a fresh read (another process credited meanwhile)', async () => {
    const user_id = `actor-${run}-refuse`;
    await creditPoints({ organization_id: org, user_id, points: 5, reason: 'action', operation_id: `a:${user_id}` });
    await writtenElsewhere(user_id, 2, 50, 55);
    const out = await debitPoints({
      organization_id: org,
      user_id,
      points: 20,
      reason: 'redemption',
      operation_id: `d:${user_id}`,
    });
    expect(out.entry).toMatchObject({ seq: 3, balance_after: 35 });
  });
});
