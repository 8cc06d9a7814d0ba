/**
 * What an erasure never reopens (docs/privacy.md): a person's erasure keeps the books and keeps
 * every once-only rule holding. A receipt the erased user scanned stays used for the whole
 * organization; the same person joining again with the same idp_id starts at zero and earns no
 * once-only reward a second time (once-ever and per-day awards, being referred, the referral
 * window counted from their first account); the marker that makes this work holds no readable
 * person. Also: concurrent exports of one user take one of the organization's places, and an
 * organization's erasures delete a bounded number at a time.
 */
import mongoose from 'mongoose';
import { describe, expect, it } from 'vitest';

import { creditPoints, debitPoints, refundDebit } from '../../activities/loyalty/index.ts';
import { entriesOfUser, tombstoneEntries } from '../../activities/loyalty/store.ts';
import { ERASURES_RUNNING_PER_ORGANIZATION } from '../../activities/privacy/constants.ts';
import {
  erasureKey,
  insertErasureOnce,
  markErasureCompleted,
  releaseErasureSlot,
  takeErasureSlot,
} from '../../activities/privacy/store.ts';
import { basicUser, call, fileForm, newTenant, type Tenant, until } from '../helpers/api.ts';
import { renderReceipt } from '../helpers/receipts.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';
import { balance, groceries, shop } from '../helpers/shop.ts';

useSuiteRuntime();

type User = Awaited<ReturnType<typeof basicUser>>;

async function erase(t: Tenant, u: User): Promise<string> {
  const started = await call('DELETE', `/api/users/${u.user_id}`, { key: t.adminKey, json: {} });
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  const done = await until(
    'the erasure completed',
    () => call('GET', `/api/users/${u.user_id}/erasure`, { key: t.adminKey }),
    (r) => r.body.erasure?.status === 'completed',
    180_000,
    500,
  );
  return done.body.erasure.erasure_id;
}

const award = (t: Tenant, u: User, action: string) =>
  call('POST', `/loyalty/award-points/${u.idp_id}`, { key: u.key, json: { action_type: action } });
const refer = (t: Tenant, referred: User, referrer: User) =>
  call('POST', '/loyalty/process-referral', {
    key: t.adminKey,
    json: { referred_internal_id: referred.user_id, referrer_internal_id: referrer.user_id },
  });
const points = async (t: Tenant, u: User) => {
  const res = await call('GET', `/loyalty/points/${u.user_id}`, { key: t.adminKey });
  return res.status === 404 ? 0 : (res.body.points as number);
};

describe('an erasure never reopens a once-only rule', () => {
  it('a receipt scanned by an erased user stays used: another user scanning it is a duplicate and earns nothing', async () => {
    const s = await shop();
    const a = await basicUser(s.t);
    const b = await basicUser(s.t);
    const image = await renderReceipt(groceries('2026-11-21'));
    const scan = (u: User, data: Buffer, name: string, type: string) =>
      call('POST', `/retail/receipts?venue_id=${s.venue.id}`, { key: u.key, form: fileForm({}, { data, name, type }) });
    const first = await scan(a, image, 'receipt.png', 'image/png');
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ status: 'completed', total_points: 50 });
    expect((await scan(b, image, 'receipt.png', 'image/png')).body).toMatchObject({
      status: 'rejected',
      duplicate_of: first.body.id,
    });

    await erase(s.t, a);

    // The same image, and the same purchase photographed again (another file: venue, date and total match).
    const jpeg = await renderReceipt(groceries('2026-11-21'), 'jpeg');
    for (const [data, name, type] of [
      [image, 'receipt.png', 'image/png'],
      [jpeg, 'again.jpg', 'image/jpeg'],
    ] as const) {
      const again = await scan(b, data, name, type);
      expect(again.status, name).toBe(200);
      expect(again.body, name).toMatchObject({
        status: 'rejected',
        duplicate_of: first.body.id,
        total_points: 0,
        points_processed: false,
      });
    }
    expect(await balance(s.t, b.user_id)).toBe(0);
    const report = (await call('GET', `/api/users/${a.user_id}/erasure`, { key: s.t.adminKey })).body.erasure.steps
      .scanning.report;
    expect(report).toMatchObject({ scans_deleted: 1, fingerprints_kept: 2, fingerprints_released: 0 });
  }, 300_000);

  it('the same person joining again starts at zero and earns no once-only reward again; the marker names no one', async () => {
    const t = await newTenant();
    const c = await basicUser(t);
    const d = await basicUser(t);
    const a = await basicUser(t);
    // Once ever, once a day, and the referral bonuses (referrer 100, newcomer 50 by default).
    for (const action of ['profile_completed', 'daily_login'])
      expect((await award(t, a, action)).status, action).toBe(200);
    const referred = await refer(t, a, c);
    expect(referred.status, JSON.stringify(referred.body)).toBe(200);
    expect(referred.body).toMatchObject({ points_awarded: 100, referred_points_awarded: 50 });
    const cBefore = await points(t, c);
    expect(await points(t, a)).toBeGreaterThan(50);

    await erase(t, a);
    const back = await basicUser(t, a.idp_id);
    expect(back.user_id).not.toBe(a.user_id);
    expect(await points(t, back)).toBe(0);
    for (const action of ['profile_completed', 'daily_login']) {
      const res = await award(t, back, action);
      expect(res.status, `${action}: ${JSON.stringify(res.body)}`).toBe(409);
    }
    // Referred once per person: by someone else, or by the same referrer, nothing is credited.
    for (const referrer of [d, c]) {
      const res = await refer(t, back, referrer);
      expect(res.status, JSON.stringify(res.body)).toBe(409);
      expect(JSON.stringify(res.body)).toMatch(/cannot be referred/);
    }
    expect(await points(t, back)).toBe(0);
    expect(await points(t, c)).toBe(cBefore);
    expect(await points(t, d)).toBe(0);
    // A reward with no once-only rule is earned as by anyone.
    const purchase = (await call('GET', '/loyalty/rules', { key: t.adminKey })).body.rules.actions.purchase as number;
    expect(
      (
        await call('POST', `/loyalty/award-points/${back.idp_id}`, {
          key: t.adminKey,
          json: { action_type: 'purchase' },
        })
      ).status,
    ).toBe(200);
    expect(await points(t, back)).toBe(purchase);

    // Erased a second time and back a third: still the same person.
    await erase(t, back);
    const third = await basicUser(t, a.idp_id);
    expect((await award(t, third, 'profile_completed')).status).toBe(409);
    expect((await refer(t, third, d)).status).toBe(409);

    // The markers hold a keyed hash, never the idp_id; someone never erased has none.
    const people = await mongoose.connection
      .collection('identity_erased_people')
      .find({ organization_id: t.organization_id })
      .toArray();
    expect(people).toHaveLength(1);
    expect(JSON.stringify(people)).not.toContain(a.idp_id);
    expect(people[0].erasures).toHaveLength(2);
    // Facts only: no tombstone of the erased accounts, nothing that links the new account to them.
    expect(JSON.stringify(people)).not.toMatch(new RegExp(`del_|${a.user_id}|${back.user_id}`));
    const third_doc = await mongoose.connection.collection('users').findOne({ user_id: third.user_id });
    expect(third_doc).toMatchObject({ returning: true });
    expect(JSON.stringify(third_doc)).not.toMatch(/del_/);
    const fresh = await basicUser(t);
    expect((await award(t, fresh, 'profile_completed')).status).toBe(200);
  }, 300_000);
});

describe('a person who joins again while their erasure is still under way', () => {
  it('gets no once-only reward again: the facts are kept before the idp_id is freed', async () => {
    const t = await newTenant();
    const c = await basicUser(t);
    const d = await basicUser(t);
    const a = await basicUser(t);
    expect((await award(t, a, 'profile_completed')).status).toBe(200);
    expect((await refer(t, a, c)).status).toBe(200);
    // The organization's places are all taken by erasures that hold them: A's erasure begins, then waits.
    const holders = Array.from({ length: ERASURES_RUNNING_PER_ORGANIZATION }, (_, n) =>
      erasureKey(t.organization_id, `usr_holder${n}`),
    );
    for (const [n, key] of holders.entries()) {
      await insertErasureOnce({
        _id: key,
        erasure_id: `era_holder${n}${Date.now()}`,
        organization_id: t.organization_id,
        user_id: `usr_holder${n}`,
        tombstone: `del_holder${n}`,
        requested_by: { key_id: 'k', user_id: 'u', level: 1 },
      });
      expect(await takeErasureSlot(t.organization_id, key, ERASURES_RUNNING_PER_ORGANIZATION)).toBe(true);
    }
    expect((await call('DELETE', `/api/users/${a.user_id}`, { key: t.adminKey, json: {} })).status).toBe(202);
    const back = await until(
      'the idp_id freed',
      () => basicUser(t, a.idp_id),
      (u) => u.user_id !== a.user_id,
      60_000,
      500,
    );
    expect((await call('GET', `/api/users/${a.user_id}/erasure`, { key: t.adminKey })).body.erasure.status).toBe(
      'processing',
    );
    // The old account's records are not renamed yet: the kept facts answer all the same.
    expect((await award(t, back, 'profile_completed')).status).toBe(409);
    for (const referrer of [c, d]) expect((await refer(t, back, referrer)).status).toBe(409);
    expect(await points(t, back)).toBe(0);
    // The places come free: the erasure completes.
    for (const key of holders) await releaseErasureSlot(t.organization_id, key, ERASURES_RUNNING_PER_ORGANIZATION);
    await until(
      'the erasure completed',
      () => call('GET', `/api/users/${a.user_id}/erasure`, { key: t.adminKey }),
      (r) => r.body.erasure?.status === 'completed',
      180_000,
      500,
    );
    expect((await award(t, back, 'profile_completed')).status).toBe(409);
  }, 300_000);
});

describe('a refund to a ledger an erasure is renaming', () => {
  it('never forks the chain: it waits until the renaming is done, then goes on top of it', async () => {
    const org = `org-fork-${Date.now()}`;
    const user_id = `usr_fork${Date.now()}`;
    const tombstone = `del_fork${Date.now()}`;
    await creditPoints({
      organization_id: org,
      user_id,
      points: 100,
      reason: 'action',
      operation_id: `award:${user_id}:a`,
    });
    await debitPoints({
      organization_id: org,
      user_id,
      points: 30,
      reason: 'redemption',
      operation_id: `hold:${user_id}`,
    });
    await creditPoints({
      organization_id: org,
      user_id,
      points: 10,
      reason: 'action',
      operation_id: `award:${user_id}:b`,
    });
    const entries = (await entriesOfUser(org, user_id)).sort((x, y) => x.seq - y.seq);
    expect(entries.map((e) => e.seq)).toEqual([1, 2, 3]);
    // Halfway: the first two renamed (the hold among them), the newest not yet.
    await tombstoneEntries(
      user_id,
      entries.slice(0, 2).map((e) => ({ _id: e._id, set: { user_id: tombstone, operation_id: e.operation_id } })),
    );
    await expect(
      refundDebit({
        organization_id: org,
        user_id,
        debit_operation_id: `hold:${user_id}`,
        operation_id: `refund:${user_id}`,
        reason: 'refund',
      }),
    ).rejects.toMatchObject({ status: 503 });
    expect(await entriesOfUser(org, tombstone)).toHaveLength(2);
    await tombstoneEntries(
      user_id,
      entries.slice(2).map((e) => ({ _id: e._id, set: { user_id: tombstone, operation_id: e.operation_id } })),
    );
    const refund = await refundDebit({
      organization_id: org,
      user_id,
      debit_operation_id: `hold:${user_id}`,
      operation_id: `refund:${user_id}`,
      reason: 'refund',
    });
    expect(refund.entry).toMatchObject({ seq: 4, amount: 30, balance_after: 110 });
    const chain = (await entriesOfUser(org, tombstone)).sort((x, y) => x.seq - y.seq);
    expect(chain.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(chain.map((e) => e._id)).toEqual([1, 2, 3, 4].map((n) => `${org}|${user_id}|${n}`));
    // The erased user id itself can start nothing new.
    await expect(
      creditPoints({ organization_id: org, user_id, points: 1, reason: 'action', operation_id: `award:${user_id}:c` }),
    ).rejects.toMatchObject({ status: 503 });
  });
});

describe('exports: one place per user', () => {
  it("concurrent export requests of one basic key take one of the organization's places and answer the same export", async () => {
    const t = await newTenant();
    const a = await basicUser(t);
    const others = await Promise.all([1, 2, 3, 4].map(() => basicUser(t)));
    const asked = await Promise.all(
      [1, 2, 3, 4, 5].map(() => call('POST', `/api/users/${a.user_id}/export`, { key: a.key })),
    );
    for (const r of asked) expect(r.status, JSON.stringify(r.body)).toBe(202);
    expect(new Set(asked.map((r) => r.body.export_id)).size).toBe(1);
    // Four other users of the organization still get theirs (5 places in all).
    const theirs = await Promise.all(others.map((u) => call('POST', `/api/users/${u.user_id}/export`, { key: u.key })));
    for (const r of theirs) expect(r.status, JSON.stringify(r.body)).toBe(202);
  }, 120_000);
});

describe('erasures: a bounded number per organization delete at once', () => {
  it('of concurrent takers exactly ERASURES_RUNNING_PER_ORGANIZATION hold a place; a completed holder gives way', async () => {
    const org = `org-places-${Date.now()}`;
    const keys = [1, 2, 3, 4, 5, 6].map((n) => erasureKey(org, `usr_places${n}`));
    for (const [n, key] of keys.entries()) {
      await insertErasureOnce({
        _id: key,
        erasure_id: `era_places${n}`,
        organization_id: org,
        user_id: `usr_places${n}`,
        tombstone: `del_places${n}`,
        requested_by: { key_id: 'k', user_id: 'u', level: 1 },
      });
    }
    const won = await Promise.all(keys.map((k) => takeErasureSlot(org, k, ERASURES_RUNNING_PER_ORGANIZATION)));
    expect(won.filter(Boolean)).toHaveLength(ERASURES_RUNNING_PER_ORGANIZATION);
    const holders = keys.filter((_, i) => won[i]);
    const waiting = keys.filter((_, i) => !won[i]);
    // A holder asking again still holds it; a waiting one still waits.
    expect(await takeErasureSlot(org, holders[0], ERASURES_RUNNING_PER_ORGANIZATION)).toBe(true);
    expect(await takeErasureSlot(org, waiting[0], ERASURES_RUNNING_PER_ORGANIZATION)).toBe(false);
    // A holder that completed without giving its place back (a crash) gives way; one that released it too.
    await markErasureCompleted(holders[0]);
    expect(await takeErasureSlot(org, waiting[0], ERASURES_RUNNING_PER_ORGANIZATION)).toBe(true);
    expect(await takeErasureSlot(org, waiting[1], ERASURES_RUNNING_PER_ORGANIZATION)).toBe(false);
    await releaseErasureSlot(org, holders[1], ERASURES_RUNNING_PER_ORGANIZATION);
    expect(await takeErasureSlot(org, waiting[1], ERASURES_RUNNING_PER_ORGANIZATION)).toBe(true);
  });

  it('four erasures asked at once all complete, never more than the bound deleting at once', async () => {
    const t = await newTenant();
    const users = await Promise.all([1, 2, 3, 4].map(() => basicUser(t)));
    const slots = mongoose.connection.collection('user_erasure_slots');
    let most = 0;
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        most = Math.max(most, await slots.countDocuments({ _id: { $regex: `^${t.organization_id}#` } as never }));
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    for (const u of users)
      expect((await call('DELETE', `/api/users/${u.user_id}`, { key: t.adminKey, json: {} })).status).toBe(202);
    for (const u of users) {
      await until(
        'the erasure completed',
        () => call('GET', `/api/users/${u.user_id}/erasure`, { key: t.adminKey }),
        (r) => r.body.erasure?.status === 'completed',
        240_000,
        500,
      );
    }
    watching = false;
    await watcher;
    expect(most).toBeGreaterThanOrEqual(1);
    expect(most).toBeLessThanOrEqual(ERASURES_RUNNING_PER_ORGANIZATION);
    expect(await slots.countDocuments({ _id: { $regex: `^${t.organization_id}#` } as never })).toBe(0);
  }, 300_000);
});
