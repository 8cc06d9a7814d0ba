/**
 * The per-user hourly email limit's count (activities/email/store.ts), called in this process: an
 * exact counter under concurrency, answered from indexes, that keeps what the previous version
 * counted in the hour of an upgrade.
 */
import mongoose from 'mongoose';
import { describe, expect, it } from 'vitest';

import { reserveSend } from '../../activities/email/policy.ts';
import { unique } from '../helpers/api.ts';
import { queriesOf, scans } from '../helpers/queries.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';
import { configure } from '../helpers/scheduler.ts';

useSuiteRuntime();

const HOUR = 3_600_000;
const statusOf = (p: Promise<unknown>) =>
  p.then(
    () => 200,
    (err: { status?: number }) => (err.status === 429 ? 429 : Promise.reject(err)),
  );
const slots = () => mongoose.connection.db!.collection<{ _id: string; n?: number }>('email_send_slots');

describe('the hourly email count', () => {
  it('of 30 concurrent sends of new keys at a limit of 10 exactly 10 are counted, a repeat of a counted key costs nothing, and every query is answered from an index', async () => {
    configure({ EMAIL_USER_LIMIT_PER_HOUR: '10' });
    const who = { organization_id: unique('org'), user_id: unique('usr') };
    const now = new Date();
    const statuses = await Promise.all(
      Array.from({ length: 30 }, (_, i) => statusOf(reserveSend({ ...who, idempotency_key: `k-${i}` }, now))),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20);
    const hour = new Date(Math.floor(now.getTime() / HOUR) * HOUR).toISOString();
    const counter = async () =>
      (await slots().findOne({ _id: `${who.organization_id}|${who.user_id}|${hour}|count` }))?.n;
    expect(await counter()).toBe(10);
    // A counted key again (its send not recorded yet: a concurrent repeat) passes without counting.
    expect(await statusOf(reserveSend({ ...who, idempotency_key: `k-${statuses.indexOf(200)}` }, now))).toBe(200);
    expect(await counter()).toBe(10);
    let status = 0;
    const qs = await queriesOf(
      async () => (status = await statusOf(reserveSend({ ...who, idempotency_key: 'one-more' }, now))),
    );
    expect(status).toBe(429);
    expect(await scans(qs)).toEqual([]);
  });

  it("counts the sends the previous version counted in the hour (numbered slot documents) and deletes a user's earlier hours at the first send of an hour", async () => {
    configure({ EMAIL_USER_LIMIT_PER_HOUR: '5' });
    const who = { organization_id: unique('org'), user_id: unique('usr') };
    const now = new Date();
    const hour = new Date(Math.floor(now.getTime() / HOUR) * HOUR);
    const base = `${who.organization_id}|${who.user_id}|${hour.toISOString()}|`;
    await slots().insertMany([1, 2, 3, 4].map((n) => ({ _id: `${base}${n}`, ...who, hour })));
    expect(await statusOf(reserveSend({ ...who, idempotency_key: 'a' }, now))).toBe(200);
    expect(await statusOf(reserveSend({ ...who, idempotency_key: 'b' }, now))).toBe(429);
    const next = new Date(hour.getTime() + HOUR);
    const qs = await queriesOf(() => reserveSend({ ...who, idempotency_key: 'c' }, next));
    expect(await scans(qs)).toEqual([]);
    expect(await slots().countDocuments({ ...who, hour: { $lt: next } })).toBe(0);
    expect(await slots().countDocuments({ ...who, hour: next })).toBe(2); // its counter and key c
  });
});
