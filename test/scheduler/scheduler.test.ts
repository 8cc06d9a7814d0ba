import fs from 'node:fs';
import path from 'node:path';

import { Client, Connection, ScheduleNotFoundError } from '@temporalio/client';
import PostalMime from 'postal-mime';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

import { basicUser, call, newTenant, type Tenant, unique } from '../helpers/api.ts';

let temporal: Client;
beforeAll(async () => {
  const e = inject('platformEnv');
  temporal = new Client({
    connection: await Connection.connect({ address: e.TEMPORAL_ADDRESS }),
    namespace: e.TEMPORAL_NAMESPACE,
  });
});
afterAll(async () => temporal?.connection.close());

const future = (ms: number) => new Date(Date.now() + ms).toISOString();
const B = '/api/scheduler-service/events';

async function runs(key: string, id: string, count: number) {
  for (let i = 0; i < 150; i += 1) {
    const res = await call('GET', `/scheduler/events/${id}/runs`, { key });
    if (res.body.runs?.length >= count) return res.body.runs;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no ${count} run(s) recorded for ${id}`);
}

describe('scheduler, variant B', () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await newTenant();
  });

  it('creates one Temporal Schedule per event, updates it in place and deletes it', async () => {
    const u = await basicUser(t);
    const created = await call('POST', B, {
      key: u.key,
      json: {
        idp_id: u.idp_id,
        type_of_event: 'loyalty',
        recurrency: 'daily',
        start_event: '2031-01-05T09:30:00Z',
        metadata: { action_type: 'daily_login' },
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const ev = created.body.event;
    expect(ev).toMatchObject({
      idp_id: u.idp_id,
      user_id: u.user_id,
      organization_id: t.organization_id,
      type_of_event: 'loyalty',
      recurrency: 'daily',
      start_event: '2031-01-05T09:30:00.000Z',
      status: 'scheduled',
    });
    const handle = temporal.schedule.getHandle(`event:${ev.id}`);
    const before = await handle.describe();
    expect(before.spec.calendars?.[0]).toMatchObject({
      hour: [{ start: 9, end: 9, step: 1 }],
      minute: [{ start: 30, end: 30, step: 1 }],
    });
    expect(before.action).toMatchObject({ workflowType: 'scheduledEventWorkflow' });
    expect(before.info.nextActionTimes[0].toISOString()).toBe('2031-01-05T09:30:00.000Z');

    const updated = await call('PUT', `${B}/${ev.id}`, {
      key: u.key,
      json: {
        idp_id: u.idp_id,
        type_of_event: 'loyalty',
        recurrency: 'weekly',
        start_event: '2031-01-06T18:00:00Z',
        metadata: { action_type: 'profile_completed', timezone: 'Europe/Madrid' },
      },
    });
    expect(updated.body.event).toMatchObject({ recurrency: 'weekly', start_event: '2031-01-06T18:00:00.000Z' });
    const after = await handle.describe();
    expect(after.spec.timezone).toBe('Europe/Madrid');
    expect(after.info.nextActionTimes[0].toISOString()).toBe('2031-01-06T18:00:00.000Z');
    expect(after.info.createdAt.getTime()).toBe(before.info.createdAt.getTime()); // the same Schedule

    const listed = await call('GET', B, { key: u.key });
    expect(listed.body.events.map((e: any) => e.id)).toEqual([ev.id]);
    const del = await call('DELETE', `${B}/${ev.id}`, { key: u.key });
    expect(del.body).toMatchObject({ success: true });
    await expect(handle.describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
    for (const [method, p] of [
      ['DELETE', `${B}/${ev.id}`],
      ['POST', `${B}/${ev.id}/execute`],
      ['GET', `/scheduler/events/${ev.id}/runs`],
    ] as const) {
      const res = await call(method, p, { key: u.key });
      expect(res.status, `${method} ${p}`).toBe(404);
      expect(res.body).toEqual({ detail: 'Event not found' });
    }
  });

  it('executes now: dispatches execute_scheduled_task to the component and records the run', async () => {
    const u = await basicUser(t);
    const ev = (
      await call('POST', B, {
        key: t.adminKey,
        json: {
          idp_id: u.idp_id,
          type_of_event: 'loyalty',
          recurrency: 'monthly',
          start_event: future(86_400_000),
          metadata: { action_type: 'purchase' },
        },
      })
    ).body.event;
    const exec = await call('POST', `${B}/${ev.id}/execute`, { key: t.adminKey });
    expect(exec.body).toMatchObject({ success: true });
    expect(Math.abs(Date.parse(exec.body.execution_time) - Date.now())).toBeLessThan(10_000);
    const [run] = await runs(u.key, ev.id, 1);
    expect(run).toMatchObject({
      trigger: 'manual',
      outcome: 'success',
      error: null,
      result: { points_awarded: 10, balance: 10 },
    });
    expect((await call('GET', `/loyalty/points/${u.user_id}`, { key: u.key })).body.points).toBe(10);
  });

  it('sends the email task through the email component', async () => {
    const to = `${unique('sched')}@example.com`;
    const ev = (
      await call('POST', B, {
        key: t.adminKey,
        json: {
          idp_id: unique('mailer'),
          type_of_event: 'email',
          recurrency: 'weekly',
          start_event: future(86_400_000),
          metadata: { recipient: to, subject: 'Weekly digest', body: 'Your week in points.' },
        },
      })
    ).body.event;
    await call('POST', `${B}/${ev.id}/execute`, { key: t.adminKey });
    const [run] = await runs(t.adminKey, ev.id, 1);
    expect(run).toMatchObject({ outcome: 'success', result: { recipient: to } });
    const dir = inject('smtpDir');
    const mails = await Promise.all(
      fs.readdirSync(dir).map((f) => PostalMime.parse(fs.readFileSync(path.join(dir, f)))),
    );
    expect(mails.filter((m) => m.to?.some((a) => a.address === to)).map((m) => m.subject)).toEqual(['Weekly digest']);
  });

  it('runs the support task: answers the prompt in the owner’s conversation, once per run', async () => {
    const u = await basicUser(t);
    await call('POST', '/support/knowledge', {
      key: t.adminKey,
      json: { title: 'Points expiry', body: 'Points expire 12 months after they are earned.' },
    });
    const conversation_id = (await call('POST', '/initialize_session', { key: u.key, json: { user_id: u.user_id } }))
      .body.conversation_id;
    const ev = (
      await call('POST', B, {
        key: u.key,
        json: {
          idp_id: u.idp_id,
          type_of_event: 'support',
          recurrency: 'monthly',
          start_event: future(86_400_000),
          metadata: { prompt: 'When do my points expire?', conversation_id },
        },
      })
    ).body.event;
    await call('POST', `${B}/${ev.id}/execute`, { key: u.key });
    const [run] = await runs(u.key, ev.id, 1);
    expect(run).toMatchObject({
      outcome: 'success',
      result: { escalate: false, source_agent: 'local_retrieval', turn_id: expect.stringMatching(/^turn_event_/) },
    });
    const stored = await call('GET', `/get_response/${conversation_id}?user_id=${u.user_id}`, { key: u.key });
    expect(stored.body.responses).toHaveLength(1);
    expect(stored.body.responses[0].message).toMatch(/12 months/);
    // a conversation that is not the owner's fails the run with the reason
    const bad = (
      await call('POST', B, {
        key: u.key,
        json: {
          idp_id: u.idp_id,
          type_of_event: 'support',
          recurrency: 'monthly',
          start_event: future(86_400_000),
          metadata: { prompt: 'hi', conversation_id: 'conv_other' },
        },
      })
    ).body.event;
    await call('POST', `${B}/${bad.id}/execute`, { key: u.key });
    expect((await runs(u.key, bad.id, 1))[0]).toMatchObject({
      outcome: 'failed',
      error: 'Invalid conversation ID: conv_other',
    });
  });

  it('runs the feedback task: the period’s stats, emailed to the recipient', async () => {
    const t2 = await newTenant();
    const u = await basicUser(t2);
    await call('POST', '/api/feedback/submit', {
      key: u.key,
      json: { user_id: u.user_id, feedback_type: 'praise', rating: 5, comment: 'Great rewards, easy to redeem.' },
    });
    const to = `${unique('stats')}@example.com`;
    const ev = (
      await call('POST', B, {
        key: t2.adminKey,
        json: {
          idp_id: unique('analyst'),
          type_of_event: 'feedback',
          recurrency: 'weekly',
          start_event: future(86_400_000),
          metadata: { recipient: to, period_days: 7 },
        },
      })
    ).body.event;
    await call('POST', `${B}/${ev.id}/execute`, { key: t2.adminKey });
    const [run] = await runs(t2.adminKey, ev.id, 1);
    expect(run).toMatchObject({
      outcome: 'success',
      result: { period_days: 7, recipient: to, stats: { total_feedback: 1, average_rating: 5 } },
    });
    const dir = inject('smtpDir');
    const mails = await Promise.all(
      fs.readdirSync(dir).map((f) => PostalMime.parse(fs.readFileSync(path.join(dir, f)))),
    );
    const mail = mails.find((m) => m.to?.some((a) => a.address === to));
    expect(mail?.subject).toBe('Feedback summary: last 7 day(s)');
    expect(mail?.text).toContain('Feedback in the last 7 day(s): 1 (average rating 5.00)');
  });

  it('runs the documents task: the owner’s documents of the period, per folder', async () => {
    const u = await basicUser(t);
    const conversation_id = (await call('POST', '/initialize_session', { key: u.key, json: { user_id: u.user_id } }))
      .body.conversation_id;
    const form = new FormData();
    for (const [k, v] of Object.entries({ user_id: u.user_id, session_id: 's', conversation_id })) form.append(k, v);
    form.append('file', new Blob(['Dear Ana,\n\nThank you.\n\nYours sincerely,\nLuis']), 'letter.txt');
    expect((await call('POST', '/process_document', { key: u.key, form })).status).toBe(200);
    const ev = (
      await call('POST', B, {
        key: u.key,
        json: {
          idp_id: u.idp_id,
          type_of_event: 'documents',
          recurrency: 'weekly',
          start_event: future(86_400_000),
          metadata: { period_days: 7 },
        },
      })
    ).body.event;
    await call('POST', `${B}/${ev.id}/execute`, { key: u.key });
    const [run] = await runs(u.key, ev.id, 1);
    expect(run).toMatchObject({
      outcome: 'success',
      result: { period_days: 7, documents: 1, folders: { Letters: 1 } },
    });
  });

  it('runs the billing task: a token usage report by email; without a recipient the run fails with the reason', async () => {
    const to = `${unique('usage')}@example.com`;
    const ev = (
      await call('POST', B, {
        key: t.adminKey,
        json: {
          idp_id: unique('biller'),
          type_of_event: 'billing',
          recurrency: 'monthly',
          start_event: future(86_400_000),
          metadata: { recipient: to },
        },
      })
    ).body.event;
    await call('POST', `${B}/${ev.id}/execute`, { key: t.adminKey });
    const [run] = await runs(t.adminKey, ev.id, 1);
    expect(run).toMatchObject({ outcome: 'success', result: { total_tokens: 0, remaining_tokens: 0, recipient: to } });
    const dir = inject('smtpDir');
    const mails = await Promise.all(
      fs.readdirSync(dir).map((f) => PostalMime.parse(fs.readFileSync(path.join(dir, f)))),
    );
    expect(mails.find((m) => m.to?.some((a) => a.address === to))?.subject).toBe(
      `Token usage ${new Date().toISOString().slice(0, 7)}`,
    );
    const nobody = (
      await call('POST', B, {
        key: t.adminKey,
        json: {
          idp_id: unique('biller'),
          type_of_event: 'billing',
          recurrency: 'daily',
          start_event: future(86_400_000),
        },
      })
    ).body.event;
    await call('POST', `${B}/${nobody.id}/execute`, { key: t.adminKey });
    expect((await runs(t.adminKey, nobody.id, 1))[0]).toMatchObject({
      outcome: 'failed',
      error: 'metadata.recipient: no recipient and the user has no email',
    });
  });

  it('runs a one-off event when it is due, once, and marks it completed', async () => {
    const u = await basicUser(t);
    const ev = (
      await call('POST', B, {
        key: u.key,
        json: {
          idp_id: u.idp_id,
          type_of_event: 'loyalty',
          start_event: future(3000),
          metadata: { action_type: 'daily_login' },
        },
      })
    ).body.event;
    expect(ev.recurrency).toBeNull();
    const [run] = await runs(u.key, ev.id, 1);
    expect(run).toMatchObject({ trigger: 'scheduled', outcome: 'success', scheduled_time: ev.start_event });
    const listed = await call('GET', B, { key: u.key });
    expect(listed.body.events.find((e: any) => e.id === ev.id).status).toBe('completed');
    await new Promise((r) => setTimeout(r, 1500));
    expect(await runs(u.key, ev.id, 1)).toHaveLength(1);
    // Moved to a new time, the event is scheduled again: the completion was for the old time.
    const moved = await call('PUT', `${B}/${ev.id}`, {
      key: u.key,
      json: {
        idp_id: u.idp_id,
        type_of_event: 'loyalty',
        start_event: future(3_600_000),
        metadata: { action_type: 'daily_login' },
      },
    });
    expect(moved.status).toBe(200);
    expect(moved.body.event.status).toBe('scheduled');
    expect((await call('GET', B, { key: u.key })).body.events.find((e: any) => e.id === ev.id).status).toBe(
      'scheduled',
    );
  });

  it.each([
    [{ type_of_event: 'party', recurrency: 'daily' }, /^type_of_event/],
    [{ type_of_event: 'email', recurrency: 'hourly' }, /^recurrency/],
    [{ type_of_event: 'email', recurrency: 'daily', start_event: 'tomorrow' }, /^start_event/],
    [
      { type_of_event: 'email', recurrency: 'daily', end_date: '2030-01-01T00:00:00Z' },
      /^end_date: must be after start_event/,
    ],
    [
      { type_of_event: 'email', recurrency: null, start_event: '2020-01-01T00:00:00Z' },
      /^start_event: a one-off event must be in the future/,
    ],
    [{ type_of_event: 'email', recurrency: 'daily', metadata: { timezone: 'Mars/Olympus' } }, /^metadata\.timezone/],
  ])('refuses bad input with 422 and creates no Schedule (%#)', async (extra, message) => {
    const u = await basicUser(t);
    const res = await call('POST', B, {
      key: u.key,
      json: { idp_id: u.idp_id, start_event: '2031-02-01T10:00:00Z', ...extra },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(message);
    expect((await call('GET', B, { key: u.key })).body.events).toEqual([]);
  });

  it('refuses times past the scheduling calendar (2100) with 422, on create and on update, changing nothing', async () => {
    const u = await basicUser(t);
    const late: [Record<string, unknown>, RegExp][] = [
      [{ start_event: '2101-03-01T10:00:00Z' }, /^start_event: must be before 2100-12-31/],
      [
        {
          start_event: '2100-12-31T20:00:00Z',
          metadata: { action_type: 'daily_login', timezone: 'Pacific/Kiritimati' },
        },
        /^start_event: must be before 2100-12-31/,
      ],
      [{ recurrency: 'monthly', start_event: '2150-01-31T10:00:00Z' }, /^start_event/],
      [{ recurrency: 'daily', end_date: '2200-01-01T00:00:00Z' }, /^end_date: must be before 2100-12-31/],
    ];
    for (const [extra, message] of late) {
      const res = await call('POST', B, {
        key: u.key,
        json: {
          idp_id: u.idp_id,
          type_of_event: 'loyalty',
          start_event: '2031-02-01T10:00:00Z',
          metadata: { action_type: 'daily_login' },
          ...extra,
        },
      });
      expect(res.status, JSON.stringify(extra)).toBe(422);
      expect(res.body.detail).toMatch(message);
    }
    const a = await call('POST', '/scheduler/events', {
      key: u.key,
      json: {
        event_type: 'loyalty',
        schedule_time: '2101-01-01T00:00:00Z',
        user_id: u.user_id,
        metadata: { action_type: 'daily_login' },
      },
    });
    expect(a.status).toBe(422);
    expect((await call('GET', B, { key: u.key })).body.events).toEqual([]);

    const ev = (
      await call('POST', B, {
        key: u.key,
        json: {
          idp_id: u.idp_id,
          type_of_event: 'loyalty',
          recurrency: 'daily',
          start_event: '2031-02-01T10:00:00Z',
          metadata: { action_type: 'daily_login' },
        },
      })
    ).body.event;
    const handle = temporal.schedule.getHandle(`event:${ev.id}`);
    const before = await handle.describe();
    for (const [extra, message] of late) {
      const res = await call('PUT', `${B}/${ev.id}`, {
        key: u.key,
        json: {
          idp_id: u.idp_id,
          type_of_event: 'loyalty',
          recurrency: 'daily',
          start_event: '2031-02-01T10:00:00Z',
          metadata: { action_type: 'profile_completed' },
          ...extra,
        },
      });
      expect(res.status, JSON.stringify(extra)).toBe(422);
      expect(res.body.detail).toMatch(message);
    }
    const putA = await call('PUT', `/scheduler/events/${ev.id}`, {
      key: u.key,
      json: {
        event_type: 'loyalty',
        schedule_time: '2101-01-01T00:00:00Z',
        metadata: { action_type: 'profile_completed' },
      },
    });
    expect(putA.status).toBe(422);
    expect((await call('GET', `${B}/${ev.id}`, { key: u.key })).body.event).toEqual(ev);
    const after = await handle.describe();
    expect(after.spec).toEqual(before.spec);
    expect(after.info.nextActionTimes).toEqual(before.info.nextActionTimes);
  });

  it('serves every operation under both prefixes', async () => {
    const u = await basicUser(t);
    const ev = (
      await call('POST', B, {
        key: u.key,
        json: {
          idp_id: u.idp_id,
          type_of_event: 'loyalty',
          recurrency: 'daily',
          start_event: '2031-02-01T10:00:00Z',
          metadata: { action_type: 'daily_login' },
        },
      })
    ).body.event;
    const b = await call('GET', `${B}/${ev.id}`, { key: u.key });
    expect(b.status).toBe(200);
    expect(b.body).toEqual({ success: true, event: ev });
    const a = await call('GET', `/scheduler/events/${ev.id}`, { key: u.key });
    expect(a.status).toBe(200);
    expect(a.body.event).toMatchObject({
      event_id: ev.id,
      event_type: 'loyalty',
      schedule_time: ev.start_event,
      user_id: u.user_id,
    });
    for (const prefix of [B, '/scheduler/events']) {
      const runsRes = await call('GET', `${prefix}/${ev.id}/runs`, { key: u.key });
      expect(runsRes.status, prefix).toBe(200);
      expect(runsRes.body).toEqual({ success: true, event_id: ev.id, runs: [] });
    }
    const other = await basicUser(t);
    expect((await call('GET', `${B}/${ev.id}`, { key: other.key })).status).toBe(404);
    expect((await call('GET', `/scheduler/events/${ev.id}`, { key: other.key })).status).toBe(404);
  });

  it("keeps users' and organizations' events apart", async () => {
    const a = await basicUser(t);
    const b = await basicUser(t);
    const ev = (
      await call('POST', B, {
        key: a.key,
        json: {
          idp_id: a.idp_id,
          type_of_event: 'loyalty',
          recurrency: 'daily',
          start_event: '2031-03-01T10:00:00Z',
          metadata: { action_type: 'daily_login' },
        },
      })
    ).body.event;
    expect((await call('GET', B, { key: b.key })).body.events).toEqual([]);
    expect((await call('POST', `${B}/${ev.id}/execute`, { key: b.key })).status).toBe(404);
    expect(
      (
        await call('POST', B, {
          key: b.key,
          json: { idp_id: a.idp_id, type_of_event: 'email', recurrency: 'daily', start_event: '2031-03-01T10:00:00Z' },
        })
      ).status,
    ).toBe(403);
    const adminView = await call('GET', `${B}?idp_id=${a.idp_id}`, { key: t.adminKey });
    expect(adminView.body.events.map((e: any) => e.id)).toEqual([ev.id]);
    const other = await newTenant();
    expect((await call('GET', `${B}?organization_id=${t.organization_id}`, { key: other.adminKey })).status).toBe(403);
    expect((await call('DELETE', `${B}/${ev.id}`, { key: other.adminKey })).status).toBe(404);
  });
});

describe('scheduler, variant A', () => {
  it('creates, lists, updates, executes and deletes in its own shapes', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const when = '2031-05-05T08:00:00.000Z';
    const created = await call('POST', '/scheduler/events', {
      key: t.adminKey,
      json: {
        event_type: 'loyalty',
        schedule_time: when,
        user_id: u.user_id,
        organization_id: t.organization_id,
        metadata: { action_type: 'purchase' },
      },
    });
    expect(created.body).toEqual({ success: true, event_id: expect.stringMatching(/^evt_/), schedule_time: when });
    const id = created.body.event_id;
    const listed = await call('GET', `/scheduler/events?idp_id=${u.idp_id}`, { key: u.key });
    expect(listed.body.events).toEqual([
      expect.objectContaining({
        event_id: id,
        event_type: 'loyalty',
        schedule_time: when,
        user_id: u.user_id,
        organization_id: t.organization_id,
        metadata: { action_type: 'purchase' },
      }),
    ]);
    const moved = await call('PUT', `/scheduler/events/${id}`, {
      key: t.adminKey,
      json: { event_type: 'loyalty', schedule_time: '2031-06-01T08:00:00Z', metadata: { action_type: 'review' } },
    });
    expect(moved.body).toEqual({ success: true, event_id: id, schedule_time: '2031-06-01T08:00:00.000Z' });
    const exec = await call('POST', `/scheduler/events/${id}/execute`, { key: t.adminKey });
    expect(exec.body.success).toBe(true);
    expect(typeof exec.body.execution_time).toBe('string');
    const [run] = await runs(u.key, id, 1);
    expect(run).toMatchObject({ trigger: 'manual', outcome: 'success', result: { points_awarded: 20 } });
    expect((await call('DELETE', `/scheduler/events/${id}`, { key: u.key })).body.success).toBe(true);
    expect(
      (
        await call('PUT', `/scheduler/events/${id}`, {
          key: u.key,
          json: { event_type: 'loyalty', schedule_time: when },
        })
      ).status,
    ).toBe(404);
  });
});
