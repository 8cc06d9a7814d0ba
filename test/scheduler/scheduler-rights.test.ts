/** Scheduled tasks run with the rights of whoever saved the event, checked at save and at each run. */
import fs from 'node:fs';
import path from 'node:path';

import PostalMime from 'postal-mime';
import { describe, expect, inject, it } from 'vitest';

import { basicUser, call, newTenant, type Tenant, unique } from '../helpers/api.ts';

const B = '/api/scheduler-service/events';
const future = (ms: number) => new Date(Date.now() + ms).toISOString();

async function runs(key: string, id: string, count: number, tries = 150) {
  for (let i = 0; i < tries; i += 1) {
    const res = await call('GET', `/scheduler/events/${id}/runs`, { key });
    if (res.body.runs?.length >= count) return res.body.runs;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no ${count} run(s) recorded for ${id}`);
}

async function mailsTo(address: string) {
  const dir = inject('smtpDir');
  const mails = await Promise.all(fs.readdirSync(dir).map((f) => PostalMime.parse(fs.readFileSync(path.join(dir, f)))));
  return mails.filter((m) => m.to?.some((a) => a.address === address));
}

/** A user of the tenant holding keys of the given permissions (first key first). */
async function userWithKeys(t: Tenant, permissions: string[][]) {
  const idp = unique('holder');
  const keys = [];
  for (const p of permissions) {
    const res = await call('POST', '/generate_api_key', { key: t.adminKey, json: { user_id: idp, permissions: p } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    keys.push({ key: res.body.api_key as string, key_id: res.body.metadata.key_id as string });
  }
  return { idp_id: idp, keys };
}

const revoke = (t: Tenant, idp: string, key_id: string) =>
  call('POST', '/revoke_api_key', { key: t.adminKey, json: { user_id: idp, api_key: key_id } });

describe('scheduler rights at save time', () => {
  it('refuses a basic key what it could not do by hand, and stores nothing', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    await call('PATCH', `/api/users/${u.user_id}`, { key: t.adminKey, json: { email: `${u.idp_id}@example.com` } });
    // The manual route refuses the same key.
    expect((await call('GET', '/api/feedback/stats', { key: u.key })).status).toBe(403);
    const cases: [Record<string, unknown>, RegExp][] = [
      [
        { type_of_event: 'feedback', metadata: { recipient: 'outside@example.net' } },
        /feedback event requires the admin permission/,
      ],
      [{ type_of_event: 'feedback', metadata: {} }, /feedback event requires the admin permission/],
      [
        { type_of_event: 'webhook', metadata: { url: 'https://example.com/hook' } },
        /webhook event requires the admin permission/,
      ],
      [{ type_of_event: 'loyalty', metadata: { action_type: 'purchase' } }, /Action "purchase" needs an admin key/],
      [
        { type_of_event: 'email', metadata: { template: 'welcome', recipient: 'outside@example.net' } },
        /^metadata\.recipient: a basic API key sends only to its user's own email address/,
      ],
      [
        { type_of_event: 'email', metadata: { subject: 'Cheap pills', body: 'Buy now' } },
        /^metadata\.template: the generic template/,
      ],
      [{ type_of_event: 'email', metadata: { template: 'welcome', subject: 'Cheap pills' } }, /^metadata\.subject/],
      [{ type_of_event: 'billing', metadata: { recipient: 'outside@example.net' } }, /^metadata\.recipient/],
      [{ type_of_event: 'documents', metadata: { recipient: 'outside@example.net' } }, /^metadata\.recipient/],
    ];
    for (const [extra, message] of cases) {
      const res = await call('POST', B, {
        key: u.key,
        json: { idp_id: u.idp_id, recurrency: 'weekly', start_event: '2031-02-01T10:00:00Z', ...extra },
      });
      expect(res.status, JSON.stringify(extra)).toBe(403);
      expect(res.body.detail).toMatch(message);
    }
    const a = await call('POST', '/scheduler/events', {
      key: u.key,
      json: { event_type: 'feedback', schedule_time: '2031-02-01T10:00:00Z', user_id: u.user_id, metadata: {} },
    });
    expect(a.status).toBe(403);
    expect((await call('GET', B, { key: u.key })).body.events).toEqual([]);
    // What the key may do by hand it may schedule: its own address, a platform template, a self-service action.
    for (const extra of [
      {
        type_of_event: 'email',
        metadata: { template: 'reminder', title: 'Dentist', recipient: `${u.idp_id}@EXAMPLE.com` },
      },
      { type_of_event: 'billing', metadata: {} },
      { type_of_event: 'loyalty', metadata: { action_type: 'daily_login' } },
    ]) {
      const ok = await call('POST', B, {
        key: u.key,
        json: { idp_id: u.idp_id, recurrency: 'weekly', start_event: '2031-02-01T10:00:00Z', ...extra },
      });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    }
  });

  it('checks an update with the updating key: a basic owner cannot turn an event into an admin-only one', async () => {
    const t = await newTenant();
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
    const res = await call('PUT', `${B}/${ev.id}`, {
      key: u.key,
      json: {
        idp_id: u.idp_id,
        type_of_event: 'loyalty',
        recurrency: 'daily',
        start_event: '2031-02-01T10:00:00Z',
        metadata: { action_type: 'purchase' },
      },
    });
    expect(res.status).toBe(403);
    expect(res.body.detail).toMatch(/Action "purchase" needs an admin key/);
    expect((await call('GET', `${B}/${ev.id}`, { key: u.key })).body.event.metadata).toEqual({
      action_type: 'daily_login',
    });
  });

  it("does not let a basic owner run an admin's award at will", async () => {
    const t = await newTenant();
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
    const exec = await call('POST', `${B}/${ev.id}/execute`, { key: u.key });
    expect(exec.status).toBe(403);
    expect(exec.body.detail).toMatch(/Action "purchase" needs an admin key/);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await call('GET', `${B}/${ev.id}/runs`, { key: u.key })).body.runs).toEqual([]);
    expect((await call('GET', `/loyalty/points/${u.user_id}`, { key: u.key })).status).toBe(404); // no entry at all
  });
});

describe('scheduler rights at run time', () => {
  it('fails the run, mailing nothing, once the admin key that saved the event is revoked', async () => {
    const t = await newTenant();
    // Holds an admin key and a basic one: after the admin key goes, the user is basic.
    const holder = await userWithKeys(t, [['admin'], ['basic']]);
    const to = `${unique('stats')}@example.com`;
    const created = await call('POST', B, {
      key: holder.keys[0].key,
      json: {
        idp_id: holder.idp_id,
        type_of_event: 'feedback',
        start_event: future(6000),
        metadata: { recipient: to },
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect((await revoke(t, holder.idp_id, holder.keys[0].key_id)).status).toBe(200);
    const [run] = await runs(t.adminKey, created.body.event.id, 1);
    expect(run).toMatchObject({ trigger: 'scheduled', outcome: 'failed', result: null });
    expect(run.error).toMatch(/feedback event requires the admin permission.*revoked.*lower level/);
    expect(await mailsTo(to)).toEqual([]);

    // A user left with no active key at all: the run says so.
    const lone = await userWithKeys(t, [['admin']]);
    const to2 = `${unique('stats')}@example.com`;
    const ev = (
      await call('POST', B, {
        key: lone.keys[0].key,
        json: {
          idp_id: lone.idp_id,
          type_of_event: 'feedback',
          recurrency: 'weekly',
          start_event: future(86_400_000),
          metadata: { recipient: to2 },
        },
      })
    ).body.event;
    await revoke(t, lone.idp_id, lone.keys[0].key_id);
    expect((await call('POST', `${B}/${ev.id}/execute`, { key: t.adminKey })).status).toBe(200);
    const [run2] = await runs(t.adminKey, ev.id, 1);
    expect(run2).toMatchObject({
      trigger: 'manual',
      outcome: 'failed',
      error: 'The key that scheduled this event was revoked and its user holds no usable key',
    });
    expect(await mailsTo(to2)).toEqual([]);
  });

  it('keeps running with the rights of a rotated key of the same user', async () => {
    const t = await newTenant();
    const holder = await userWithKeys(t, [['admin'], ['admin']]);
    const ev = (
      await call('POST', B, {
        key: holder.keys[0].key,
        json: {
          idp_id: holder.idp_id,
          type_of_event: 'feedback',
          recurrency: 'weekly',
          start_event: future(86_400_000),
          metadata: {},
        },
      })
    ).body.event;
    await revoke(t, holder.idp_id, holder.keys[0].key_id);
    await call('POST', `${B}/${ev.id}/execute`, { key: holder.keys[1].key });
    expect((await runs(t.adminKey, ev.id, 1))[0]).toMatchObject({
      outcome: 'success',
      result: { stats: { total_feedback: 0 } },
    });
  });

  it("sends a basic owner's scheduled mail only to the owner's current address", async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const mine = `${unique('mine')}@example.com`;
    await call('PATCH', `/api/users/${u.user_id}`, { key: t.adminKey, json: { email: mine } });
    const ev = (
      await call('POST', B, {
        key: u.key,
        json: {
          idp_id: u.idp_id,
          type_of_event: 'email',
          recurrency: 'weekly',
          start_event: future(86_400_000),
          metadata: { template: 'reminder', title: 'Dentist', recipient: mine },
        },
      })
    ).body.event;
    await call('POST', `${B}/${ev.id}/execute`, { key: u.key });
    expect((await runs(u.key, ev.id, 1))[0]).toMatchObject({ outcome: 'success', result: { recipient: mine } });
    expect((await mailsTo(mine)).map((m) => m.subject)).toEqual(['Reminder: Dentist']);
    // The address on record changes: the stored recipient is no longer the owner's own.
    await call('PATCH', `/api/users/${u.user_id}`, {
      key: t.adminKey,
      json: { email: `${unique('new')}@example.com` },
    });
    await new Promise((r) => setTimeout(r, 1100)); // a run's workflow id carries its second
    expect((await call('POST', `${B}/${ev.id}/execute`, { key: t.adminKey })).status).toBe(200);
    const [latest] = await runs(u.key, ev.id, 2);
    expect(latest).toMatchObject({
      outcome: 'failed',
      error: expect.stringMatching(/^metadata\.recipient: a basic API key sends only to its user's own email address/),
    });
    expect(await mailsTo(mine)).toHaveLength(1);
  });

  it("counts a basic owner's scheduled mail against the user's hourly email limit", async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const mine = `${unique('full')}@example.com`;
    await call('PATCH', `/api/users/${u.user_id}`, { key: t.adminKey, json: { email: mine } });
    const sent = await Promise.all(
      Array.from({ length: 20 }, () =>
        call('POST', '/email/send', {
          key: u.key,
          json: {
            user_id: u.user_id,
            conversation_id: 'c',
            email_type: 'notification',
            metadata: { template: 'welcome' },
          },
        }),
      ),
    );
    expect(sent.map((r) => r.status)).toEqual(Array(20).fill(200));
    const ev = (
      await call('POST', B, {
        key: u.key,
        json: {
          idp_id: u.idp_id,
          type_of_event: 'email',
          recurrency: 'weekly',
          start_event: future(86_400_000),
          metadata: { template: 'reminder', title: 'Dentist' },
        },
      })
    ).body.event;
    await call('POST', `${B}/${ev.id}/execute`, { key: u.key });
    expect((await runs(u.key, ev.id, 1))[0]).toMatchObject({
      outcome: 'failed',
      error: 'Email limit reached: 20 messages per hour for this user',
    });
    expect(await mailsTo(mine)).toHaveLength(20);
  });
});

describe('scheduler rights once the saving key stopped working without being revoked', () => {
  const sleepUntil = (t: number) => new Promise((r) => setTimeout(r, Math.max(0, t - Date.now())));
  const generate = (t: Tenant, user_id: string, permissions: string[], expires_at?: Date) =>
    call('POST', '/generate_api_key', {
      key: t.adminKey,
      json: { user_id, permissions, ...(expires_at ? { expires_at: expires_at.toISOString() } : {}) },
    });
  const saveFeedback = async (key: string, idp_id: string, recipient: string) => {
    const res = await call('POST', B, {
      key,
      json: {
        idp_id,
        type_of_event: 'feedback',
        recurrency: 'weekly',
        start_event: future(86_400_000),
        metadata: { recipient },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.event.id as string;
  };

  it('refuses the run, mailing nothing, once the admin key that saved the event has expired', async () => {
    const t = await newTenant();
    const idp = unique('holder');
    const at = new Date(Date.now() + 4000);
    const admin = await generate(t, idp, ['admin'], at);
    expect(admin.status, JSON.stringify(admin.body)).toBe(200);
    expect((await generate(t, idp, ['basic'])).status).toBe(200); // the user keeps a basic key
    const to = `${unique('stats')}@example.com`;
    const id = await saveFeedback(admin.body.api_key, idp, to);

    // The lone holder of an expiring admin key: nothing usable is left.
    const lone = unique('lone');
    const loneKey = await generate(t, lone, ['admin'], at);
    const to2 = `${unique('stats')}@example.com`;
    const id2 = await saveFeedback(loneKey.body.api_key, lone, to2);

    await sleepUntil(at.getTime() + 200);
    expect((await call('POST', `${B}/${id}/execute`, { key: t.adminKey })).status).toBe(200);
    const [run] = await runs(t.adminKey, id, 1);
    expect(run).toMatchObject({ trigger: 'manual', outcome: 'failed', result: null });
    expect(run.error).toMatch(/feedback event requires the admin permission.*has expired.*lower level/);
    expect((await call('POST', `${B}/${id2}/execute`, { key: t.adminKey })).status).toBe(200);
    const [run2] = await runs(t.adminKey, id2, 1);
    expect(run2).toMatchObject({
      outcome: 'failed',
      error: 'The key that scheduled this event has expired and its user holds no usable key',
    });
    expect(await mailsTo(to)).toEqual([]);
    expect(await mailsTo(to2)).toEqual([]);
  });

  it("refuses the run once the saving key's rotation grace has ended (its successor revoked), not during the grace", async () => {
    const t = await newTenant();
    const holder = await userWithKeys(t, [['admin'], ['basic']]);
    const to = `${unique('stats')}@example.com`;
    const id = await saveFeedback(holder.keys[0].key, holder.idp_id, to);
    const rot = await call('POST', '/rotate_api_key', {
      key: t.adminKey,
      json: { user_id: holder.idp_id, key_id: holder.keys[0].key_id, grace_seconds: 0 },
    });
    expect(rot.status, JSON.stringify(rot.body)).toBe(200);
    expect((await revoke(t, holder.idp_id, rot.body.metadata.key_id)).status).toBe(200);
    expect((await call('POST', `${B}/${id}/execute`, { key: t.adminKey })).status).toBe(200);
    const [run] = await runs(t.adminKey, id, 1);
    expect(run).toMatchObject({ outcome: 'failed', result: null });
    expect(run.error).toMatch(
      /feedback event requires the admin permission.*rotated and its grace has ended.*lower level/,
    );
    expect(await mailsTo(to)).toEqual([]);

    // Within its grace the saving key still works, so the run keeps its rights.
    const other = await userWithKeys(t, [['admin'], ['basic']]);
    const ev2 = (
      await call('POST', B, {
        key: other.keys[0].key,
        json: {
          idp_id: other.idp_id,
          type_of_event: 'feedback',
          recurrency: 'weekly',
          start_event: future(86_400_000),
          metadata: {},
        },
      })
    ).body.event;
    const rot2 = await call('POST', '/rotate_api_key', {
      key: t.adminKey,
      json: { user_id: other.idp_id, key_id: other.keys[0].key_id, grace_seconds: 600 },
    });
    expect(rot2.status).toBe(200);
    await revoke(t, other.idp_id, rot2.body.metadata.key_id);
    expect((await call('POST', `${B}/${ev2.id}/execute`, { key: t.adminKey })).status).toBe(200);
    expect((await runs(t.adminKey, ev2.id, 1))[0]).toMatchObject({
      outcome: 'success',
      result: { stats: { total_feedback: 0 } },
    });
  });
});
