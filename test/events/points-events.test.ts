/**
 * The ledger's other events over HTTP: a gift's hold (points.debited), an admin's reversal
 * (points.reversed) and the expiry run (points.expired, run here in process with a clock days
 * ahead), each once, each verified with the Standard Webhooks library; seq and balance_after let a
 * receiver follow the balance.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { expireLapsedPoints } from '../../activities/loyalty/index.ts';
import { basicUser, call, newTenant, unique, until } from '../helpers/api.ts';
import { addEndpoint, receivedAt, type Receiver, startReceiver, verified } from '../helpers/receiver.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();
let rx: Receiver;
beforeAll(async () => {
  rx = await startReceiver();
});
afterAll(() => rx.close());

describe('points events', () => {
  it('tells debits, reversals and expiries once each, in an order seq and balance_after make plain', async () => {
    const t = await newTenant();
    const path = unique('/points');
    const ep = await addEndpoint(t, rx, path, [
      'points.credited',
      'points.debited',
      'points.reversed',
      'points.expired',
    ]);
    expect(
      (
        await call('PUT', '/loyalty/rules', {
          key: t.adminKey,
          json: { actions: { purchase: 100, bonus: 40 }, points_expire_after_days: 1 },
        })
      ).status,
    ).toBe(200);
    const u = await basicUser(t);
    const award = (action: string, key: string) =>
      call('POST', `/loyalty/award-points/${u.idp_id}`, {
        key: t.adminKey,
        json: { action_type: action },
        headers: { 'idempotency-key': key },
      });
    expect((await award('purchase', 'order-1')).status).toBe(200);
    expect((await award('bonus', 'review-1')).status).toBe(200);
    // A gift's hold: a debit.
    const gift = await call('POST', '/api/gifts/gifts', {
      key: t.adminKey,
      json: {
        gift_name: 'Voucher',
        gift_type: 'electronic_pins',
        supplier: 'Test',
        electronic_pin_amount: 1,
        points_value: 30,
      },
    });
    expect(gift.status).toBe(201);
    const redeem = await call('POST', `/api/gifts/gifts/${gift.body.gift.id}/redeem`, {
      key: u.key,
      json: { user_id: u.idp_id },
    });
    expect([200, 202]).toContain(redeem.status);
    // An admin's reversal of the bonus.
    const reversed = await call('POST', '/loyalty/reverse', {
      key: t.adminKey,
      json: { operation_id: 'review-1', user_id: u.user_id, reason: 'fake review' },
    });
    expect(reversed.status).toBe(200);
    expect(
      (
        await call('POST', '/loyalty/reverse', {
          key: t.adminKey,
          json: { operation_id: 'review-1', user_id: u.user_id, reason: 'again' },
        })
      ).body.duplicate,
    ).toBe(true);
    await receivedAt(rx, path, 4);
    // The daily run, three days on: what is left of the purchase lapses.
    const run = await expireLapsedPoints({
      now: new Date(Date.now() + 3 * 86_400_000).toISOString(),
      organization_id: t.organization_id,
    });
    expect(run.entries_written).toBeGreaterThanOrEqual(1);
    await expireLapsedPoints({
      now: new Date(Date.now() + 3 * 86_400_000).toISOString(),
      organization_id: t.organization_id,
    });
    const got = await receivedAt(rx, path, 4 + run.entries_written, 20_000);
    await new Promise((r) => setTimeout(r, 1500));
    expect(rx.received(path)).toHaveLength(got.length);
    const events = got.map((r) => verified(ep.secret, r)).sort((a, b) => a.data.seq - b.data.seq);
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    expect(events.map((e) => e.type)).toEqual([
      'points.credited',
      'points.credited',
      'points.debited',
      'points.reversed',
      ...Array(run.entries_written).fill('points.expired'),
    ]);
    expect(events.map((e) => e.data.seq)).toEqual(events.map((_, i) => i + 1));
    let balance = 0;
    for (const e of events) {
      balance += e.data.amount;
      expect(e.data.balance_after).toBe(balance);
      expect(e.data.user_id).toBe(u.user_id);
    }
    expect(events[2].data).toMatchObject({ reason: 'redemption', amount: -30 });
    expect(events[3].data).toMatchObject({
      reason: 'reversal',
      amount: -40,
      reverses_entry_id: events[1].data.entry_id,
    });
    expect(events.at(-1)!.data.reason).toBe('expiry');
    const history = await until(
      'the history',
      async () => (await call('GET', `/loyalty/points/${u.user_id}/history?limit=100`, { key: t.adminKey })).body,
      (h) => h.total === events.length,
      5000,
    );
    expect(history.entries[0].balance_after).toBe(balance);
  });
});
