/**
 * A refused redemption gives back the very points its hold took: each to its credit with the
 * original `expires_at`, so refusals cannot renew points about to lapse; what lapsed while the
 * points were held stays lapsed and is written down exactly once, even when the daily expiry run
 * passed those credits while they were held. The redemption's steps are called here in order,
 * against the real database and the sandbox provider (a number ending 0000 is refused), so the
 * clock can pass an expiry between the hold and the refusal.
 */
import { describe, expect, it } from 'vitest';

import {
  fulfilRedemption,
  type RedemptionInput,
  releaseRedemption,
  reserveRedemption,
} from '../../activities/gifts/fulfilment.ts';
import { findRedemption } from '../../activities/gifts/store.ts';
import { expireLapsedPoints } from '../../activities/loyalty/expiry.ts';
import { creditPoints, getBalance, getHistory } from '../../activities/loyalty/ledger.ts';
import { LedgerEntry } from '../../activities/loyalty/models.ts';
import { putRules } from '../../activities/loyalty/rules.ts';
import { unique } from '../helpers/api.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();

const DAY = 86_400_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function topUp(organization_id: string, user_id: string, points: number): RedemptionInput {
  const redemption_id = unique('rdm');
  return {
    redemption_id,
    organization_id,
    user_id,
    gift_id: 'gft_topup',
    gift_name: 'Telcel 100',
    gift_type: 'mobile_top-ups',
    points,
    order: {
      custom_identifier: redemption_id,
      kind: 'mobile_top-ups',
      product: 'Telcel',
      amount: 100,
      country: 'MX',
      phone_number: '+525512340000',
    },
  };
}

describe('the refund of a refused redemption', () => {
  it('gives back the lots the hold took with their original expires_at; what lapsed meanwhile stays lapsed and is written down once', async () => {
    const organization_id = unique('refund-lots');
    const user_id = unique('usr');
    await putRules(organization_id, { points_expire_after_days: 30 }, 'test');
    // 100 points lapsing in 3 s (credited as of 30 days ago less 3 s), 100 lapsing in 30 days.
    const soon = await creditPoints({
      organization_id,
      user_id,
      points: 100,
      reason: 'action',
      operation_id: `soon:${user_id}`,
      now: new Date(Date.now() - 30 * DAY + 3000),
    });
    const later = await creditPoints({
      organization_id,
      user_id,
      points: 100,
      reason: 'action',
      operation_id: `later:${user_id}`,
    });
    const input = topUp(organization_id, user_id, 150);

    // The hold takes the soonest-lapsing points first: all 100 of `soon`, 50 of `later`.
    expect(await reserveRedemption(input)).toMatchObject({ status: 'processing' });
    expect(await getBalance(organization_id, user_id)).toMatchObject({
      points: 50,
      expiring: [{ points: 50, expires_at: later.entry.expires_at }],
    });
    // Meanwhile expiry is switched off (later credits would never lapse), `soon` lapses, and the
    // daily run passes it while its points are held: nothing of it is left to write down.
    await putRules(organization_id, { points_expire_after_days: null }, 'test');
    await sleep(Math.max(0, new Date(soon.entry.expires_at!).getTime() - Date.now()) + 200);
    expect(await expireLapsedPoints({ organization_id })).toMatchObject({ entries_written: 0 });

    const answer = await fulfilRedemption(input);
    expect(answer).toMatchObject({ state: 'refused' });
    expect(await releaseRedemption(input, answer as { transaction_id: string | null; reason: string })).toMatchObject({
      status: 'refunded',
    });

    // Only `later` is spendable again, lapsing when it always did; `soon` did not come back to life.
    expect(await getBalance(organization_id, user_id)).toMatchObject({
      points: 100,
      expiring: [{ points: 100, expires_at: later.entry.expires_at }],
    });
    const h = await getHistory(organization_id, user_id, 1, 10);
    expect(h.entries.map((e) => [e.reason, e.amount, e.operation_id])).toEqual([
      ['expiry', -100, `redemption:${input.redemption_id}:refund:lapsed`],
      ['refund', 150, `redemption:${input.redemption_id}:refund`],
      ['redemption', -150, `redemption:${input.redemption_id}:hold`],
      ['action', 100, `later:${user_id}`],
      ['action', 100, `soon:${user_id}`],
    ]);
    expect(h.entries[0].balance_after).toBe(100); // the ledger's balance is what can be spent
    expect(await findRedemption(input.redemption_id)).toMatchObject({
      status: 'refunded',
      points_spent: 150,
      points_refunded: 50,
      points_lapsed: 100,
    });

    // A retried release and later expiry runs write nothing more: `soon` lapsed exactly once.
    expect(await releaseRedemption(input, answer as { transaction_id: string | null; reason: string })).toMatchObject({
      status: 'refunded',
    });
    expect(await expireLapsedPoints({ organization_id })).toMatchObject({ entries_written: 0 });
    expect((await getHistory(organization_id, user_id, 1, 10)).total).toBe(5);
    expect(await LedgerEntry.countDocuments({ organization_id, user_id, reason: 'expiry' })).toBe(1);
    // And when `later` lapses, the daily run writes what is left of it, once.
    const day31 = new Date(Date.now() + 31 * DAY).toISOString();
    expect(await expireLapsedPoints({ organization_id, now: day31 })).toMatchObject({
      entries_written: 1,
      points_expired: 100,
    });
    expect(await expireLapsedPoints({ organization_id, now: day31 })).toMatchObject({ entries_written: 0 });
    expect((await getHistory(organization_id, user_id, 1, 1)).entries[0]).toMatchObject({
      reason: 'expiry',
      amount: -100,
      balance_after: 0,
      operation_id: `expiry:${later.entry.entry_id}`,
    });
  });
});
