/**
 * An award's note, over HTTP on the real stack: an admin's reason for the points, kept on the entry
 * (never in its description, which names the action), shown in the history, refused to basic
 * keys, kept out of the entry's event and the audit trail (its length only, like a reversal's
 * reason), and removed by the member's erasure together with a reversal's reason.
 */
import { randomBytes } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { eventsSettled } from '../../activities/events/index.ts';
import { ledgerEventsSettled } from '../../activities/loyalty/index.ts';
import { LedgerEntry } from '../../activities/loyalty/models.ts';
import { basicUser, call, newTenant, type Tenant, unique, until } from '../helpers/api.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();

const hex = randomBytes(4).toString('hex');
const NOTE = `Zelda Quux complained of a late delivery ${hex}`;

const award = (key: string, idp: string, json: object, headers?: Record<string, string>) =>
  call('POST', `/loyalty/award-points/${idp}`, { key, json, headers });
const history = async (t: Tenant, user: string) => {
  const res = await call('GET', `/loyalty/points/${user}/history?limit=100`, { key: t.adminKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { total: number; points: number; entries: Record<string, any>[] };
};
const points = (t: Tenant, user: string) => call('GET', `/loyalty/points/${user}`, { key: t.adminKey });

describe("an award's note", () => {
  it("an admin's note is kept on the entry and shown in the history; the description still names the action", async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const other = await basicUser(t);
    const op = unique('order');
    const res = await award(t.adminKey, u.idp_id, { action_type: 'purchase', operation_id: op, note: `  ${NOTE}  ` });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ points_awarded: 10, duplicate: false });
    expect(JSON.stringify(res.body)).not.toContain(hex);
    expect((await award(t.adminKey, other.idp_id, { action_type: 'purchase' })).status).toBe(200);

    const h = await history(t, u.user_id);
    expect(h.entries).toHaveLength(1);
    // Trimmed; the action stays in description (limits and once-only facts count by it).
    expect(h.entries[0]).toMatchObject({ reason: 'action', description: 'purchase', note: NOTE });
    // The member reads it too, with their own key.
    const own = await call('GET', `/loyalty/points/${u.user_id}/history`, { key: u.key });
    expect(own.body.entries[0].note).toBe(NOTE);
    // An award without a note answers null; nothing of this note in another member's history.
    const ho = await history(t, other.user_id);
    expect(ho.entries[0].note).toBeNull();
    expect(JSON.stringify(ho)).not.toContain(hex);

    // A retry with the same operation_id (another note, or none): the first award's note stands.
    for (const again of [{ note: 'a different note' }, {}]) {
      const dup = await award(t.adminKey, u.idp_id, { action_type: 'purchase', operation_id: op, ...again });
      expect(dup.status, JSON.stringify(dup.body)).toBe(200);
      expect(dup.body).toMatchObject({ duplicate: true, points_awarded: 10, balance: 10 });
    }
    const after = await history(t, u.user_id);
    expect(after.entries.map((e) => e.note)).toEqual([NOTE]);

    // The same by Idempotency-Key.
    const key = unique('idem');
    expect(
      (await award(t.adminKey, u.idp_id, { action_type: 'review', note: 'first' }, { 'idempotency-key': key })).status,
    ).toBe(200);
    const rep = await award(
      t.adminKey,
      u.idp_id,
      { action_type: 'review', note: 'second' },
      { 'idempotency-key': key },
    );
    expect(rep.body.duplicate).toBe(true);
    expect((await history(t, u.user_id)).entries.map((e) => e.note)).toEqual(['first', NOTE]);

    // Not in the entry's event, nor in the audit record (its length only, like a reversal's reason).
    await ledgerEventsSettled();
    await eventsSettled();
    const credited = await until(
      'the points.credited events',
      async () =>
        (await call('GET', '/api/events?type=points.credited&limit=100', { key: t.adminKey })).body.events as any[],
      (es) => es.length === 3,
      30_000,
    );
    const mine = credited.find((e) => e.data.operation_id === `award:${u.user_id}:${op}`);
    expect(mine?.data).toMatchObject({ reason: 'action', description: 'purchase', amount: 10 });
    expect(mine?.data).not.toHaveProperty('note');
    expect(JSON.stringify(credited)).not.toContain(hex);
    const audit = await call('GET', `/api/audit?organization_id=${t.organization_id}&limit=100`, { key: t.adminKey });
    expect(audit.status).toBe(200);
    const awards = audit.body.records.filter((r: any) => r.action === 'points.award');
    expect(awards.length).toBeGreaterThan(0);
    expect(JSON.stringify(audit.body)).not.toContain(hex);
  }, 90_000);

  it('a basic key sending a note is 403 and nothing is credited', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    // daily_login is self-service: without a note the same call earns.
    const res = await award(u.key, u.idp_id, { action_type: 'daily_login', note: NOTE });
    expect(res.status, JSON.stringify(res.body)).toBe(403);
    expect(res.body.detail).toMatch(/^note: /);
    expect((await points(t, u.user_id)).status).toBe(404);
    const ok = await award(u.key, u.idp_id, { action_type: 'daily_login' });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect((await history(t, u.user_id)).entries.map((e) => e.note)).toEqual([null]);
  });

  it('a note of 501 characters (or blank) is 422 and nothing is credited', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    for (const note of ['x'.repeat(501), '   ', 42]) {
      const res = await award(t.adminKey, u.idp_id, { action_type: 'purchase', operation_id: unique('o'), note });
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(res.body.detail).toMatch(/note/);
    }
    expect((await points(t, u.user_id)).status).toBe(404);
    // 500 is the most.
    const max = await award(t.adminKey, u.idp_id, { action_type: 'purchase', note: 'y'.repeat(500) });
    expect(max.status, JSON.stringify(max.body)).toBe(200);
    expect((await history(t, u.user_id)).entries[0].note).toBe('y'.repeat(500));
  });

  it("the member's erasure removes the notes and the reversal's reason; the books and other members' notes stay", async () => {
    const t = await newTenant();
    const a = await basicUser(t);
    const b = await basicUser(t);
    const op = unique('order');
    expect((await award(t.adminKey, a.idp_id, { action_type: 'purchase', operation_id: op, note: NOTE })).status).toBe(
      200,
    );
    expect((await award(t.adminKey, a.idp_id, { action_type: 'review', note: `second ${NOTE}` })).status).toBe(200);
    expect((await award(t.adminKey, b.idp_id, { action_type: 'purchase', note: 'kept for b' })).status).toBe(200);
    const reversed = await call('POST', '/loyalty/reverse', {
      key: t.adminKey,
      json: { operation_id: op, user_id: a.user_id, reason: `refund asked by ${hex}` },
    });
    expect(reversed.status, JSON.stringify(reversed.body)).toBe(200);
    expect(reversed.body.reversal.note).toBeNull();
    const before = await LedgerEntry.find({ organization_id: t.organization_id, user_id: a.user_id }).lean();
    expect(before.filter((e) => e.note).length).toBe(2);

    const started = await call('DELETE', `/api/users/${a.idp_id}`, { key: t.adminKey, json: { reason: 'asked' } });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const done = await until(
      'the erasure completed',
      () => call('GET', `/api/users/${a.user_id}/erasure`, { key: t.adminKey }),
      (r) => r.body.erasure?.status === 'completed',
      180_000,
      500,
    );
    expect(done.body.erasure.steps.loyalty.report.entries_tombstoned).toBe(3);

    const ids = before.map((e) => e._id);
    const kept = await LedgerEntry.find({ _id: { $in: ids } }).lean();
    expect(kept).toHaveLength(3);
    // The books stay (amounts, chain); the person's words go.
    expect(kept.map((e) => [e.seq, e.amount, e.balance_after]).sort()).toEqual(
      before.map((e) => [e.seq, e.amount, e.balance_after]).sort(),
    );
    for (const e of kept) {
      expect(e.user_id).not.toBe(a.user_id);
      expect(e.note ?? null, e._id).toBeNull();
    }
    expect(kept.find((e) => e.reason === 'action' && e.seq === 1)?.description).toBe('purchase');
    const reversal = kept.find((e) => e.reason === 'reversal')!;
    expect(reversal.description).toMatch(/^reversal of award:del_[^:]+:.+: del_/);
    expect(JSON.stringify(kept)).not.toContain(hex);
    // B's note is untouched.
    expect((await history(t, b.user_id)).entries[0].note).toBe('kept for b');
  }, 240_000);
});
