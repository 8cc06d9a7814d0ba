/**
 * Scheduler controls: pause/resume through the Schedule's own pause, next_runs on every read,
 * per-event overlap and catch-up window, execute-now with an Idempotency-Key, run filters.
 */
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

import { basicUser, call, newTenant, type Tenant } from '../helpers/api.ts';

let temporal: Client;
let t: Tenant;
beforeAll(async () => {
  const e = inject('platformEnv');
  temporal = new Client({
    connection: await Connection.connect({ address: e.TEMPORAL_ADDRESS }),
    namespace: e.TEMPORAL_NAMESPACE,
  });
  t = await newTenant();
});
afterAll(async () => temporal?.connection.close());

const A = '/scheduler/events';
const B = '/api/scheduler-service/events';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function runs(key: string, id: string, count: number) {
  for (let i = 0; i < 150; i += 1) {
    const res = await call('GET', `${A}/${id}/runs`, { key });
    if (res.body.runs?.length >= count) return res.body.runs;
    await sleep(200);
  }
  throw new Error(`no ${count} run(s) recorded for ${id}`);
}

describe('scheduler controls', () => {
  it('pause: the Schedule is paused and nothing runs at the due time; execute-now still runs and says so; resume', async () => {
    const u = await basicUser(t);
    const other = await basicUser(t);
    const due = new Date(Math.ceil((Date.now() + 4000) / 1000) * 1000);
    const created = await call('POST', B, {
      key: u.key,
      json: {
        idp_id: u.idp_id,
        type_of_event: 'loyalty',
        start_event: due.toISOString(),
        metadata: { action_type: 'daily_login' },
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.event.id;
    expect(created.body.event).toMatchObject({
      paused: false,
      pause_note: null,
      paused_at: null,
      next_runs: [due.toISOString()],
    });

    expect((await call('POST', `${A}/${id}/pause`, { key: other.key, json: { note: 'not mine' } })).status).toBe(404);
    const paused = await call('POST', `${A}/${id}/pause`, { key: u.key, json: { note: 'on holiday' } });
    expect(paused.status, JSON.stringify(paused.body)).toBe(200);
    expect(paused.body).toMatchObject({ success: true, event_id: id, paused: true, pause_note: 'on holiday' });
    const d = await temporal.schedule.getHandle(`event:${id}`).describe();
    expect(d.state.paused).toBe(true);
    expect(d.state.note).toBe('on holiday');
    for (const path of [`${A}/${id}`, `${B}/${id}`]) {
      const ev = (await call('GET', path, { key: u.key })).body.event;
      expect(ev).toMatchObject({ paused: true, pause_note: 'on holiday' });
      expect(Math.abs(Date.parse(ev.paused_at) - Date.now())).toBeLessThan(30_000);
    }
    expect((await call('GET', B, { key: u.key })).body.events[0]).toMatchObject({ id, paused: true });

    await sleep(Math.max(0, due.getTime() - Date.now()) + 4000);
    expect((await call('GET', `${A}/${id}/runs`, { key: u.key })).body.runs).toEqual([]);

    const exec = await call('POST', `${B}/${id}/execute`, { key: u.key });
    expect(exec.body).toMatchObject({ success: true, paused: true });
    expect(exec.body.detail).toMatch(/paused/);
    const [run] = await runs(u.key, id, 1);
    expect(run).toMatchObject({ trigger: 'manual', outcome: 'success' });

    const resumed = await call('POST', `${B}/${id}/resume`, { key: u.key });
    expect(resumed.body).toMatchObject({ success: true, paused: false, pause_note: null, paused_at: null });
    expect((await temporal.schedule.getHandle(`event:${id}`).describe()).state.paused).toBe(false);
    expect((await call('GET', `${A}/${id}`, { key: u.key })).body.event).toMatchObject({
      paused: false,
      pause_note: null,
    });
    // The time missed while paused is not run on resume.
    await sleep(3000);
    expect((await call('GET', `${A}/${id}/runs`, { key: u.key })).body.runs).toHaveLength(1);
  });

  it('an update keeps the pause; an admin pauses any event of the organization', async () => {
    const u = await basicUser(t);
    const ev = (
      await call('POST', B, {
        key: u.key,
        json: {
          idp_id: u.idp_id,
          type_of_event: 'loyalty',
          recurrency: 'daily',
          start_event: '2031-01-05T09:30:00Z',
          metadata: { action_type: 'daily_login' },
        },
      })
    ).body.event;
    expect((await call('POST', `${B}/${ev.id}/pause`, { key: t.adminKey, json: {} })).body).toMatchObject({
      paused: true,
      pause_note: null,
    });
    const upd = await call('PUT', `${B}/${ev.id}`, {
      key: u.key,
      json: {
        idp_id: u.idp_id,
        type_of_event: 'loyalty',
        recurrency: 'daily',
        start_event: '2031-01-05T10:30:00Z',
        metadata: { action_type: 'daily_login' },
      },
    });
    expect(upd.body.event).toMatchObject({ paused: true, start_event: '2031-01-05T10:30:00.000Z' });
    expect((await temporal.schedule.getHandle(`event:${ev.id}`).describe()).state.paused).toBe(true);
    expect((await call('POST', `${B}/${ev.id}/pause`, { key: u.key, json: { note: 'x'.repeat(501) } })).status).toBe(
      422,
    );
  });

  it("next_runs: the next 5 times on every read, the same as the Schedule's", async () => {
    const u = await basicUser(t);
    const ev = (
      await call('POST', B, {
        key: u.key,
        json: {
          idp_id: u.idp_id,
          type_of_event: 'loyalty',
          recurrency: 'weekly',
          start_event: '2031-01-06T18:00:00Z',
          metadata: { action_type: 'daily_login', timezone: 'Europe/Madrid' },
        },
      })
    ).body.event;
    const expected = [
      '2031-01-06T18:00:00.000Z',
      '2031-01-13T18:00:00.000Z',
      '2031-01-20T18:00:00.000Z',
      '2031-01-27T18:00:00.000Z',
      '2031-02-03T18:00:00.000Z',
    ];
    expect(ev.next_runs).toEqual(expected);
    expect((await call('GET', `${A}/${ev.id}`, { key: u.key })).body.event.next_runs).toEqual(expected);
    expect((await call('GET', `${B}/${ev.id}`, { key: u.key })).body.event.next_runs).toEqual(expected);
    expect((await call('GET', A, { key: u.key })).body.events.find((e: any) => e.event_id === ev.id).next_runs).toEqual(
      expected,
    );
    const d = await temporal.schedule.getHandle(`event:${ev.id}`).describe();
    expect(d.info.nextActionTimes.slice(0, 5).map((x) => x.toISOString())).toEqual(expected);
  });

  it('overlap and catch-up window: validated, stored, shown and passed to the Schedule policies', async () => {
    const u = await basicUser(t);
    const json = {
      idp_id: u.idp_id,
      type_of_event: 'loyalty',
      recurrency: 'daily',
      start_event: '2031-01-05T09:30:00Z',
      metadata: { action_type: 'daily_login' },
    };
    const plain = (await call('POST', B, { key: u.key, json })).body.event;
    expect(plain).toMatchObject({ overlap: 'skip', catchup_window_minutes: 60 });
    const p0 = (await temporal.schedule.getHandle(`event:${plain.id}`).describe()).policies;
    expect(p0).toMatchObject({ overlap: 'SKIP', catchupWindow: 3_600_000 });

    const ev = (
      await call('POST', B, { key: u.key, json: { ...json, overlap: 'buffer_one', catchup_window_minutes: 15 } })
    ).body.event;
    expect(ev).toMatchObject({ overlap: 'buffer_one', catchup_window_minutes: 15 });
    const handle = temporal.schedule.getHandle(`event:${ev.id}`);
    expect((await handle.describe()).policies).toMatchObject({ overlap: 'BUFFER_ONE', catchupWindow: 900_000 });
    // An update that omits them keeps them; one that names them changes them.
    expect((await call('PUT', `${B}/${ev.id}`, { key: u.key, json })).body.event).toMatchObject({
      overlap: 'buffer_one',
      catchup_window_minutes: 15,
    });
    expect((await handle.describe()).policies).toMatchObject({ overlap: 'BUFFER_ONE', catchupWindow: 900_000 });
    // allow_all and a window over an hour are an admin's (scheduler-limits.test.ts: a basic key's 403).
    const a = await call('PUT', `${A}/${ev.id}`, {
      key: t.adminKey,
      json: {
        event_type: 'loyalty',
        schedule_time: '2031-01-05T09:30:00Z',
        recurrency: 'daily',
        metadata: { action_type: 'daily_login' },
        overlap: 'allow_all',
        catchup_window_minutes: 120,
      },
    });
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect((await call('GET', `${A}/${ev.id}`, { key: u.key })).body.event).toMatchObject({
      overlap: 'allow_all',
      catchup_window_minutes: 120,
    });
    expect((await handle.describe()).policies).toMatchObject({ overlap: 'ALLOW_ALL', catchupWindow: 7_200_000 });

    for (const bad of [
      { overlap: 'queue' },
      { catchup_window_minutes: 0 },
      { catchup_window_minutes: 1.5 },
      { catchup_window_minutes: 10_081 },
    ]) {
      const res = await call('POST', B, { key: u.key, json: { ...json, ...bad } });
      expect(res.status, JSON.stringify(bad)).toBe(422);
      expect(JSON.stringify(res.body.detail)).toContain(Object.keys(bad)[0]);
    }
  });

  it("cron: a fourth recurrence in the event's time zone, validated (422 naming cron); the DST rule on the Schedule", async () => {
    const u = await basicUser(t);
    const base = {
      idp_id: u.idp_id,
      type_of_event: 'loyalty',
      recurrency: 'cron',
      start_event: '2031-03-28T12:00:00Z',
      metadata: { action_type: 'daily_login', timezone: 'Europe/Madrid' },
    };
    const created = await call('POST', B, { key: u.key, json: { ...base, cron: '30 2 * * *' } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const ev = created.body.event;
    // Madrid 2031-03-30: 02:30 does not exist; it runs once, at 03:30 CEST (01:30Z).
    expect(ev).toMatchObject({
      recurrency: 'cron',
      cron: '30 2 * * *',
      next_runs: [
        '2031-03-29T01:30:00.000Z',
        '2031-03-30T01:30:00.000Z',
        '2031-03-31T00:30:00.000Z',
        '2031-04-01T00:30:00.000Z',
        '2031-04-02T00:30:00.000Z',
      ],
    });
    const d = await temporal.schedule.getHandle(`event:${ev.id}`).describe();
    expect(d.info.nextActionTimes.slice(0, 5).map((x) => x.toISOString())).toEqual(ev.next_runs);

    const a = await call('POST', A, {
      key: u.key,
      json: {
        event_type: 'loyalty',
        schedule_time: '2031-01-01T00:00:00Z',
        user_id: u.idp_id,
        recurrency: 'cron',
        cron: '0 9 * * 1-5',
        metadata: { action_type: 'daily_login', timezone: 'Europe/Madrid' },
      },
    });
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    const got = (await call('GET', `${A}/${a.body.event_id}`, { key: u.key })).body.event;
    expect(got).toMatchObject({
      recurrency: 'cron',
      cron: '0 9 * * 1-5',
      next_runs: [
        '2031-01-01T08:00:00.000Z',
        '2031-01-02T08:00:00.000Z',
        '2031-01-03T08:00:00.000Z',
        '2031-01-06T08:00:00.000Z',
        '2031-01-07T08:00:00.000Z',
      ],
    });

    for (const bad of [
      { cron: undefined },
      { cron: '0 9 * *' },
      { cron: '0 25 * * *' },
      { cron: '0 9 1 * 1' },
      { cron: '0 0 31 2 *' },
      { recurrency: 'daily', cron: '0 9 * * *' },
    ]) {
      const res = await call('POST', B, { key: u.key, json: { ...base, ...bad } });
      expect(res.status, JSON.stringify(bad)).toBe(422);
      expect(JSON.stringify(res.body.detail), JSON.stringify(bad)).toContain('cron');
    }
  });

  it('execute-now with an Idempotency-Key starts one run per key; runs filter by status, from/to and page', async () => {
    const u = await basicUser(t);
    const ev = (
      await call('POST', B, {
        key: t.adminKey,
        json: {
          idp_id: u.idp_id,
          type_of_event: 'loyalty',
          recurrency: 'monthly',
          start_event: '2031-01-05T09:30:00Z',
          metadata: { action_type: 'purchase' },
        },
      })
    ).body.event;
    const headers = { 'Idempotency-Key': `exec-${ev.id}` };
    const first = await call('POST', `${B}/${ev.id}/execute`, { key: t.adminKey, headers });
    expect(first.body).toMatchObject({ success: true, replayed: false });
    const again = await call('POST', `${A}/${ev.id}/execute`, { key: t.adminKey, headers });
    expect(again.body).toMatchObject({ success: true, replayed: true });
    expect(Math.abs(Date.parse(again.body.execution_time) - Date.parse(first.body.execution_time))).toBeLessThan(2000);
    await runs(u.key, ev.id, 1);
    await sleep(2000);
    expect((await call('GET', `${A}/${ev.id}/runs`, { key: u.key })).body.runs).toHaveLength(1);
    expect((await call('GET', `/loyalty/points/${u.user_id}`, { key: u.key })).body.points).toBe(10);
    await call('POST', `${B}/${ev.id}/execute`, { key: t.adminKey, headers: { 'Idempotency-Key': `other-${ev.id}` } });
    const both = await runs(u.key, ev.id, 2);

    const q = async (qs: string) => {
      const res = await call('GET', `${A}/${ev.id}/runs?${qs}`, { key: u.key });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.runs.map((r: any) => r.run_id);
    };
    expect(await q('status=success')).toEqual(both.map((r: any) => r.run_id));
    expect(await q('status=failed')).toEqual([]);
    expect(await q(`from=${encodeURIComponent(both[0].time)}`)).toEqual([both[0].run_id]);
    expect(await q(`to=${encodeURIComponent(both[1].time)}`)).toEqual([both[1].run_id]);
    expect(await q('from=2099-01-01T00:00:00Z')).toEqual([]);
    expect(await q('limit=1')).toEqual([both[0].run_id]);
    expect(await q('limit=1&offset=1')).toEqual([both[1].run_id]);
    for (const bad of [
      'status=done',
      'from=yesterday',
      'limit=0',
      'from=2031-01-02T00:00:00Z&to=2031-01-01T00:00:00Z',
    ]) {
      expect((await call('GET', `${A}/${ev.id}/runs?${bad}`, { key: u.key })).status, bad).toBe(422);
    }
  });
});
