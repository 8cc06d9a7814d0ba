/**
 * One person's data in the money components (loyalty, gifts, billing) and the event log: export
 * and erasure, called in process for user A of an organization whose data (and user B's, and C's)
 * was made over HTTP. The export holds A's records and none of B's; after the erasure nothing of A
 * is readable through the routes, the books are kept under the tombstone with their totals and the
 * ledger's chain, B is untouched, and a second erasure changes nothing.
 */
import { describe, expect, it } from 'vitest';

import { billingUserData, recordUsage, tokenUsage } from '../../activities/billing/index.ts';
import { eventsSettled, eventsUserData } from '../../activities/events/index.ts';
import { giftsUserData } from '../../activities/gifts/index.ts';
import { getBalance, ledgerEventsSettled, loyaltyUserData } from '../../activities/loyalty/index.ts';
import { entriesOfUser, referralOf, tombstoneEntries } from '../../activities/loyalty/store.ts';
import { adminKey, basicUser, call, newTenant, unique } from '../helpers/api.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();

const settle = async () => {
  await ledgerEventsSettled();
  await eventsSettled();
};

/** A stage run once, by the first test that awaits it. */
const once = <T>(stage: () => Promise<T>) => {
  let run: Promise<T> | undefined;
  return () => (run ??= stage());
};

describe('privacy: loyalty, gifts, billing and events of one user', () => {
  // One organization's data made once, then exported, then erased: each stage runs once, when
  // the first test needing it asks, so every test below also runs alone (-t) and in any order.
  const made = once(async () => {
    const t = await newTenant();
    const admin = t.adminKey;
    expect(
      (
        await call('PUT', '/loyalty/rules', {
          key: admin,
          json: {
            actions: {
              purchase: 100,
              bonus: 40,
              quiz: { points: 5, self_service: true, limit: { max: 3, per: 'day' } },
            },
          },
        })
      ).status,
    ).toBe(200);
    const a = await basicUser(t);
    const b = await basicUser(t);
    const c = await basicUser(t);

    // Points: awards (one keyed by the client, one limited), an admin's reversal with a note about A.
    const award = (u: { idp_id: string }, action: string, key: string) =>
      call('POST', `/loyalty/award-points/${u.idp_id}`, {
        key: admin,
        json: { action_type: action },
        headers: { 'idempotency-key': key },
      });
    expect((await award(a, 'purchase', 'order-1')).status).toBe(200);
    expect((await award(a, 'bonus', 'review-1')).status).toBe(200);
    expect((await award(b, 'purchase', 'order-1')).status).toBe(200);
    expect(
      (await call('POST', `/loyalty/award-points/${a.idp_id}`, { key: a.key, json: { action_type: 'quiz' } })).status,
    ).toBe(200);
    expect(
      (
        await call('POST', '/loyalty/reverse', {
          key: admin,
          json: {
            operation_id: 'review-1',
            user_id: a.user_id,
            reason: `fake review by ${a.idp_id}, call +525511112222`,
          },
        })
      ).status,
    ).toBe(200);

    // Referrals: A refers B (A's code), C refers A (C's code).
    const codeOf = async (u: { key: string; idp_id: string }) =>
      (await call('POST', '/loyalty/generate-referral-qr', { key: u.key, json: { idp_id: u.idp_id } })).body
        .referral_code as string;
    const codeA = await codeOf(a);
    const ab = await call('POST', '/loyalty/process-referral', {
      key: b.key,
      json: { referred_internal_id: b.user_id, referrer_internal_id: codeA },
    });
    expect(ab.status, JSON.stringify(ab.body)).toBe(200);
    const ca = await call('POST', '/loyalty/process-referral', {
      key: a.key,
      json: { referred_internal_id: a.user_id, referrer_internal_id: await codeOf(c) },
    });
    expect(ca.status, JSON.stringify(ca.body)).toBe(200);

    // Gifts: A redeems twice (one delivered, one refused: numbers ending 0000), B once.
    const gift = await call('POST', '/api/gifts/gifts', {
      key: admin,
      json: {
        gift_name: 'Telcel 10',
        gift_type: 'mobile_top-ups',
        country: 'MX',
        telco_supplier: 'Telcel',
        recharge_amount: 10,
        points_value: 30,
      },
    });
    expect(gift.status).toBe(201);
    const redeem = (u: { key: string; idp_id: string }, phone: string) =>
      call('POST', `/api/gifts/gifts/${gift.body.gift.id}/redeem`, {
        key: u.key,
        json: { user_id: u.idp_id, phone_number: phone },
      });
    const phoneA = '+525512345678';
    const r1 = await redeem(a, phoneA);
    const r2 = await redeem(a, '+525512340000');
    const rb = await redeem(b, '+525598765432');
    for (const r of [r1, r2, rb]) expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r2.body.redemption.status).toBe('refunded');

    // Tokens: a package, a purchase each, and model calls (recorded by the LLM gateway in process).
    const pkg = unique('pkg');
    expect(
      (
        await call('POST', '/api/billing/packages', {
          key: adminKey(),
          json: { id: pkg, name: 'Starter', tokens: 1000, price: 9.99, currency: 'usd', validity_days: 30 },
        })
      ).status,
    ).toBe(201);
    const buy = (u: { key: string; user_id: string }) =>
      call('POST', '/api/billing/purchase-tokens', {
        key: u.key,
        json: { user_id: u.user_id, package_id: pkg, payment_method: { type: 'card', token: 'pm_card_visa' } },
      });
    const buyA = await buy(a);
    expect(buyA.status, JSON.stringify(buyA.body)).toBe(200);
    expect((await buy(b)).status).toBe(200);
    await recordUsage({
      organization_id: t.organization_id,
      user_id: a.user_id,
      agent: 'support',
      model: 'm',
      prompt_tokens: 30,
      completion_tokens: 12,
      call_id: unique('call'),
    });
    await recordUsage({
      organization_id: t.organization_id,
      user_id: b.user_id,
      agent: 'support',
      model: 'm',
      prompt_tokens: 7,
      completion_tokens: 3,
      call_id: unique('call'),
    });
    await settle();

    const org = t.organization_id;
    const scope = { organization_id: org, user_id: a.user_id, idp_id: a.idp_id };
    const historyA = (await call('GET', `/loyalty/points/${a.user_id}/history?limit=100`, { key: admin })).body;
    const balanceA = await getBalance(org, a.user_id);
    const balanceB = await getBalance(org, b.user_id);
    const tokensA = await tokenUsage(org, a.user_id);
    const tokensB = await tokenUsage(org, b.user_id);
    const logBefore = await allEvents(admin, org);
    const namingA = logBefore.filter((e) => JSON.stringify(e).includes(a.user_id));
    expect(namingA.length).toBeGreaterThanOrEqual(8);
    return {
      t,
      admin,
      a,
      b,
      c,
      award,
      codeA,
      phoneA,
      r1,
      r2,
      rb,
      buyA,
      org,
      scope,
      historyA,
      balanceA,
      balanceB,
      tokensA,
      tokensB,
      logBefore,
      namingA,
    };
  });
  const exported = once(async () => {
    const m = await made();
    const { scope } = m;
    const parts = {
      loyalty: await loyaltyUserData.export(scope),
      gifts: await giftsUserData.export(scope),
      billing: await billingUserData.export(scope),
      events: await eventsUserData.export(scope),
    };
    return { ...m, parts };
  });
  // The erasure (events last: the others' changes are told there), and what it leaves.
  const erased = once(async () => {
    const m = await exported();
    const { admin, org, scope } = m;
    const tomb = `del_${unique('t').replace('-', '')}`;
    const erase = { ...scope, tombstone: tomb };
    const first = {
      loyalty: await loyaltyUserData.erase(erase),
      gifts: await giftsUserData.erase(erase),
      billing: await billingUserData.erase(erase),
      events: await eventsUserData.erase(erase),
    };
    const logAfter = await allEvents(admin, org);
    const kept = await entriesOfUser(org, tomb);
    return { ...m, tomb, erase, first, logAfter, kept };
  });

  it('exports A without B: loyalty, gifts, billing and the events naming A', async () => {
    const { a, b, c, codeA, phoneA, r1, r2, rb, buyA, historyA, balanceA, tokensA, namingA, parts } = await exported();
    const text = JSON.stringify(parts);
    for (const other of [b.user_id, b.idp_id, c.user_id, c.idp_id, '+525598765432', rb.body.redemption.id, 'pte_never'])
      expect(text).not.toContain(other);
    for (const p of Object.values(parts)) expect(p.files).toEqual([]); // none of these components stores objects
    expect(JSON.parse(JSON.stringify(parts))).toEqual(parts); // JSON-safe
    const L = parts.loyalty.data as Record<string, any[]>;
    expect(L.entries.map((e) => e.entry_id)).toEqual([...historyA.entries].reverse().map((e: any) => e.entry_id));
    expect(L.entries.find((e) => e.operation_id === `award:${a.user_id}:order-1`)).toMatchObject({
      client_request_id: 'order-1',
      amount: 100,
    });
    expect(L.balance[0]).toMatchObject({ points: balanceA.points, entries: balanceA.entries });
    expect(L.referral_codes).toEqual([expect.objectContaining({ code: codeA })]);
    expect(L.referrals.map((r) => r.role).sort()).toEqual(['referred', 'referrer']);
    const G = parts.gifts.data as Record<string, any[]>;
    expect(G.redemptions.map((r) => r.id).sort()).toEqual([r1.body.redemption.id, r2.body.redemption.id].sort());
    expect(G.redemptions.find((r) => r.id === r1.body.redemption.id)).toMatchObject({
      phone_number: phoneA,
      status: 'completed',
      points_spent: 30,
    });
    const B = parts.billing.data as Record<string, any[]>;
    expect(B.purchases).toEqual([
      expect.objectContaining({ transaction_id: buyA.body.transaction_id, tokens: 1000, status: 'succeeded' }),
    ]);
    expect(B.usage).toEqual([expect.objectContaining({ tokens: 42, agent: 'support' })]);
    expect(B.balance[0].remaining_tokens).toBe(tokensA.remaining_tokens);
    const E = parts.events.data as Record<string, any[]>;
    expect(E.events.map((e) => e.id).sort()).toEqual(namingA.map((e) => e.id).sort());
    expect(E.events.map((e) => e.type)).toEqual(
      expect.arrayContaining([
        'points.credited',
        'points.reversed',
        'points.debited',
        'redemption.completed',
        'redemption.refunded',
        'tokens.purchased',
        'referral.completed',
      ]),
    );
  }, 120_000);

  it('erases A: nothing of A through the routes or in the event log, the books kept under the tombstone, B untouched', async () => {
    const {
      admin,
      a,
      b,
      c,
      codeA,
      phoneA,
      r1,
      r2,
      rb,
      org,
      historyA,
      balanceA,
      balanceB,
      tokensA,
      tokensB,
      logBefore,
      namingA,
      parts,
      tomb,
      first,
      logAfter,
      kept,
    } = await erased();
    const L = parts.loyalty.data as Record<string, any[]>;
    expect(first.loyalty).toMatchObject({
      entries_tombstoned: historyA.total,
      referral_codes_deleted: 1,
      referrals_tombstoned: 2,
      referral_pairs_rekeyed: 2,
    });
    expect(first.gifts).toEqual({ redemptions_tombstoned: 2 });
    expect(first.billing).toEqual({
      purchases_tombstoned: 1,
      credits_tombstoned: 1,
      refunds_tombstoned: 0,
      usage_tombstoned: 1,
    });
    expect(first.events.events_tombstoned).toBe(namingA.length);

    // Nothing of A through the routes.
    expect((await call('GET', `/loyalty/points/${a.user_id}`, { key: admin })).status).toBe(404);
    expect((await call('GET', `/loyalty/points/${a.user_id}/history`, { key: admin })).status).toBe(404);
    expect((await call('GET', `/referral/${codeA}`)).status).toBe(404);
    const listA = await call('GET', `/api/gifts/redemptions?user_id=${a.user_id}`, { key: admin });
    expect(listA.status).toBe(200);
    expect(listA.body.redemptions).toEqual([]);
    const usageA = (await call('GET', `/api/billing/usage/${a.user_id}`, { key: admin })).body.usage;
    expect(usageA).toMatchObject({ total_tokens: 0, remaining_tokens: 0, credits: [] });
    expect(logAfter.map((e) => e.id).sort()).toEqual(logBefore.map((e) => e.id).sort()); // the log is kept
    const logText = JSON.stringify(logAfter);
    for (const gone of [a.user_id, a.idp_id, phoneA, '+525511112222']) expect(logText).not.toContain(gone);
    expect(logText).toContain(tomb);

    // The books, under the tombstone: the same entries, seq 1..n, balance_after the running sum.
    expect(kept.map((e) => e.entry_id)).toEqual(L.entries.map((e) => e.entry_id));
    let sum = 0;
    kept.forEach((e, i) => {
      sum += e.amount;
      expect(e.seq).toBe(i + 1);
      expect(e.balance_after).toBe(sum);
      const { _id, ...fields } = e; // _id keeps the old key (user-data.ts says why)
      expect(JSON.stringify(fields)).not.toContain(a.user_id);
      expect(JSON.stringify(fields)).not.toContain(a.idp_id);
      expect(JSON.stringify(fields)).not.toContain('+525511112222');
    });
    expect(kept.find((e) => e.reason === 'action' && e.description === 'quiz')!.operation_id).toMatch(
      new RegExp(`^award:${tomb}:quiz:`),
    );
    expect((await getBalance(org, tomb)).points).toBe(balanceA.points);
    expect((await tokenUsage(org, tomb)).remaining_tokens).toBe(tokensA.remaining_tokens);
    const red = await call('GET', `/api/gifts/redemptions/${r1.body.redemption.id}`, { key: admin });
    expect(red.body.redemption).toMatchObject({
      user_id: tomb,
      phone_number: tomb,
      points_spent: 30,
      status: 'completed',
    });
    const refused = await call('GET', `/api/gifts/redemptions/${r2.body.redemption.id}`, { key: admin });
    expect(refused.body.redemption).toMatchObject({ user_id: tomb, status: 'refunded', points_refunded: 30 });

    // B (and C) untouched; the referral keeps the other side.
    expect(await getBalance(org, b.user_id)).toEqual(balanceB);
    expect(await tokenUsage(org, b.user_id)).toEqual(tokensB);
    expect(await referralOf(org, b.user_id)).toMatchObject({
      referred_user_id: b.user_id,
      referrer_user_id: tomb,
      status: 'completed',
    });
    expect(await referralOf(org, tomb)).toMatchObject({ referred_user_id: tomb, referrer_user_id: c.user_id });
    const redB = await call('GET', `/api/gifts/redemptions/${rb.body.redemption.id}`, { key: b.key });
    expect(redB.body.redemption).toMatchObject({ user_id: b.user_id, phone_number: '+525598765432' });
    expect(logAfter.filter((e) => JSON.stringify(e).includes(b.user_id)).length).toBeGreaterThanOrEqual(4);
  }, 120_000);

  it('a second erasure changes nothing, and a later write for the erased user is refused', async () => {
    const { admin, a, org, award, tomb, erase, logAfter, kept } = await erased();
    const second = {
      loyalty: await loyaltyUserData.erase(erase),
      gifts: await giftsUserData.erase(erase),
      billing: await billingUserData.erase(erase),
      events: await eventsUserData.erase(erase),
    };
    for (const report of Object.values(second)) for (const n of Object.values(report)) expect(n).toBe(0);
    expect(await allEvents(admin, org)).toEqual(logAfter);
    expect((await entriesOfUser(org, tomb)).map((e) => [e.seq, e.balance_after, e.operation_id])).toEqual(
      kept.map((e) => [e.seq, e.balance_after, e.operation_id]),
    );

    // A write for the erased user id afterwards never forks the kept chain: it is refused.
    const late = await award(a, 'purchase', 'order-late');
    expect(late.status).not.toBe(200);
    expect((await entriesOfUser(org, tomb)).length).toBe(kept.length);
  }, 120_000);
});

describe('privacy: an erasure stopped half way, and an admin who created an endpoint', () => {
  it('a second call finishes a ledger left half tombstoned, with the chain intact', async () => {
    const t = await newTenant();
    const a = await basicUser(t);
    for (let i = 0; i < 6; i += 1) {
      const r = await call('POST', `/loyalty/award-points/${a.idp_id}`, {
        key: t.adminKey,
        json: { action_type: 'purchase' },
        headers: { 'idempotency-key': `o-${i}` },
      });
      expect(r.status).toBe(200);
    }
    await settle();
    const org = t.organization_id;
    const tombstone = `del_${unique('t').replace('-', '')}`;
    const before = await entriesOfUser(org, a.user_id);
    // The first run "crashed" after tombstoning the first three entries.
    await tombstoneEntries(
      a.user_id,
      before.slice(0, 3).map((e) => ({
        _id: e._id,
        set: {
          user_id: tombstone,
          operation_id: e.operation_id.replace(a.user_id, tombstone),
          request_id: e.request_id?.replace(a.user_id, tombstone),
        },
      })),
    );
    expect((await entriesOfUser(org, a.user_id)).length).toBe(3);
    const report = await loyaltyUserData.erase({
      organization_id: org,
      user_id: a.user_id,
      idp_id: a.idp_id,
      tombstone,
    });
    expect(report.entries_tombstoned).toBe(3);
    const kept = await entriesOfUser(org, tombstone);
    expect(kept.map((e) => [e.seq, e.balance_after])).toEqual(before.map((e) => [e.seq, e.balance_after]));
    expect(kept.every((e) => !e.operation_id.includes(a.user_id) && !(e.request_id ?? '').includes(a.user_id))).toBe(
      true,
    );
    expect((await entriesOfUser(org, a.user_id)).length).toBe(0);
  });

  it("tombstones the creator of the admin's endpoint, which keeps working", async () => {
    const t = await newTenant();
    const rx = await startReceiver();
    const created = await call('POST', '/api/webhooks/endpoints', {
      key: t.adminKey,
      json: { url: rx.url('/hook'), events: ['*'] },
    }).finally(() => rx.close());
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const scope = { organization_id: t.organization_id, user_id: t.admin.user_id, idp_id: t.admin.idp_id };
    const exported = await eventsUserData.export(scope);
    expect(exported.data.endpoints_created).toEqual([
      expect.objectContaining({ endpoint_id: created.body.endpoint.id }),
    ]);
    const tombstone = `del_${unique('t').replace('-', '')}`;
    expect(await eventsUserData.erase({ ...scope, tombstone })).toMatchObject({ endpoint_creators_tombstoned: 1 });
    expect(await eventsUserData.erase({ ...scope, tombstone })).toEqual({
      events_tombstoned: 0,
      endpoint_creators_tombstoned: 0,
    });
    const ep = await call('GET', `/api/webhooks/endpoints/${created.body.endpoint.id}`, { key: t.adminKey });
    expect(ep.status).toBe(200);
    expect(JSON.stringify(ep.body)).not.toContain(t.admin.user_id);
    expect((await eventsUserData.export(scope)).data.endpoints_created).toEqual([]);
  });
});

async function allEvents(key: string, organization_id: string): Promise<any[]> {
  const out: any[] = [];
  for (let page = 1; ; page += 1) {
    const res = await call('GET', `/api/events?organization_id=${organization_id}&limit=100&page=${page}`, { key });
    expect(res.status).toBe(200);
    out.push(...res.body.events);
    if (!res.body.has_more) return out;
  }
}
