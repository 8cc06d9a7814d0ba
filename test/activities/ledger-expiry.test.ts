/**
 * Points that expire and points that wait, with a controllable clock: each function takes the
 * instant it runs at, so a test walks days ahead without waiting. Against the real database.
 */
import { describe, expect, it, vi } from 'vitest';

import { expireCredit, expireLapsedPoints } from '../../activities/loyalty/expiry.ts';
import {
  applyChange,
  creditPoints,
  debitPoints,
  getBalance,
  getHistory,
  refundDebit,
} from '../../activities/loyalty/ledger.ts';
import { ExpiryCursor, LedgerEntry } from '../../activities/loyalty/models.ts';
import { reverseOperation } from '../../activities/loyalty/reversal.ts';
import { putRules } from '../../activities/loyalty/rules.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();

const DAY = 86_400_000;
const T0 = new Date();
const at = (days: number) => new Date(T0.getTime() + days * DAY);
const run = `${Date.now()}`;
let n = 0;
const org = () => `economy-${run}-${(n += 1)}`;

async function organization(rules: { points_expire_after_days?: number | null; pending_days?: number }) {
  const organization_id = org();
  await putRules(organization_id, rules, 'test');
  return organization_id;
}

const give = (
  organization_id: string,
  user_id: string,
  points: number,
  op: string,
  now: Date,
  reason: 'action' | 'receipt' = 'action',
) => creditPoints({ organization_id, user_id, points, reason, operation_id: op, now });
const spend = (organization_id: string, user_id: string, points: number, op: string, now: Date) =>
  debitPoints({ organization_id, user_id, points, reason: 'redemption', operation_id: op, now });

describe('points that expire', () => {
  it('spends the oldest points first and never counts lapsed ones, before the daily run wrote them', async () => {
    const o = await organization({ points_expire_after_days: 30 });
    const a = await give(o, 'u', 100, 'a', T0);
    expect(a.entry.expires_at).toBe(at(30).toISOString());
    await give(o, 'u', 50, 'b', at(10));
    // 60 spent on day 20 come out of the first credit: 40 of it are left to lapse on day 30.
    await spend(o, 'u', 60, 'spend-1', at(20));
    expect(await getBalance(o, 'u', at(20))).toMatchObject({
      points: 90,
      pending_points: 0,
      expiring: [
        { points: 40, expires_at: at(30).toISOString() },
        { points: 50, expires_at: at(40).toISOString() },
      ],
    });
    const day31 = await getBalance(o, 'u', at(31));
    expect(day31).toMatchObject({ points: 50, expiring: [{ points: 50, expires_at: at(40).toISOString() }] });
    // the ledger still holds the 40 until the run writes them down, but nobody can spend them
    expect((await getHistory(o, 'u', 1, 10)).entries[0].balance_after).toBe(90);
    await expect(spend(o, 'u', 60, 'spend-2', at(31))).rejects.toMatchObject({ status: 409, balance: 50 });
    expect((await spend(o, 'u', 50, 'spend-3', at(31))).entry.balance_after).toBe(40);
    expect(await getBalance(o, 'u', at(31))).toMatchObject({ points: 0, expiring: [] });
  });

  it('writes one expiry entry per lapsed credit however often it runs', async () => {
    const o = await organization({ points_expire_after_days: 30 });
    const first = await give(o, 'x', 100, 'x1', T0);
    await spend(o, 'x', 30, 'x-spend', at(1));
    const second = await give(o, 'y', 20, 'y1', T0);
    await give(o, 'y', 5, 'y2', at(5)); // lapses on day 35: not yet
    const before = await getBalance(o, 'x', at(31));
    const out = await expireLapsedPoints({ organization_id: o, now: at(31).toISOString() });
    expect(out).toMatchObject({ organizations: 1, entries_written: 2, points_expired: 90 });
    expect(await expireLapsedPoints({ organization_id: o, now: at(31).toISOString() })).toMatchObject({
      entries_written: 0,
    });
    // From the start again (a lost cursor), and two runs at once: still nothing more.
    await ExpiryCursor.updateOne({ _id: o }, { $set: { through: new Date(0) } });
    const again = await Promise.all([
      expireLapsedPoints({ organization_id: o, now: at(31).toISOString() }),
      expireLapsedPoints({ organization_id: o, now: at(31).toISOString() }),
    ]);
    expect(again.map((r) => r.entries_written)).toEqual([0, 0]);
    expect(again[0].credits_checked).toBe(2);
    const expiries = await LedgerEntry.find({ organization_id: o, reason: 'expiry' }).lean();
    expect(expiries.map((e) => [e.user_id, e.amount, e.operation_id]).sort()).toEqual([
      ['x', -70, `expiry:${first.entry.entry_id}`],
      ['y', -20, `expiry:${second.entry.entry_id}`],
    ]);
    // the ledger's balance now equals what could be spent, which did not change
    const x = await getHistory(o, 'x', 1, 1);
    expect(x.entries[0]).toMatchObject({ reason: 'expiry', balance_after: 0 });
    expect(await getBalance(o, 'x', at(31))).toMatchObject({ points: before.points });
    expect(await getBalance(o, 'y', at(31))).toMatchObject({
      points: 5,
      expiring: [{ points: 5, expires_at: at(35).toISOString() }],
    });
    // a credit not lapsed yet, or already expired, writes nothing
    expect(
      await expireCredit({ organization_id: o, user_id: 'x', entry_id: first.entry.entry_id }, at(31)),
    ).toMatchObject({ duplicate: true });
    expect(await expireCredit({ organization_id: o, user_id: 'y', entry_id: 'pte_none' }, at(31))).toBeNull();
  });

  it('writes nothing extra on a ledger where points never expire', async () => {
    const o = await organization({});
    const out = await give(o, 'z', 10, 'z1', T0);
    expect(out.entry).toMatchObject({ expires_at: null, available_at: null });
    const doc = await LedgerEntry.findOne({ entry_id: out.entry.entry_id }).lean();
    expect(doc).not.toHaveProperty('lots');
    expect(await getBalance(o, 'z', at(5000))).toMatchObject({ points: 10, pending_points: 0, expiring: [] });
  });

  it('a reversal takes back its own credit first, and what lapsed of it is not taken twice', async () => {
    const o = await organization({ points_expire_after_days: 30 });
    await give(o, 'r', 100, 'r-old', T0);
    await give(o, 'r', 50, 'r-new', at(10));
    await reverseOperation({ organization_id: o, operation_id: 'r-new', reason: 'given in error', now: at(20) });
    // FIFO alone would have taken the 50 from the older credit, leaving 50 of it to lapse
    expect(await getBalance(o, 'r', at(20))).toMatchObject({
      points: 100,
      expiring: [{ points: 100, expires_at: at(30).toISOString() }],
    });

    // 100 credited, 30 spent, 70 lapsed and written: the reversal takes back the 30 only.
    await give(o, 's', 100, 's-1', T0);
    await give(o, 's', 40, 's-2', at(25)); // lapses on day 55
    await spend(o, 's', 30, 's-spend', at(1));
    await expireLapsedPoints({ organization_id: o, now: at(31).toISOString() });
    const rev = await reverseOperation({ organization_id: o, operation_id: 's-1', reason: 'fraud', now: at(32) });
    expect(rev.points_reversed).toBe(30);
    expect(await getBalance(o, 's', at(32))).toMatchObject({ points: 10 });
  });
});

describe('a refund of a debit whose credit lapsed meanwhile', () => {
  it('reports only the lapsed points it gave back, and every lapsed point is written down exactly once', async () => {
    const o = await organization({ points_expire_after_days: 30 });
    const old = await give(o, 'g', 100, 'g-old', T0); // lapses on day 30
    await give(o, 'g', 100, 'g-new', at(10)); // lapses on day 40
    // The hold takes 40 of the soonest-lapsing credit; 60 of it were never held.
    await spend(o, 'g', 40, 'g-hold', at(20));
    // Refunded on day 31, before the daily run reached the lapsed credit.
    const refund = await refundDebit({
      organization_id: o,
      user_id: 'g',
      debit_operation_id: 'g-hold',
      operation_id: 'g-hold:refund',
      reason: 'refund',
      now: at(31),
    });
    // Of the 40 given back all had lapsed: 40, not the 100 of the whole lapsed credit.
    expect(refund.entry.amount).toBe(40);
    expect(refund.points_lapsed).toBe(40);
    // A retry answers the same figures and writes nothing.
    const again = await refundDebit({
      organization_id: o,
      user_id: 'g',
      debit_operation_id: 'g-hold',
      operation_id: 'g-hold:refund',
      reason: 'refund',
      now: at(31),
    });
    expect(again).toMatchObject({ duplicate: true, points_lapsed: 40 });
    expect(await getBalance(o, 'g', at(31))).toMatchObject({
      points: 100,
      expiring: [{ points: 100, expires_at: at(40).toISOString() }],
    });
    // The daily run then writes the rest of the credits down, and nothing twice.
    await expireLapsedPoints({ organization_id: o, now: at(31).toISOString() });
    await expireLapsedPoints({ organization_id: o, now: at(41).toISOString() });
    const expiries = await LedgerEntry.find({ organization_id: o, user_id: 'g', reason: 'expiry' }).lean();
    // 100 of the old credit (40 held and given back, 60 never held) and 100 of the new: each once.
    expect(expiries.reduce((n, e) => n + e.amount, 0)).toBe(-200);
    expect(new Set(expiries.map((e) => e.operation_id)).size).toBe(expiries.length);
    expect(expiries.some((e) => e.operation_id === `expiry:${old.entry.entry_id}` && e.amount < -60)).toBe(false);
    expect((await getHistory(o, 'g', 1, 1)).entries[0].balance_after).toBe(0);
  });
});

describe('a refund on the real clock', () => {
  it("judges lapsed points at one instant, the refund entry's own: the clock passing an expiry before the entry is written changes nothing", async () => {
    const o = await organization({ points_expire_after_days: 30 });
    await give(o, 'h', 100, 'h-old', T0); // lapses on day 30
    await spend(o, 'h', 40, 'h-hold', at(20));
    const create = LedgerEntry.create.bind(LedgerEntry);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(new Date(at(30).getTime() - 1000)); // a second before the credit lapses
      // The refund entry is written two seconds after its call began: past the expiry.
      const spy = vi.spyOn(LedgerEntry, 'create').mockImplementation(((doc: any) => {
        vi.setSystemTime(new Date(at(30).getTime() + 1000));
        return create(doc);
      }) as any);
      const refund = await refundDebit({
        organization_id: o,
        user_id: 'h',
        debit_operation_id: 'h-hold',
        operation_id: 'h-hold:refund',
        reason: 'refund',
      });
      spy.mockRestore();
      // The pieces came back before they lapsed: spendable then, counted lapsed neither now nor on a retry.
      expect(refund).toMatchObject({ duplicate: false, points_lapsed: 0, lapsed_entry: null });
      expect(refund.entry.created_at).toBe(new Date(at(30).getTime() - 1000).toISOString());
      const again = await refundDebit({
        organization_id: o,
        user_id: 'h',
        debit_operation_id: 'h-hold',
        operation_id: 'h-hold:refund',
        reason: 'refund',
      });
      expect(again).toMatchObject({ duplicate: true, points_lapsed: 0 });
    } finally {
      vi.useRealTimers();
    }
    expect(await LedgerEntry.countDocuments({ organization_id: o, user_id: 'h', reason: 'expiry' })).toBe(0);
  });
});

describe('points that wait', () => {
  it('holds receipt credits for pending_days, then they are spendable; other credits are not held', async () => {
    const o = await organization({ pending_days: 3 });
    const held = await give(o, 'p', 100, 'scan:p1', T0, 'receipt');
    expect(held.entry.available_at).toBe(at(3).toISOString());
    await give(o, 'p', 5, 'p-action', T0);
    expect(await getBalance(o, 'p', at(1))).toMatchObject({ points: 5, pending_points: 100 });
    await expect(spend(o, 'p', 10, 'p-spend', at(1))).rejects.toMatchObject({ status: 409, balance: 5 });
    expect(await getBalance(o, 'p', at(3))).toMatchObject({ points: 105, pending_points: 0 });
    expect((await spend(o, 'p', 100, 'p-spend', at(3))).duplicate).toBe(false);
    expect(await getBalance(o, 'p', at(3))).toMatchObject({ points: 5 });
  });

  it('a reversal of a pending credit cancels it without touching spendable points', async () => {
    const o = await organization({ pending_days: 3, points_expire_after_days: 10 });
    const held = await give(o, 'q', 80, 'scan:q1', T0, 'receipt');
    // a held credit lapses counting from when it may be spent
    expect(held.entry.expires_at).toBe(at(13).toISOString());
    await give(o, 'q', 20, 'q-action', T0);
    const rev = await reverseOperation({
      organization_id: o,
      operation_id: 'scan:q1',
      reason: 'fake receipt',
      now: at(1),
    });
    expect(rev.points_reversed).toBe(80);
    expect(await getBalance(o, 'q', at(1))).toMatchObject({ points: 20, pending_points: 0 });
    expect(await getBalance(o, 'q', at(4))).toMatchObject({ points: 20, pending_points: 0 });
  });
});

describe('reversals at once', () => {
  it('five concurrent reversals of one credit write one entry', async () => {
    const o = await organization({ points_expire_after_days: 30 });
    await give(o, 'c', 40, 'c-1', T0);
    await give(o, 'c', 10, 'c-2', T0);
    const outs = await Promise.all(
      Array.from({ length: 5 }, () =>
        reverseOperation({ organization_id: o, operation_id: 'c-1', reason: 'x', now: at(1) }),
      ),
    );
    expect(outs.filter((r) => !r.duplicate)).toHaveLength(1);
    expect(new Set(outs.map((r) => r.reversal.entry_id)).size).toBe(1);
    expect(await LedgerEntry.countDocuments({ organization_id: o, reason: 'reversal' })).toBe(1);
    expect(await getBalance(o, 'c', at(1))).toMatchObject({ points: 10 });
  });
});

describe('reversals that leave the balance below zero', () => {
  it('are refused unless allowed; a later credit pays the debt first', async () => {
    const o = await organization({ points_expire_after_days: 30 });
    await give(o, 'n', 50, 'n-1', T0);
    await spend(o, 'n', 40, 'n-spend', T0);
    await expect(
      reverseOperation({ organization_id: o, operation_id: 'n-1', reason: 'x', now: T0 }),
    ).rejects.toMatchObject({ status: 409 });
    const out = await reverseOperation({
      organization_id: o,
      operation_id: 'n-1',
      reason: 'x',
      allow_negative: true,
      now: T0,
    });
    expect(out.reversal.balance_after).toBe(-40);
    await expect(spend(o, 'n', 1, 'n-spend-2', T0)).rejects.toMatchObject({ status: 409 });
    // 100 credited: 40 repay the debt, 60 remain and lapse on day 31
    await applyChange({
      organization_id: o,
      user_id: 'n',
      amount: 100,
      reason: 'action',
      operation_id: 'n-2',
      now: at(1),
    });
    expect(await getBalance(o, 'n', at(2))).toMatchObject({
      points: 60,
      expiring: [{ points: 60, expires_at: at(31).toISOString() }],
    });
    expect(await getBalance(o, 'n', at(32))).toMatchObject({ points: 0 });
  });
});
