/**
 * Referral milestones (rules.referral_milestones): a referrer's n-th completed referral pays the
 * milestone's points once, as one `referral` entry whose operation names the referrer and the
 * count; completions before it pay nothing more, a completion after it (or the same referral sent
 * again) does not pay it again.
 */
import { describe, expect, it } from 'vitest';

import { basicUser, call, newTenant, type Tenant, until } from '../helpers/api.ts';

type User = Awaited<ReturnType<typeof basicUser>>;
interface Entry {
  amount: number;
  reason: string;
  operation_id: string;
  description: string | null;
}

const refer = (t: Tenant, referred: User, referrer: User) =>
  call('POST', '/loyalty/process-referral', {
    key: t.adminKey,
    json: { referred_internal_id: referred.user_id, referrer_internal_id: referrer.user_id },
  });
const entriesOf = async (t: Tenant, u: User): Promise<Entry[]> => {
  const res = await call('GET', `/loyalty/points/${u.user_id}/history?limit=100`, { key: t.adminKey });
  return res.status === 404 ? [] : res.body.entries;
};
const milestonesOf = (entries: Entry[]) => entries.filter((e) => e.operation_id.startsWith('referral-milestone:'));
/** The referrer's entries once `n` referral credits (milestones included) are there. */
const entriesAfter = (t: Tenant, u: User, n: number) =>
  until(
    `${n} referral entries of the referrer`,
    () => entriesOf(t, u),
    (e) => e.filter((x) => x.reason === 'referral').length >= n,
    30_000,
  );

describe('referral milestones', () => {
  it("pay the referrer's 2nd completed referral 70 points once; a 3rd completion and a repeat pay nothing more", async () => {
    const t = await newTenant();
    const rules = await call('PUT', '/loyalty/rules', {
      key: t.adminKey,
      json: { referral_milestones: [{ count: 2, points: 70 }] },
    });
    expect(rules.status, JSON.stringify(rules.body)).toBe(200);
    expect(rules.body.referral_milestones).toEqual([{ count: 2, points: 70 }]);
    const referrer = await basicUser(t);
    const [a, b, c] = [await basicUser(t), await basicUser(t), await basicUser(t)];

    const first = await refer(t, a, referrer);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ duplicate: false, points_awarded: 100 });
    let entries = await entriesAfter(t, referrer, 1);
    expect(milestonesOf(entries)).toEqual([]);

    const second = await refer(t, b, referrer);
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body).toMatchObject({ duplicate: false, points_awarded: 100 });
    entries = await entriesAfter(t, referrer, 3);
    const paid = milestonesOf(entries);
    expect(paid).toHaveLength(1);
    expect(paid[0]).toMatchObject({
      amount: 70,
      reason: 'referral',
      operation_id: `referral-milestone:${referrer.user_id}:2`,
    });
    expect(entries.filter((e) => e.reason === 'referral').map((e) => e.amount)).toEqual([70, 100, 100]);
    const balance = await call('GET', `/loyalty/points/${referrer.user_id}`, { key: t.adminKey });
    expect(balance.body.points).toBe(270);
    // The referred users get their own points only.
    for (const u of [a, b]) expect((await entriesOf(t, u)).map((e) => e.amount)).toEqual([50]);

    // The same referral again: answered as the first, nothing paid.
    const again = await refer(t, b, referrer);
    expect(again.body).toMatchObject({ duplicate: true, referral_id: second.body.referral_id });
    // A third completion: its own 100, the milestone not again.
    const third = await refer(t, c, referrer);
    expect(third.status, JSON.stringify(third.body)).toBe(200);
    entries = await entriesAfter(t, referrer, 4);
    // Any late payment would land within moments of the completion.
    await new Promise((r) => setTimeout(r, 1000));
    entries = await entriesOf(t, referrer);
    expect(milestonesOf(entries)).toHaveLength(1);
    expect(entries.filter((e) => e.reason === 'referral').map((e) => e.amount)).toEqual([100, 70, 100, 100]);
    expect((await call('GET', `/loyalty/points/${referrer.user_id}`, { key: t.adminKey })).body.points).toBe(370);
  });

  it('a milestone added after the count was passed pays at the next completion, once', async () => {
    const t = await newTenant();
    const referrer = await basicUser(t);
    const users = [await basicUser(t), await basicUser(t), await basicUser(t)];
    for (const u of users.slice(0, 2)) expect((await refer(t, u, referrer)).status).toBe(200);
    expect(milestonesOf(await entriesOf(t, referrer))).toEqual([]);
    const set = await call('PUT', '/loyalty/rules', {
      key: t.adminKey,
      json: {
        // in any order: kept by count
        referral_milestones: [
          { count: 10, points: 1000 },
          { count: 2, points: 70 },
          { count: 1, points: 5 },
        ],
      },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.referral_milestones.map((m: { count: number }) => m.count)).toEqual([1, 2, 10]);
    // The rules are read by the worker that completes referrals: kept there up to 2 s.
    await new Promise((r) => setTimeout(r, 2500));
    expect((await refer(t, users[2], referrer)).status).toBe(200);
    const entries = await until(
      'the milestones paid',
      () => entriesOf(t, referrer),
      (e) => milestonesOf(e).length >= 2,
      30_000,
    );
    expect(
      milestonesOf(entries)
        .map((e) => [e.operation_id, e.amount])
        .sort(),
    ).toEqual([
      [`referral-milestone:${referrer.user_id}:1`, 5],
      [`referral-milestone:${referrer.user_id}:2`, 70],
    ]);
    expect((await call('GET', `/loyalty/points/${referrer.user_id}`, { key: t.adminKey })).body.points).toBe(375);
    // Refused: the same count twice.
    const twice = await call('PUT', '/loyalty/rules', {
      key: t.adminKey,
      json: {
        referral_milestones: [
          { count: 3, points: 1 },
          { count: 3, points: 2 },
        ],
      },
    });
    expect(twice.status).toBe(422);
  });
  it('pay once when the referrals that reach the count complete at the same moment', async () => {
    const t = await newTenant();
    expect(
      (
        await call('PUT', '/loyalty/rules', {
          key: t.adminKey,
          json: { referral_milestones: [{ count: 2, points: 70 }] },
        })
      ).status,
    ).toBe(200);
    const referrer = await basicUser(t);
    const users = await Promise.all([1, 2, 3, 4].map(() => basicUser(t)));
    const answers = await Promise.all(users.map((u) => refer(t, u, referrer)));
    for (const a of answers) expect(a.status, JSON.stringify(a.body)).toBe(200);
    const entries = await entriesAfter(t, referrer, 5);
    await new Promise((r) => setTimeout(r, 1000));
    expect(milestonesOf(await entriesOf(t, referrer))).toHaveLength(1);
    expect(milestonesOf(entries)[0]).toMatchObject({
      amount: 70,
      operation_id: `referral-milestone:${referrer.user_id}:2`,
    });
    expect((await call('GET', `/loyalty/points/${referrer.user_id}`, { key: t.adminKey })).body.points).toBe(470);
  });

  it('count a referral whose credit was reversed (it stays completed)', async () => {
    const t = await newTenant();
    expect(
      (
        await call('PUT', '/loyalty/rules', {
          key: t.adminKey,
          json: { referral_milestones: [{ count: 2, points: 70 }] },
        })
      ).status,
    ).toBe(200);
    const referrer = await basicUser(t);
    const [a, b] = [await basicUser(t), await basicUser(t)];
    const first = await refer(t, a, referrer);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const reversed = await call('POST', '/loyalty/reverse', {
      key: t.adminKey,
      json: { operation_id: `referral:${first.body.referral_id}:referrer`, reason: 'fraud check' },
    });
    expect(reversed.status, JSON.stringify(reversed.body)).toBe(200);
    expect(reversed.body).toMatchObject({ points_reversed: 100, record: { type: 'referral' } });
    expect((await refer(t, b, referrer)).status).toBe(200);
    const entries = await entriesAfter(t, referrer, 3);
    expect(milestonesOf(entries).map((e) => e.amount)).toEqual([70]);
    expect((await call('GET', `/loyalty/points/${referrer.user_id}`, { key: t.adminKey })).body.points).toBe(170);
  });
});
