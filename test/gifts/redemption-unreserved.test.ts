/**
 * A redemption whose reserve step failed on server errors past its retries (the ledger down) cannot
 * be driven there over HTTP; its closing step is called here directly, against the real database:
 * without a hold it ends `failed` having taken nothing, with a hold written late it is released
 * once (`refunded`). Either way no points stay held.
 */
import { describe, expect, it } from 'vitest';

import { closeUnreserved, holdOperation, type RedemptionInput } from '../../activities/gifts/fulfilment.ts';
import { findRedemption } from '../../activities/gifts/store.ts';
import { creditPoints, debitPoints, getHistory } from '../../activities/loyalty/ledger.ts';
import { unique } from '../helpers/api.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();

async function funded(): Promise<RedemptionInput> {
  const organization_id = unique('unreserved');
  const user_id = unique('usr');
  await creditPoints({ organization_id, user_id, points: 300, reason: 'action', operation_id: `grant:${user_id}` });
  const redemption_id = unique('rdm');
  return {
    redemption_id,
    organization_id,
    user_id,
    gift_id: 'gft_x',
    gift_name: 'Steam 20',
    gift_type: 'electronic_pins',
    points: 100,
    order: { custom_identifier: redemption_id, kind: 'electronic_pins', product: 'Steam', amount: 20, country: 'US' },
  };
}

describe('a redemption whose points could not be reserved', () => {
  it('ends failed without any entry when no hold was written, and a second close changes nothing', async () => {
    const input = await funded();
    expect(await closeUnreserved(input, 'The points could not be reserved; nothing was taken')).toEqual({
      redemption_id: input.redemption_id,
      status: 'failed',
    });
    expect(await closeUnreserved(input, 'The points could not be reserved; nothing was taken')).toMatchObject({
      status: 'failed',
    });
    const doc = await findRedemption(input.redemption_id);
    expect(doc).toMatchObject({
      status: 'failed',
      points_spent: 0,
      points_refunded: 0,
      balance_after: 300,
      user_id: input.user_id,
    });
    const h = await getHistory(input.organization_id, input.user_id, 1, 10);
    expect(h.points).toBe(300);
    expect(h.entries).toHaveLength(1);
  });

  it('releases a hold written late: refunded once, the points back', async () => {
    const input = await funded();
    await debitPoints({
      organization_id: input.organization_id,
      user_id: input.user_id,
      points: 100,
      reason: 'redemption',
      operation_id: holdOperation(input.redemption_id),
    });
    for (let i = 0; i < 2; i += 1)
      expect(await closeUnreserved(input, 'The points could not be reserved; nothing was taken')).toMatchObject({
        status: 'refunded',
      });
    expect(await findRedemption(input.redemption_id)).toMatchObject({
      status: 'refunded',
      points_spent: 100,
      points_refunded: 100,
      balance_after: 200,
    });
    const h = await getHistory(input.organization_id, input.user_id, 1, 10);
    expect(h.points).toBe(300);
    expect(h.entries.map((e) => [e.reason, e.amount])).toEqual([
      ['refund', 100],
      ['redemption', -100],
      ['action', 300],
    ]);
  });
});
