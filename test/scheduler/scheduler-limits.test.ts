/**
 * Scheduler load limits (docs/components/scheduler.md, Limits): caps on a user's and an organization's
 * events that hold under concurrency, a basic saver's minimum interval between runs, `allow_all`
 * and long catch-up windows kept for admins; and what a run's failure shows to a basic reader.
 */
import net from 'node:net';

import { describe, expect, inject, it } from 'vitest';

import { parseEnv } from '../../activities/core/config.ts';
import { runScheduledEvent } from '../../activities/scheduler/event-runs.ts';
import { EventCounter, ScheduledEvent } from '../../activities/scheduler/models.ts';
import {
  commitUpdate,
  createEvent,
  deleteEvent,
  type EventInput,
  getEvent,
  prepareUpdate,
  setPaused,
} from '../../activities/scheduler/scheduled-events.ts';
import { convertPlaces, takePlace } from '../../activities/scheduler/store.ts';
import { basicUser, call, newTenant, type Tenant, unique, until } from '../helpers/api.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';
import { basicOwner, configure, daily, loyalty } from '../helpers/scheduler.ts';

useSuiteRuntime();

/** A cap's counter (store.ts): the places it says are held. */
const counted = async (_id: string) => (await EventCounter.findById(_id).lean())?.n;
/** The events that hold a place of this kind for the user (user) or the organization. */
const holders = (
  organization_id: string,
  field: 'user_place' | 'organization_place' | 'stored_place',
  user_id?: string,
) => ScheduledEvent.countDocuments({ organization_id, ...(user_id ? { user_id } : {}), [field]: true });

const A = '/scheduler/events';
const B = '/api/scheduler-service/events';

const statusOf = (p: Promise<unknown>) =>
  p.then(
    () => 200,
    (err: { status?: number; message?: string }) => (err.status === 409 ? 409 : Promise.reject(err)),
  );

describe('scheduler caps (activities in this process, small caps)', () => {
  it('a user holds at most SCHEDULER_MAX_EVENTS_PER_USER events: of 20 concurrent creates at cap-1 exactly one wins; a delete frees a place', async () => {
    configure({ SCHEDULER_MAX_EVENTS_PER_USER: '5', SCHEDULER_MAX_EVENTS_PER_ORGANIZATION: '1000' });
    const { t, u, owner, actor } = await basicOwner();
    const made = [];
    for (let i = 0; i < 4; i += 1) made.push(await createEvent(owner, daily(), actor));
    const statuses = await Promise.all(Array.from({ length: 20 }, () => statusOf(createEvent(owner, daily(), actor))));
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    const over = await createEvent(owner, daily(), actor).catch((e) => e);
    expect(over.status).toBe(409);
    expect(over.message).toMatch(/at most 5 .*SCHEDULER_MAX_EVENTS_PER_USER/);
    // Another user of the organization is not affected; the owner's delete frees a place.
    const other = await basicUser(t);
    await createEvent({ organization_id: t.organization_id, user_id: other.user_id, idp_id: other.idp_id }, daily(), {
      ...actor,
      user_id: other.user_id,
    });
    await deleteEvent(t.organization_id, made[0]._id);
    await createEvent(owner, daily(), actor);
    expect((await createEvent(owner, daily(), actor).catch((e) => e)).status).toBe(409);
    // The counter is exact: as many places as events holding one.
    expect(await counted(`u|${t.organization_id}|${u.user_id}`)).toBe(5);
    expect(await holders(t.organization_id, 'user_place', u.user_id)).toBe(5);
  });

  it("an organization holds at most SCHEDULER_MAX_EVENTS_PER_ORGANIZATION events, admins' included, exact under concurrency", async () => {
    configure({ SCHEDULER_MAX_EVENTS_PER_USER: '100', SCHEDULER_MAX_EVENTS_PER_ORGANIZATION: '6' });
    const t = await newTenant();
    const users = await Promise.all(Array.from({ length: 4 }, () => basicUser(t)));
    const create = (u: (typeof users)[number], level = 0) =>
      createEvent({ organization_id: t.organization_id, user_id: u.user_id, idp_id: u.idp_id }, daily(), {
        key_id: 'key_test',
        user_id: u.user_id,
        level,
      });
    for (let i = 0; i < 5; i += 1) await create(users[i % 4]);
    const statuses = await Promise.all(Array.from({ length: 20 }, (_, i) => statusOf(create(users[i % 4], i % 2))));
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    const over = await create(users[0], 2).catch((e) => e);
    expect(over.status).toBe(409);
    expect(over.message).toMatch(/at most 6 .*SCHEDULER_MAX_EVENTS_PER_ORGANIZATION/);
    expect(await counted(`o|${t.organization_id}`)).toBe(6);
    expect(await holders(t.organization_id, 'organization_place')).toBe(6);
    // Another organization is not affected.
    const t2 = await newTenant();
    const v = await basicUser(t2);
    await createEvent({ organization_id: t2.organization_id, user_id: v.user_id, idp_id: v.idp_id }, daily(), {
      key_id: 'key_test',
      user_id: v.user_id,
      level: 0,
    });
  });
});

/**
 * Simulates the passage of time: the event's last run was in 2020 (its end_date is past), and its
 * earliest possible end (`ends_at`, written by every save) is then past too.
 */
const endInThePast = (event_id: string) =>
  ScheduledEvent.updateOne(
    { _id: event_id },
    {
      $set: {
        start_event: new Date('2020-01-01T09:30:00Z'),
        end_date: new Date('2020-01-10T09:30:00Z'),
        ends_at: new Date('2020-01-10T10:30:00Z'),
      },
    },
  );
/** An update as the edge runs it (the Schedule step aside): prepared, then committed. */
const update = async (
  organization_id: string,
  event_id: string,
  input: EventInput,
  actor: { key_id: string; user_id: string; level: number },
) => {
  const { prev, next } = await prepareUpdate(organization_id, event_id, input, actor);
  return commitUpdate(prev, next);
};
/** How many places the event holds (of its stored, user and organization places). */
const heldBy = async (event_id: string) => {
  const e = await ScheduledEvent.findById(event_id).lean();
  return [e?.stored_place, e?.user_place, e?.organization_place].filter(Boolean).length;
};

describe('the caps count active events only (activities in this process, small caps)', () => {
  it('an event whose end_date passed frees its place when the cap is reached (of 20 concurrent creates exactly one takes it); reviving it at the cap is 409 and changes nothing', async () => {
    configure({ SCHEDULER_MAX_EVENTS_PER_USER: '3', SCHEDULER_MAX_EVENTS_PER_ORGANIZATION: '1000' });
    const { t, u, owner, actor } = await basicOwner();
    const made = [];
    for (let i = 0; i < 3; i += 1) made.push(await createEvent(owner, daily(), actor));
    expect((await createEvent(owner, daily(), actor).catch((e) => e)).status).toBe(409);
    await endInThePast(made[0]._id);
    const statuses = await Promise.all(Array.from({ length: 20 }, () => statusOf(createEvent(owner, daily(), actor))));
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(await counted(`u|${t.organization_id}|${u.user_id}`)).toBe(3);
    // The ended event still exists (and reads as before) but no longer holds its user place.
    const ended = await getEvent(t.organization_id, made[0]._id);
    expect(ended.end_date?.toISOString()).toBe('2020-01-10T09:30:00.000Z');
    expect(ended.user_place).toBe(false);
    // Reviving it (a new start, no end) needs a place again: the cap is full.
    const revived = await update(t.organization_id, made[0]._id, daily('2032-03-01T08:00:00Z'), actor).catch((e) => e);
    expect(revived.status).toBe(409);
    expect(revived.message).toMatch(/at most 3 .*SCHEDULER_MAX_EVENTS_PER_USER/);
    const after = await getEvent(t.organization_id, made[0]._id);
    expect({ start: after.start_event.toISOString(), rev: after.rev, user_place: after.user_place }).toEqual({
      start: '2020-01-01T09:30:00.000Z',
      rev: ended.rev,
      user_place: false,
    });
    expect(await counted(`u|${t.organization_id}|${u.user_id}`)).toBe(3);
    // Once another event is deleted, the revival takes a place (and the cap is full again).
    await deleteEvent(t.organization_id, made[1]._id);
    const back = await update(t.organization_id, made[0]._id, daily('2032-03-01T08:00:00Z'), actor);
    expect(back.user_place).toBe(true);
    expect(await heldBy(made[0]._id)).toBe(3); // user, organization and stored places
    expect((await createEvent(owner, daily(), actor).catch((e) => e)).status).toBe(409);
    expect(await counted(`u|${t.organization_id}|${u.user_id}`)).toBe(3);
    expect(await holders(t.organization_id, 'user_place', u.user_id)).toBe(3);
  });

  it('an update prepared while the ended event still held its place, committed after the place was freed, is 409: the event never runs again without a place', async () => {
    configure({ SCHEDULER_MAX_EVENTS_PER_USER: '2', SCHEDULER_MAX_EVENTS_PER_ORGANIZATION: '1000' });
    const { t, u, owner, actor } = await basicOwner();
    const ended = await createEvent(owner, daily(), actor);
    await createEvent(owner, daily(), actor);
    await endInThePast(ended._id);
    const { prev, next } = await prepareUpdate(t.organization_id, ended._id, daily('2032-03-01T08:00:00Z'), actor);
    expect([next.stored_place, next.user_place, next.organization_place]).toEqual([true, true, true]); // it still held its places: nothing taken
    expect(await counted(`u|${t.organization_id}|${u.user_id}`)).toBe(2);
    await createEvent(owner, daily(), actor); // the counter is full: the ended event's place is freed
    const late = await commitUpdate(prev, next).catch((e) => e);
    expect(late.status).toBe(409);
    expect((await getEvent(t.organization_id, ended._id)).start_event.toISOString()).toBe('2020-01-01T09:30:00.000Z');
    expect(await heldBy(ended._id)).toBe(2); // its organization and stored places
    expect(
      (await update(t.organization_id, ended._id, daily('2032-03-01T08:00:00Z'), actor).catch((e) => e)).status,
    ).toBe(409);
  });

  it('a paused event keeps its place, past its end_date too (a resume never meets the cap); an ended one next to it does not', async () => {
    configure({ SCHEDULER_MAX_EVENTS_PER_USER: '3', SCHEDULER_MAX_EVENTS_PER_ORGANIZATION: '1000' });
    const { t, owner, actor } = await basicOwner();
    const [paused, ended] = [await createEvent(owner, daily(), actor), await createEvent(owner, daily(), actor)];
    await createEvent(owner, daily(), actor);
    // Both past their end; only the paused one keeps its place (it is not over until resumed).
    await setPaused(t.organization_id, paused._id, true, 'holiday');
    await endInThePast(paused._id);
    await endInThePast(ended._id);
    await createEvent(owner, daily(), actor);
    const over = await createEvent(owner, daily(), actor).catch((e) => e);
    expect(over.status).toBe(409);
    expect(await heldBy(paused._id)).toBe(3);
    await setPaused(t.organization_id, paused._id, false, null);
    expect(await heldBy(paused._id)).toBe(3);
    expect(await heldBy(ended._id)).toBe(2); // its organization place (that counter is not full) and its stored place
  });
});

describe("a user's stored events, ended ones included (activities in this process, small caps)", () => {
  it('a user stores at most SCHEDULER_MAX_STORED_EVENTS_PER_USER events: of 20 concurrent creates at cap-1 exactly one wins', async () => {
    configure({
      SCHEDULER_MAX_EVENTS_PER_USER: '100',
      SCHEDULER_MAX_EVENTS_PER_ORGANIZATION: '1000',
      SCHEDULER_MAX_STORED_EVENTS_PER_USER: '5',
    });
    const { owner, actor } = await basicOwner();
    for (let i = 0; i < 4; i += 1) await createEvent(owner, daily(), actor);
    const statuses = await Promise.all(Array.from({ length: 20 }, () => statusOf(createEvent(owner, daily(), actor))));
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    const over = await createEvent(owner, daily(), actor).catch((e) => e);
    expect(over.status).toBe(409);
    expect(over.message).toMatch(/at most 5 .*SCHEDULER_MAX_STORED_EVENTS_PER_USER/);
  });

  it('ended events keep their stored place (a full active counter frees only their active one); a revival takes no second; only a delete frees it', async () => {
    configure({
      SCHEDULER_MAX_EVENTS_PER_USER: '2',
      SCHEDULER_MAX_EVENTS_PER_ORGANIZATION: '1000',
      SCHEDULER_MAX_STORED_EVENTS_PER_USER: '5',
    });
    const { t, u, owner, actor } = await basicOwner();
    const stored = async (id: string) => ((await ScheduledEvent.findById(id).lean())?.stored_place ? 1 : 0);
    // Two at a time end, and the next creates free their active places: five stored, four ended.
    const made = [await createEvent(owner, daily(), actor), await createEvent(owner, daily(), actor)];
    await endInThePast(made[0]._id);
    await endInThePast(made[1]._id);
    made.push(await createEvent(owner, daily(), actor), await createEvent(owner, daily(), actor));
    await endInThePast(made[2]._id);
    await endInThePast(made[3]._id);
    made.push(await createEvent(owner, daily(), actor));
    expect(await heldBy(made[0]._id)).toBe(2); // its organization and stored places
    const over = await createEvent(owner, daily(), actor).catch((e) => e);
    expect(over.status).toBe(409);
    expect(over.message).toMatch(/at most 5 .*SCHEDULER_MAX_STORED_EVENTS_PER_USER/);
    for (const e of made) expect(await stored(e._id)).toBe(1);
    // Reviving an ended event takes an active place back, not a second stored one.
    const back = await update(t.organization_id, made[0]._id, daily('2032-03-01T08:00:00Z'), actor);
    expect(back.stored_place).toBe(true);
    expect(await counted(`s|${t.organization_id}|${u.user_id}`)).toBe(5);
    expect((await createEvent(owner, daily(), actor).catch((e) => e)).status).toBe(409);
    // A delete frees the stored place: the next create meets the active cap instead.
    await deleteEvent(t.organization_id, made[1]._id);
    const active = await createEvent(owner, daily(), actor).catch((e) => e);
    expect(active.status).toBe(409);
    expect(active.message).toMatch(/at most 2 .*SCHEDULER_MAX_EVENTS_PER_USER/);
  });
});

describe("scheduler caps over HTTP (the suite's default cap)", () => {
  it('the edge answers 409 {detail} naming the cap once the user holds the default number of events; deleting one over HTTP frees it', async () => {
    configure();
    const { u, owner } = await basicOwner();
    const n = parseEnv({ ...process.env, ...inject('platformEnv') }).SCHEDULER_MAX_EVENTS_PER_USER;
    const made = [];
    for (let i = 0; i < n; i += 1)
      made.push(
        await createEvent(owner, daily(), { key_id: 'key_test', user_id: u.user_id, level: 0 }).catch((e) => e),
      );
    const json = {
      idp_id: u.idp_id,
      type_of_event: 'loyalty',
      recurrency: 'daily',
      start_event: '2031-01-05T09:30:00Z',
      metadata: loyalty,
    };
    const res = await call('POST', B, { key: u.key, json });
    expect(res.status, JSON.stringify(res.body)).toBe(409);
    expect(res.body.detail).toMatch(/SCHEDULER_MAX_EVENTS_PER_USER/);
    expect((await call('DELETE', `${B}/${made[0]._id}`, { key: u.key })).status).toBe(200);
    expect((await call('POST', B, { key: u.key, json })).status).toBe(200);
  });
});

describe('a one-off event that ran no longer counts (HTTP, the worker runs it)', () => {
  it('at the default cap, once the one-off event has run a create over HTTP succeeds; moving the completed event to a new time is 409 and changes nothing', async () => {
    configure();
    const { u, owner } = await basicOwner();
    const n = parseEnv({ ...process.env, ...inject('platformEnv') }).SCHEDULER_MAX_EVENTS_PER_USER;
    const soon = new Date(Math.ceil((Date.now() + 4000) / 1000) * 1000).toISOString();
    const once = await call('POST', B, {
      key: u.key,
      json: { idp_id: u.idp_id, type_of_event: 'loyalty', start_event: soon, metadata: loyalty },
    });
    expect(once.status, JSON.stringify(once.body)).toBe(200);
    const id = once.body.event.id;
    for (let i = 1; i < n; i += 1)
      await createEvent(owner, daily(), { key_id: 'key_test', user_id: u.user_id, level: 0 });
    const json = {
      idp_id: u.idp_id,
      type_of_event: 'loyalty',
      recurrency: 'daily',
      start_event: '2031-01-05T09:30:00Z',
      metadata: loyalty,
    };
    await until(
      'the one-off run',
      () => call('GET', `${B}/${id}`, { key: u.key }),
      (r) => r.body.event?.status === 'completed',
      60_000,
    );
    const res = await call('POST', B, { key: u.key, json });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const again = await call('PUT', `${B}/${id}`, {
      key: u.key,
      json: { idp_id: u.idp_id, type_of_event: 'loyalty', start_event: '2031-02-01T10:00:00Z', metadata: loyalty },
    });
    expect(again.status, JSON.stringify(again.body)).toBe(409);
    expect(again.body.detail).toMatch(/SCHEDULER_MAX_EVENTS_PER_USER/);
    const seen = (await call('GET', `${B}/${id}`, { key: u.key })).body.event;
    expect(seen).toMatchObject({ start_event: soon, status: 'completed', next_runs: [] });
    expect((await call('POST', B, { key: u.key, json })).status).toBe(409);
  });
});

describe("a basic saver's load limits (HTTP)", () => {
  let t: Tenant;
  const json = (u: { idp_id: string }, extra: Record<string, unknown> = {}) => ({
    idp_id: u.idp_id,
    type_of_event: 'loyalty',
    recurrency: 'cron',
    cron: '0 * * * *',
    start_event: '2031-01-05T09:30:00Z',
    metadata: loyalty,
    ...extra,
  });

  it('a basic key may not save runs closer than SCHEDULER_MIN_INTERVAL_SECONDS_BASIC (422 naming it); hourly and daily pass; an admin may', async () => {
    t = await newTenant();
    const u = await basicUser(t);
    for (const cron of ['* * * * *', '*/30 * * * *', '0,59 9 * * *', '10,30 0,23 * * *']) {
      const res = await call('POST', B, { key: u.key, json: json(u, { cron }) });
      expect(res.status, cron).toBe(422);
      expect(res.body.detail, cron).toMatch(/^cron: .*at least 1 hour apart.*SCHEDULER_MIN_INTERVAL_SECONDS_BASIC/);
    }
    for (const ok of [
      json(u),
      json(u, { cron: '0 9,17 * * 1-5' }),
      json(u, { recurrency: 'daily', cron: undefined }),
      json(u, { cron: '30 * * * *', metadata: { ...loyalty, timezone: 'Europe/Madrid' } }),
    ]) {
      const res = await call('POST', B, { key: u.key, json: ok });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    const admin = await call('POST', B, {
      key: t.adminKey,
      json: json(t.admin, { cron: '* * * * *', overlap: 'allow_all', catchup_window_minutes: 10_080 }),
    });
    expect(admin.status, JSON.stringify(admin.body)).toBe(200);
    expect(admin.body.event).toMatchObject({ cron: '* * * * *', overlap: 'allow_all', catchup_window_minutes: 10_080 });
  });

  it('overlap "allow_all" and a catch-up window over SCHEDULER_MAX_CATCHUP_MINUTES_BASIC are admin-only (403 naming them), on both variants', async () => {
    const u = await basicUser(t);
    const a = await call('POST', B, { key: u.key, json: json(u, { overlap: 'allow_all' }) });
    expect(a.status).toBe(403);
    expect(a.body.detail).toMatch(/allow_all.*admin/);
    const c = await call('POST', A, {
      key: u.key,
      json: {
        event_type: 'loyalty',
        schedule_time: '2031-01-05T09:30:00Z',
        user_id: u.idp_id,
        recurrency: 'daily',
        metadata: loyalty,
        catchup_window_minutes: 10_080,
      },
    });
    expect(c.status).toBe(403);
    expect(c.body.detail).toMatch(/catchup_window_minutes.*SCHEDULER_MAX_CATCHUP_MINUTES_BASIC/);
    const fine = await call('POST', B, {
      key: u.key,
      json: json(u, { overlap: 'buffer_one', catchup_window_minutes: 60 }),
    });
    expect(fine.status, JSON.stringify(fine.body)).toBe(200);
    expect(
      (await call('GET', A, { key: u.key })).body.events.every(
        (e: any) => e.overlap !== 'allow_all' && e.catchup_window_minutes <= 60,
      ),
    ).toBe(true);
  });

  it("updates are checked too, with the values an update keeps: a basic owner re-saving an admin's event cannot keep what it may not set", async () => {
    const u = await basicUser(t);
    const mine = (await call('POST', B, { key: u.key, json: json(u) })).body.event;
    const faster = await call('PUT', `${B}/${mine.id}`, { key: u.key, json: json(u, { cron: '*/5 * * * *' }) });
    expect(faster.status).toBe(422);
    expect(faster.body.detail).toMatch(/SCHEDULER_MIN_INTERVAL_SECONDS_BASIC/);
    const viaA = await call('PUT', `${A}/${mine.id}`, {
      key: u.key,
      json: {
        event_type: 'loyalty',
        schedule_time: '2031-01-05T09:30:00Z',
        recurrency: 'daily',
        metadata: loyalty,
        overlap: 'allow_all',
      },
    });
    expect(viaA.status).toBe(403);
    expect((await call('GET', `${B}/${mine.id}`, { key: u.key })).body.event).toMatchObject({
      cron: '0 * * * *',
      overlap: 'skip',
    });

    // An admin saves the owner's event with admin-only controls; the owner's own update (not
    // naming them, so they would be kept) now runs as basic and is refused.
    const byAdmin = await call('POST', B, {
      key: t.adminKey,
      json: json(u, { cron: '*/10 * * * *', overlap: 'allow_all', catchup_window_minutes: 600 }),
    });
    expect(byAdmin.status, JSON.stringify(byAdmin.body)).toBe(200);
    const id = byAdmin.body.event.id;
    const keep = await call('PUT', `${B}/${id}`, { key: u.key, json: json(u) });
    expect(keep.status).toBe(403);
    expect(keep.body.detail).toMatch(/allow_all/);
    const slow = await call('PUT', `${B}/${id}`, {
      key: u.key,
      json: json(u, { cron: '*/10 * * * *', overlap: 'skip', catchup_window_minutes: 30 }),
    });
    expect(slow.status).toBe(422);
    const ok = await call('PUT', `${B}/${id}`, {
      key: u.key,
      json: json(u, { overlap: 'skip', catchup_window_minutes: 30 }),
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.event).toMatchObject({ cron: '0 * * * *', overlap: 'skip', catchup_window_minutes: 30 });
  });
});

describe('the limits at run time', () => {
  it("an admin's every-10-minutes event whose admin key is revoked runs as basic: the run fails naming the limit, nothing awarded", async () => {
    const t = await newTenant();
    const idp = unique('holder');
    const keys: { key: string; key_id: string }[] = [];
    for (const permissions of [['admin'], ['basic']]) {
      const res = await call('POST', '/generate_api_key', { key: t.adminKey, json: { user_id: idp, permissions } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      keys.push({ key: res.body.api_key as string, key_id: res.body.metadata.key_id as string });
    }
    const ev = await call('POST', B, {
      key: keys[0].key,
      json: {
        idp_id: idp,
        type_of_event: 'loyalty',
        recurrency: 'cron',
        cron: '*/10 * * * *',
        start_event: '2031-01-05T09:30:00Z',
        metadata: loyalty,
      },
    });
    expect(ev.status, JSON.stringify(ev.body)).toBe(200);
    expect(
      (await call('POST', '/revoke_api_key', { key: t.adminKey, json: { user_id: idp, api_key: keys[0].key_id } }))
        .status,
    ).toBe(200);
    expect((await call('POST', `${B}/${ev.body.event.id}/execute`, { key: t.adminKey })).status).toBe(200);
    const seen = await until(
      'the run',
      () => call('GET', `${A}/${ev.body.event.id}/runs`, { key: keys[1].key }),
      (r) => r.body.runs?.length === 1,
      30_000,
    );
    expect(seen.body.runs[0]).toMatchObject({ outcome: 'failed', failure: 'refused', result: null });
    expect(seen.body.runs[0].error).toMatch(/^cron: .*SCHEDULER_MIN_INTERVAL_SECONDS_BASIC/);
  });
});

/** A local port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

describe("a failed run's error text", () => {
  it('a basic reader sees a fixed text for an infrastructure failure (here SMTP unreachable); an admin reads the detail', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const mine = `${unique('me')}@example.test`;
    await call('PATCH', `/api/users/${u.user_id}`, { key: t.adminKey, json: { email: mine } });
    const created = await call('POST', B, {
      key: u.key,
      json: {
        idp_id: u.idp_id,
        type_of_event: 'email',
        recurrency: 'weekly',
        start_event: '2031-01-05T09:30:00Z',
        metadata: { template: 'reminder', title: 'Dentist', recipient: mine },
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.event.id;
    // The run in this process, with a mail server that refuses connections (a real refused
    // connection, not a mock); outside a worker a failure is recorded at once.
    configure({ SMTP_URL: `smtp://127.0.0.1:${await closedPort()}` });
    const out = await runScheduledEvent({
      event_id: id,
      organization_id: t.organization_id,
      run_id: unique('event-run:test'),
      scheduled_time: null,
      max_attempts: 1,
    });
    expect(out.outcome).toBe('failed');
    configure();

    const seen = await until(
      'the run',
      () => call('GET', `${A}/${id}/runs`, { key: u.key }),
      (r) => r.body.runs?.length === 1,
      10_000,
    );
    const [run] = seen.body.runs;
    expect(run.error).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|smtp/i);
    expect(run).toMatchObject({ outcome: 'failed', failure: 'internal' });
    expect(run.error).toMatch(/platform's side/);
    const asAdmin = (await call('GET', `${B}/${id}/runs`, { key: t.adminKey })).body.runs[0];
    expect(asAdmin).toMatchObject({ outcome: 'failed', failure: 'internal' });
    expect(asAdmin.error).toMatch(/ECONNREFUSED/);
  });
});

describe('places left behind, and events of the previous version (activities in this process, small caps)', () => {
  it('a place taken by a create that stopped before writing its event is given back once the counter is full and the take is a minute old', async () => {
    configure({ SCHEDULER_MAX_EVENTS_PER_USER: '2', SCHEDULER_MAX_EVENTS_PER_ORGANIZATION: '1000' });
    const { t, u, owner, actor } = await basicOwner();
    await createEvent(owner, daily(), actor);
    // A create in another process took the user's last place, then stopped (no event written).
    const ghost = await takePlace('user', owner, 2, 'evt_ghost');
    expect(ghost).not.toBeNull();
    expect((await createEvent(owner, daily(), actor).catch((e) => e)).status).toBe(409); // less than a minute old: in flight, kept
    await EventCounter.updateOne(
      { _id: ghost!.counter },
      { $set: { [`pending.${ghost!.token}`]: new Date(Date.now() - 61_000) } },
    );
    await createEvent(owner, daily(), actor);
    expect(await counted(`u|${t.organization_id}|${u.user_id}`)).toBe(2);
    expect(await holders(t.organization_id, 'user_place', u.user_id)).toBe(2);
    expect((await createEvent(owner, daily(), actor).catch((e) => e)).status).toBe(409);
  });

  it('events whose places are numbered documents listed in `slots` are converted: counters set from them, an ended one freed at the cap, a delete gives back', async () => {
    configure({ SCHEDULER_MAX_EVENTS_PER_USER: '3', SCHEDULER_MAX_EVENTS_PER_ORGANIZATION: '1000' });
    const { t, u, owner, actor } = await basicOwner();
    const o = t.organization_id;
    const legacy = (n: number, slots: string[], timing: Record<string, unknown> = {}) => ({
      _id: `evt_legacy${n}_${u.user_id}`,
      ...owner,
      type_of_event: 'loyalty',
      recurrency: 'daily',
      cron: null,
      start_event: new Date('2031-01-05T09:30:00Z'),
      end_date: null,
      timezone: null,
      metadata_json: JSON.stringify(loyalty),
      status: 'scheduled',
      actor_key_id: 'key_test',
      actor_user_id: u.user_id,
      actor_level: 0,
      rev: 0,
      slots,
      created_at: new Date(),
      updated_at: new Date(),
      ...timing,
    });
    await ScheduledEvent.collection.insertMany([
      legacy(0, [`s|${o}|${u.user_id}|0`, `u|${o}|${u.user_id}|0`, `o|${o}|0`]),
      // Ended (its end_date is past), still holding its places.
      legacy(1, [`s|${o}|${u.user_id}|1`, `u|${o}|${u.user_id}|1`, `o|${o}|1`], {
        start_event: new Date('2020-01-01T09:30:00Z'),
        end_date: new Date('2020-01-10T09:30:00Z'),
      }),
      // Ended, its user place already freed by the previous version.
      legacy(2, [`s|${o}|${u.user_id}|2`, `o|${o}|2`], {
        start_event: new Date('2020-01-01T09:30:00Z'),
        end_date: new Date('2020-01-10T09:30:00Z'),
      }),
      // Saved before the caps: holds no place.
      legacy(3, []),
    ] as any[]);
    await ScheduledEvent.updateOne({ _id: `evt_legacy3_${u.user_id}` }, { $unset: { slots: 1 } });
    await convertPlaces();
    expect([
      await counted(`s|${o}|${u.user_id}`),
      await counted(`u|${o}|${u.user_id}`),
      await counted(`o|${o}`),
    ]).toEqual([3, 2, 3]);
    const one = await ScheduledEvent.findById(`evt_legacy2_${u.user_id}`).lean();
    expect(one).toMatchObject({ stored_place: true, user_place: false, organization_place: true });
    expect(one!.ends_at!.getTime()).toBeLessThanOrEqual(Date.now()); // over already
    expect(one?.slots).toBeUndefined();
    // One place left; then the ended event's is freed; then the cap holds.
    await createEvent(owner, daily(), actor);
    await createEvent(owner, daily(), actor);
    expect(await heldBy(`evt_legacy1_${u.user_id}`)).toBe(2);
    expect((await createEvent(owner, daily(), actor).catch((e) => e)).status).toBe(409);
    await deleteEvent(o, `evt_legacy0_${u.user_id}`);
    expect([
      await counted(`s|${o}|${u.user_id}`),
      await counted(`u|${o}|${u.user_id}`),
      await counted(`o|${o}`),
    ]).toEqual([4, 2, 4]);
    await deleteEvent(o, `evt_legacy3_${u.user_id}`); // held nothing: gives nothing back
    expect([
      await counted(`s|${o}|${u.user_id}`),
      await counted(`u|${o}|${u.user_id}`),
      await counted(`o|${o}`),
    ]).toEqual([4, 2, 4]);
    await createEvent(owner, daily(), actor);
    expect((await createEvent(owner, daily(), actor).catch((e) => e)).status).toBe(409);
  });
});
