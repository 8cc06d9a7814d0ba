/**
 * The referral steps' refusals decided by the pair claim (activities/loyalty/referrals.ts), called
 * in this process against the suite's database: two users claiming each other at the same instant
 * many times over, and a claim left by a referral that lost to another referrer.
 */
import mongoose from 'mongoose';
import { describe, expect, inject, it } from 'vitest';

import { upsertUser } from '../../activities/identity/users.ts';
import { recordReferral } from '../../activities/loyalty/referrals.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();

const org = () => inject('platformEnv').DEFAULT_ORGANIZATION_ID ?? 'default';
let n = 0;
const newUser = async () =>
  (await upsertUser({ organization_id: org(), idp_id: `pair-${Date.now()}-${(n += 1)}` })).user.user_id;
const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'recorded',
    (err: { status?: number }) => err.status ?? err,
  );

describe('referral pair claims', () => {
  it('records exactly one of "A refers B" and "B refers A" sent at the same instant (20 pairs)', async () => {
    const pairs = await Promise.all(Array.from({ length: 20 }, async () => [await newUser(), await newUser()]));
    const results = await Promise.all(
      pairs.map(([a, b]) =>
        Promise.all([
          outcome(recordReferral({ organization_id: org(), referrer_user_id: a, referred_user_id: b })),
          outcome(recordReferral({ organization_id: org(), referrer_user_id: b, referred_user_id: a })),
        ]),
      ),
    );
    for (const r of results) expect(r.sort()).toEqual([409, 'recorded']);
    const referrals = await mongoose.connection
      .collection('referrals')
      .countDocuments({ referred_user_id: { $in: pairs.flat() } });
    expect(referrals).toBe(20);
  });

  it('drops a claim whose referred user was referred by someone else, and keeps one still being recorded', async () => {
    const [a, b, c] = [await newUser(), await newUser(), await newUser()];
    const pairs = mongoose.connection.collection('referral_pairs');
    const key = a < b ? `${org()}|${a}|${b}` : `${org()}|${b}|${a}`;
    // "A refers B" claimed the pair and stopped before recording its referral: B may be in flight.
    await pairs.insertOne({
      _id: key as any,
      organization_id: org(),
      referrer_user_id: a,
      referred_user_id: b,
      referral_id: 'ref_lost',
    });
    await expect(
      recordReferral({ organization_id: org(), referrer_user_id: b, referred_user_id: a }),
    ).rejects.toMatchObject({ status: 409 });
    // C's referral of B was recorded instead: that claim can never become a referral.
    expect((await recordReferral({ organization_id: org(), referrer_user_id: c, referred_user_id: b })).existing).toBe(
      false,
    );
    const back = await recordReferral({ organization_id: org(), referrer_user_id: b, referred_user_id: a });
    expect(back).toMatchObject({ existing: false, referral: { referrer_user_id: b, referred_user_id: a } });
    expect(await pairs.findOne({ _id: key as any })).toMatchObject({
      referrer_user_id: b,
      referral_id: back.referral.referral_id,
    });
  });
});
