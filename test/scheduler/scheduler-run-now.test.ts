/**
 * The scheduler's limits around "run now" and the places under the caps
 * (docs/components/scheduler.md, Limits): a basic owner's manual runs keep the minimum interval and the event's overlap policy;
 * editing an ended event; the queries of creating, running and refusing an event at a full cap.
 */
import { describe, expect, inject, it } from 'vitest';

import { parseEnv } from '../../activities/core/config.ts';
import { runScheduledEvent } from '../../activities/scheduler/event-runs.ts';
import { EventCounter, type EventDoc, ScheduledEvent } from '../../activities/scheduler/models.ts';
import {
  commitUpdate,
  createEvent,
  deleteEvent,
  type EventInput,
  prepareUpdate,
} from '../../activities/scheduler/scheduled-events.ts';
import { temporal } from '../../workers/runs/client.ts';
import { scheduleId, triggerSchedule } from '../../workers/runs/event-schedules.ts';
import { basicUser, call, newTenant, unique, until } from '../helpers/api.ts';
import { queriesOf, type Query, scans, show } from '../helpers/queries.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';
import { basicOwner, configure, daily, loyalty } from '../helpers/scheduler.ts';

useSuiteRuntime();

const B = '/api/scheduler-service/events';
const runsOf = async (key: string, id: string) =>
  (await call('GET', `${B}/${id}/runs`, { key })).body.runs as Array<{ trigger: string }>;

describe('run now by a basic owner (HTTP)', () => {
  it('a second manual run within SCHEDULER_MIN_INTERVAL_SECONDS_BASIC is 429 with Retry-After {detail} naming it, with or without a new Idempotency-Key; the same key replays; an admin still runs it', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const ev = (
      await call('POST', B, {
        key: u.key,
        json: {
          idp_id: u.idp_id,
          type_of_event: 'loyalty',
          recurrency: 'daily',
          start_event: '2031-01-05T09:30:00Z',
          metadata: loyalty,
        },
      })
    ).body.event;
    const first = await call('POST', `${B}/${ev.id}/execute`, { key: u.key, headers: { 'Idempotency-Key': 'k1' } });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.replayed).toBe(false);
    for (const headers of [{}, { 'Idempotency-Key': 'k2' }] as Record<string, string>[]) {
      const again = await call('POST', `${B}/${ev.id}/execute`, { key: u.key, headers });
      expect(again.status, JSON.stringify(again.body)).toBe(429);
      expect(again.body.detail).toMatch(/SCHEDULER_MIN_INTERVAL_SECONDS_BASIC/);
      const wait = Number(again.headers.get('retry-after'));
      expect(wait).toBeGreaterThan(3000);
      expect(wait).toBeLessThanOrEqual(3600);
    }
    const replay = await call('POST', `${B}/${ev.id}/execute`, { key: u.key, headers: { 'Idempotency-Key': 'k1' } });
    expect(replay.status, JSON.stringify(replay.body)).toBe(200);
    expect(replay.body).toMatchObject({ replayed: true, execution_time: first.body.execution_time });
    await until(
      'the run',
      () => runsOf(u.key, ev.id),
      (r) => r?.length === 1,
      30_000,
    );
    // Admins are not limited.
    await new Promise((r) => setTimeout(r, 1100)); // a run's workflow id carries its second
    expect((await call('POST', `${B}/${ev.id}/execute`, { key: t.adminKey })).status).toBe(200);
    await until(
      'the admin run',
      () => runsOf(u.key, ev.id),
      (r) => r?.length === 2,
      30_000,
    );
  });

  it('of 6 concurrent manual runs (new keys, and none) of a basic owner exactly one starts a run', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const ev = (
      await call('POST', B, {
        key: u.key,
        json: {
          idp_id: u.idp_id,
          type_of_event: 'loyalty',
          recurrency: 'daily',
          start_event: '2031-01-05T09:30:00Z',
          metadata: loyalty,
        },
      })
    ).body.event;
    const all = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        call('POST', `${B}/${ev.id}/execute`, { key: u.key, headers: i % 2 ? { 'Idempotency-Key': `c-${i}` } : {} }),
      ),
    );
    expect(all.map((r) => r.status).sort()).toEqual([200, 429, 429, 429, 429, 429]);
    await until(
      'the run',
      () => runsOf(u.key, ev.id),
      (r) => r?.length === 1,
      30_000,
    );
    await new Promise((r) => setTimeout(r, 2000));
    expect(await runsOf(u.key, ev.id)).toHaveLength(1);
  });

  it("a scheduled run counts too: right after a daily event's first run, running it by hand is 429", async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const soon = new Date(Math.ceil((Date.now() + 4000) / 1000) * 1000).toISOString();
    const ev = (
      await call('POST', B, {
        key: u.key,
        json: { idp_id: u.idp_id, type_of_event: 'loyalty', recurrency: 'daily', start_event: soon, metadata: loyalty },
      })
    ).body.event;
    await until(
      'the scheduled run',
      () => runsOf(u.key, ev.id),
      (r) => r?.length === 1,
      60_000,
    );
    const res = await call('POST', `${B}/${ev.id}/execute`, { key: u.key });
    expect(res.status, JSON.stringify(res.body)).toBe(429);
    expect(res.body.detail).toMatch(/SCHEDULER_MIN_INTERVAL_SECONDS_BASIC/);
  });
});

describe('run now of an ended event (HTTP)', () => {
  it("a one-off event that ran has ended: a basic owner's run by hand is 409 {detail} (not one more run per stored event), and starts nothing", async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const soon = new Date(Math.ceil((Date.now() + 4000) / 1000) * 1000).toISOString();
    const ev = (
      await call('POST', B, {
        key: u.key,
        json: { idp_id: u.idp_id, type_of_event: 'loyalty', start_event: soon, metadata: loyalty },
      })
    ).body.event;
    await until(
      'the scheduled run',
      () => runsOf(u.key, ev.id),
      (r) => r?.length === 1,
      60_000,
    );
    const res = await call('POST', `${B}/${ev.id}/execute`, { key: u.key, headers: { 'Idempotency-Key': 'ended-1' } });
    expect(res.status, JSON.stringify(res.body)).toBe(409);
    expect(res.body.detail).toMatch(/^The event has ended; update it to run again/);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await runsOf(u.key, ev.id)).toHaveLength(1);
  });

  it("a daily event past its end_date: a basic owner's run by hand is 409 however long since its last run; an admin's runs it", async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const ev = (
      await call('POST', B, {
        key: u.key,
        json: {
          idp_id: u.idp_id,
          type_of_event: 'loyalty',
          recurrency: 'daily',
          start_event: '2031-01-05T09:30:00Z',
          metadata: loyalty,
        },
      })
    ).body.event;
    // Stands for time passing: its last rule time was in 2020.
    await ScheduledEvent.updateOne(
      { _id: ev.id },
      { $set: { start_event: new Date('2020-01-01T09:30:00Z'), end_date: new Date('2020-01-10T09:30:00Z') } },
    );
    const res = await call('POST', `${B}/${ev.id}/execute`, { key: u.key });
    expect(res.status, JSON.stringify(res.body)).toBe(409);
    expect(res.body.detail).toMatch(/^The event has ended; update it to run again/);
    expect((await call('POST', `${B}/${ev.id}/execute`, { key: t.adminKey })).status).toBe(200);
  });
});

describe("a run by hand follows the event's overlap policy below admin (the edge's trigger, real Temporal)", () => {
  it("an admin's allow_all event: a basic owner's trigger is skipped while its run is still going; an admin's starts a second", async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const ev = (
      await call('POST', B, {
        key: t.adminKey,
        json: {
          idp_id: u.idp_id,
          type_of_event: 'loyalty',
          recurrency: 'daily',
          start_event: '2031-01-05T09:30:00Z',
          metadata: loyalty,
          overlap: 'allow_all',
        },
      })
    ).body.event;
    const client = await temporal();
    const handle = client.schedule.getHandle(scheduleId(ev.id));
    // Runs on a task queue no worker polls stay running: the overlap policy decides what a trigger does.
    await handle.update((prev) => ({ ...prev, action: { ...prev.action, taskQueue: `nobody-${ev.id}` } }));
    const state = async (what: string, ok: (x: { taken: number; skipped: number }) => boolean) => {
      const d = await until(
        what,
        async () => (await handle.describe()).info,
        (i) => ok({ taken: i.numActionsTaken, skipped: i.numActionsSkippedOverlap }),
        10_000,
      );
      return { taken: d.numActionsTaken, skipped: d.numActionsSkippedOverlap };
    };
    try {
      await triggerSchedule(ev.id, 'allow_all'); // a basic caller: the event's policy, never ALLOW_ALL
      await state('the first run', (x) => x.taken === 1);
      const nextSecond = () => new Promise((r) => setTimeout(r, 1100)); // a run's workflow id carries its second
      await nextSecond();
      await triggerSchedule(ev.id, 'allow_all');
      expect(await state('the second trigger', (x) => x.taken + x.skipped === 2)).toEqual({ taken: 1, skipped: 1 });
      await nextSecond();
      await triggerSchedule(ev.id); // an admin: ALLOW_ALL
      expect(await state('the admin trigger', (x) => x.taken + x.skipped === 3)).toEqual({ taken: 2, skipped: 1 });
    } finally {
      for (const a of (await handle.describe()).info.recentActions)
        await client.workflow
          .getHandle(a.action.workflow.workflowId)
          .terminate('test')
          .catch(() => undefined);
      await handle.delete().catch(() => undefined);
    }
  });
});

/** The queries sent to the scheduler's own collections (other components' are theirs to check). */
const ours = (qs: Query[]) => qs.filter((q) => q.collection.startsWith('scheduled_'));

describe('the hot paths of the scheduler (activities in this process)', () => {
  it('creating, running, refusing at a full cap (freeing an ended event), deleting: every scheduler query is answered from an index', async () => {
    configure({ SCHEDULER_MAX_EVENTS_PER_USER: '2', SCHEDULER_MAX_EVENTS_PER_ORGANIZATION: '1000' });
    const { t, owner, actor } = await basicOwner();
    await createEvent(owner, daily(), actor); // the counters exist: the next create is the usual one
    let made: EventDoc | undefined;
    const create = await queriesOf(async () => (made = await createEvent(owner, daily(), actor)));
    // One conditional update per counter (stored, user, organization), then the event's insert.
    expect(show(ours(create))).toEqual(
      [
        /^scheduled_event_counters\.updateOne\(\{"_id":"s\|/,
        /^scheduled_event_counters\.updateOne\(\{"_id":"u\|/,
        /^scheduled_event_counters\.updateOne\(\{"_id":"o\|/,
      ].map((r) => expect.stringMatching(r)),
    );
    const run = await queriesOf(() =>
      runScheduledEvent({
        event_id: made!._id,
        organization_id: t.organization_id,
        run_id: unique('event-run:test'),
        scheduled_time: null,
        max_attempts: 1,
      }),
    );
    // The user's cap is full; the first event ends: a create frees its place and takes it.
    await ScheduledEvent.updateOne(
      { _id: made!._id },
      {
        $set: {
          start_event: new Date('2020-01-01T09:30:00Z'),
          end_date: new Date('2020-01-10T09:30:00Z'),
          ends_at: new Date('2020-01-10T10:30:00Z'),
        },
      },
    );
    let freed: EventDoc | undefined;
    const full = await queriesOf(async () => (freed = await createEvent(owner, daily(), actor)));
    expect(show(ours(full)).filter((q) => q.startsWith('scheduled_events.find('))).toEqual([
      expect.stringMatching(/"user_place":true,"ends_at":\{"\$lte"/),
    ]);
    const refused = await queriesOf(() => createEvent(owner, daily(), actor).catch((e) => e));
    const gone = await queriesOf(() => deleteEvent(t.organization_id, freed!._id));
    const all = ours([...create, ...run, ...full, ...refused, ...gone]);
    expect(all.length).toBeGreaterThan(15);
    expect(await scans(all)).toEqual([]);
  });

  it('at a full organization cap with nothing ended, a refused create reads no event: the index range of holders that may have ended is empty', async () => {
    configure({ SCHEDULER_MAX_EVENTS_PER_USER: '100', SCHEDULER_MAX_EVENTS_PER_ORGANIZATION: '5' });
    const { owner, actor } = await basicOwner();
    for (let i = 0; i < 5; i += 1) await createEvent(owner, daily(), actor);
    const qs = await queriesOf(async () =>
      expect((await createEvent(owner, daily(), actor).catch((e) => e)).status).toBe(409),
    );
    const [holders] = ours(qs).filter((q) => q.collection === 'scheduled_events');
    expect(show(ours(qs)).filter((q) => q.startsWith('scheduled_events.'))).toEqual([
      expect.stringMatching(/"organization_place":true,"ends_at":\{"\$lte"/),
    ]);
    expect(await ScheduledEvent.find(holders.filter).lean()).toEqual([]);
    expect(await scans(ours(qs))).toEqual([]);
  });

  it('at a full cap held by a one-off event past its start whose run never completed (no Schedule here), a refused create reads that event and its completion only, by index', async () => {
    configure({ SCHEDULER_MAX_EVENTS_PER_USER: '100', SCHEDULER_MAX_EVENTS_PER_ORGANIZATION: '3' });
    const { owner, actor } = await basicOwner();
    const once = await createEvent(
      owner,
      { ...daily(new Date(Date.now() + 60_000).toISOString()), recurrency: null },
      actor,
    );
    for (let i = 0; i < 2; i += 1) await createEvent(owner, daily(), actor);
    // Stands for time passing: its start was 5 s ago and its run did not happen (still within its catch-up window).
    const start = new Date(Math.floor(Date.now() / 1000) * 1000 - 5000);
    await ScheduledEvent.updateOne({ _id: once._id }, { $set: { start_event: start, ends_at: start } });
    const qs = await queriesOf(async () =>
      expect((await createEvent(owner, daily(), actor).catch((e) => e)).status).toBe(409),
    );
    expect(show(ours(qs)).filter((q) => q.startsWith('scheduled_event_completions.'))).toEqual([
      `scheduled_event_completions.find({"event_id":{"$in":["${once._id}"]}})`,
    ]);
    expect(await scans(ours(qs))).toEqual([]);
  });
});

describe('a full counter frees an ended event at once (HTTP, the worker runs it)', () => {
  it('a create refused at the cap while a one-off event waits for its time does not delay freeing it: right after its run a create succeeds', async () => {
    configure();
    const t = await newTenant();
    const u = await basicUser(t);
    const n = parseEnv({ ...process.env, ...inject('platformEnv') }).SCHEDULER_MAX_EVENTS_PER_USER;
    // The other places first, so that the refusal below comes well before the one-off's time however slow the machine.
    for (let i = 1; i < n; i += 1)
      await createEvent({ organization_id: t.organization_id, user_id: u.user_id, idp_id: u.idp_id }, daily(), {
        key_id: 'key_test',
        user_id: u.user_id,
        level: 0,
      });
    const soon = new Date(Math.ceil((Date.now() + 4000) / 1000) * 1000).toISOString();
    const once = await call('POST', B, {
      key: u.key,
      json: { idp_id: u.idp_id, type_of_event: 'loyalty', start_event: soon, metadata: loyalty },
    });
    expect(once.status, JSON.stringify(once.body)).toBe(200);
    const json = {
      idp_id: u.idp_id,
      type_of_event: 'loyalty',
      recurrency: 'daily',
      start_event: '2031-01-05T09:30:00Z',
      metadata: loyalty,
    };
    expect((await call('POST', B, { key: u.key, json })).status).toBe(409); // the edge found nothing to free
    await until(
      'the one-off run',
      () => call('GET', `${B}/${once.body.event.id}`, { key: u.key }),
      (r) => r.body.event?.status === 'completed',
      60_000,
    );
    const res = await call('POST', B, { key: u.key, json });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });
});

describe('editing an ended event (activities in this process, small caps)', () => {
  it('at the cap, an edit of an ended event whose place was freed that keeps it ended is 422 for its timing, before any place is taken (never 409)', async () => {
    configure({ SCHEDULER_MAX_EVENTS_PER_USER: '2', SCHEDULER_MAX_EVENTS_PER_ORGANIZATION: '1000' });
    const { t, u, owner, actor } = await basicOwner();
    const ended = await createEvent(owner, daily(), actor);
    await createEvent(owner, daily(), actor);
    // Stands for time passing (its earliest possible end, written by every save, passed too).
    await ScheduledEvent.updateOne(
      { _id: ended._id },
      {
        $set: {
          start_event: new Date('2020-01-01T09:30:00Z'),
          end_date: new Date('2020-01-10T09:30:00Z'),
          ends_at: new Date('2020-01-10T10:30:00Z'),
        },
      },
    );
    await createEvent(owner, daily(), actor); // frees the ended event's user place
    const counters = async () =>
      Promise.all(
        [`s|${t.organization_id}|${u.user_id}`, `u|${t.organization_id}|${u.user_id}`, `o|${t.organization_id}`].map(
          async (_id) => (await EventCounter.findById(_id).lean())?.n,
        ),
      );
    const held = await counters();
    expect(held).toEqual([3, 2, 3]);
    const input: EventInput = {
      ...daily('2020-01-01T09:30:00Z'),
      end_date: new Date('2020-01-10T09:30:00Z'),
      metadata: { ...loyalty, note: 'renamed' },
    };
    const res = await prepareUpdate(t.organization_id, ended._id, input, actor)
      .then(({ prev, next }) => commitUpdate(prev, next))
      .catch((e) => e);
    expect(res.status, res.message).toBe(422);
    expect(res.message).toMatch(/^end_date: the event would never run again/);
    expect(await counters()).toEqual(held);
    expect((await ScheduledEvent.findById(ended._id).lean())?.user_place).toBe(false);
  });
});
