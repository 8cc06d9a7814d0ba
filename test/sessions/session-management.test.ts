/** A user's sessions seen and ended, and the organization's lifetime and inactivity timeout. */
import { describe, expect, it } from 'vitest';

import { basicUser, call, newTenant } from '../helpers/api.ts';
import { useSuiteClients } from '../helpers/runtime.ts';

const suite = useSuiteClients();

async function startSession(key: string, user_id: string, source = 'mobile') {
  const res = await call('POST', '/initialize_session', { key, json: { user_id, source } });
  expect(res.status).toBe(200);
  return { session_id: res.body.session_id as string, conversation_id: res.body.conversation_id as string };
}

const verify = async (key: string, user_id: string, conversation_id: string) =>
  (await call('POST', '/verify_session', { key, json: { user_id, conversation_id } })).body.valid as boolean;

const sessionsOf = async (key: string, user: string) =>
  call('GET', `/api/users/${encodeURIComponent(user)}/sessions`, { key });

/** Moves a session's recorded times into the past, as if it had been created or used that long ago. */
async function age(session_id: string, fields: { created_at?: number; last_activity?: number }) {
  const set: Record<string, Date> = {};
  for (const [k, ms] of Object.entries(fields)) set[k] = new Date(Date.now() - ms);
  await suite.db.collection('sessions').updateOne({ session_id }, { $set: set });
}

describe('GET /api/users/{user_ref}/sessions', () => {
  it("lists the user's own sessions, newest activity first, with their state", async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const first = await startSession(u.key, u.user_id, 'web');
    const second = await startSession(u.key, u.idp_id, 'mobile');
    await age(first.session_id, { last_activity: 3_600_000 });
    const res = await sessionsOf(u.key, u.idp_id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, user_id: u.user_id, total: 2, page: 1, has_more: false });
    expect(res.body.sessions.map((s: { session_id: string }) => s.session_id)).toEqual([
      second.session_id,
      first.session_id,
    ]);
    expect(res.body.sessions[0]).toMatchObject({ status: 'active', source: 'mobile', ended_at: null, ends_at: null });
    const paged = await call('GET', `/api/users/${u.user_id}/sessions?limit=1&page=2`, { key: u.key });
    expect(paged.body).toMatchObject({ total: 2, limit: 1, has_more: false });
    expect(paged.body.sessions[0].session_id).toBe(first.session_id);
  });

  it("refuses a basic key another user's sessions, and another organization's admin sees nothing", async () => {
    const t = await newTenant();
    const a = await basicUser(t);
    const b = await basicUser(t);
    await startSession(b.key, b.user_id);
    expect((await sessionsOf(a.key, b.user_id)).status).toBe(403);
    expect((await sessionsOf(a.key, b.idp_id)).status).toBe(403);
    const other = await newTenant();
    const foreign = await sessionsOf(other.adminKey, b.user_id);
    expect(foreign.status).toBe(404);
    const admin = await sessionsOf(t.adminKey, b.idp_id);
    expect(admin.status).toBe(200);
    expect(admin.body.total).toBe(1);
  });

  it('refuses a bad page or limit with 422 naming the field', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const res = await call('GET', `/api/users/${u.user_id}/sessions?limit=500`, { key: u.key });
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body)).toContain('limit');
  });
});

describe('DELETE /api/sessions/{session_id}', () => {
  it('ends one session: its conversations stop verifying, a repeat answers it unchanged', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const s = await startSession(u.key, u.user_id);
    const keep = await startSession(u.key, u.user_id);
    const res = await call('DELETE', `/api/sessions/${s.session_id}`, { key: u.key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      already_ended: false,
      session: { session_id: s.session_id, status: 'ended', end_reason: 'ended' },
    });
    expect(await verify(u.key, u.user_id, s.conversation_id)).toBe(false);
    expect(await verify(u.key, u.user_id, keep.conversation_id)).toBe(true);
    const again = await call('DELETE', `/api/sessions/${s.session_id}`, { key: u.key });
    expect(again.body).toMatchObject({ already_ended: true, session: { ended_at: res.body.session.ended_at } });
    const listed = await sessionsOf(u.key, u.user_id);
    expect(listed.body.sessions.find((x: { session_id: string }) => x.session_id === s.session_id)).toMatchObject({
      status: 'ended',
    });
  });

  it("answers 404 for another user's session or another organization's, and that session still verifies", async () => {
    const t = await newTenant();
    const a = await basicUser(t);
    const b = await basicUser(t);
    const s = await startSession(b.key, b.user_id);
    const res = await call('DELETE', `/api/sessions/${s.session_id}`, { key: a.key });
    expect(res.status).toBe(404);
    expect(res.body.detail).toContain('Session not found');
    const other = await newTenant();
    expect((await call('DELETE', `/api/sessions/${s.session_id}`, { key: other.adminKey })).status).toBe(404);
    expect(await verify(b.key, b.user_id, s.conversation_id)).toBe(true);
    // The organization's admin may end it.
    const admin = await call('DELETE', `/api/sessions/${s.session_id}`, { key: t.adminKey });
    expect(admin.status).toBe(200);
    expect(await verify(b.key, b.user_id, s.conversation_id)).toBe(false);
    const audit = await call('GET', `/api/audit?action=session.end&target_id=${s.session_id}`, { key: t.adminKey });
    expect(audit.body.records).toHaveLength(1);
  });
});

describe('POST /api/users/{user_ref}/sessions/end-others', () => {
  it("ends every session but the caller's current one", async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const phone = await startSession(u.key, u.user_id);
    const laptop = await startSession(u.key, u.user_id, 'web');
    const tablet = await startSession(u.key, u.user_id);
    const res = await call('POST', `/api/users/${u.idp_id}/sessions/end-others`, {
      key: u.key,
      json: { current_session_id: phone.session_id },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, user_id: u.user_id, current_session_id: phone.session_id, ended: 2 });
    expect(await verify(u.key, u.user_id, phone.conversation_id)).toBe(true);
    expect(await verify(u.key, u.user_id, laptop.conversation_id)).toBe(false);
    expect(await verify(u.key, u.user_id, tablet.conversation_id)).toBe(false);
    const again = await call('POST', `/api/users/${u.user_id}/sessions/end-others`, {
      key: u.key,
      json: { current_session_id: phone.session_id },
    });
    expect(again.body.ended).toBe(0);
  });

  it("refuses another user's target or current session, an ended current session, and a missing field; nothing ends", async () => {
    const t = await newTenant();
    const a = await basicUser(t);
    const b = await basicUser(t);
    const mine = await startSession(a.key, a.user_id);
    const hers = await startSession(b.key, b.user_id);
    const hers2 = await startSession(b.key, b.user_id);
    const forB = await call('POST', `/api/users/${b.user_id}/sessions/end-others`, {
      key: a.key,
      json: { current_session_id: mine.session_id },
    });
    expect(forB.status).toBe(403);
    const withHers = await call('POST', `/api/users/${a.user_id}/sessions/end-others`, {
      key: a.key,
      json: { current_session_id: hers.session_id },
    });
    expect(withHers.status).toBe(404);
    const missing = await call('POST', `/api/users/${a.user_id}/sessions/end-others`, { key: a.key, json: {} });
    expect(missing.status).toBe(422);
    expect(JSON.stringify(missing.body)).toContain('current_session_id');
    expect(await verify(b.key, b.user_id, hers.conversation_id)).toBe(true);
    expect(await verify(b.key, b.user_id, hers2.conversation_id)).toBe(true);
    expect(await verify(a.key, a.user_id, mine.conversation_id)).toBe(true);

    await call('DELETE', `/api/sessions/${hers.session_id}`, { key: b.key });
    const ended = await call('POST', `/api/users/${b.user_id}/sessions/end-others`, {
      key: b.key,
      json: { current_session_id: hers.session_id },
    });
    expect(ended.status).toBe(409);
    expect(await verify(b.key, b.user_id, hers2.conversation_id)).toBe(true);
  });
});

describe('the session policy (GET, PUT /api/sessions/policy)', () => {
  it('is read and set by an admin, audited, and refused to a basic key', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const none = await call('GET', '/api/sessions/policy', { key: t.adminKey });
    expect(none.body).toMatchObject({ lifetime_seconds: null, idle_timeout_seconds: null, updated_at: null });
    expect((await call('GET', '/api/sessions/policy', { key: u.key })).status).toBe(403);
    const basicPut = await call('PUT', '/api/sessions/policy', { key: u.key, json: { lifetime_seconds: 600 } });
    expect(basicPut.status).toBe(403);
    const set = await call('PUT', '/api/sessions/policy', {
      key: t.adminKey,
      json: { lifetime_seconds: 86_400, idle_timeout_seconds: 1800 },
    });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({
      organization_id: t.organization_id,
      lifetime_seconds: 86_400,
      idle_timeout_seconds: 1800,
    });
    const partial = await call('PUT', '/api/sessions/policy', { key: t.adminKey, json: { lifetime_seconds: null } });
    expect(partial.body).toMatchObject({ lifetime_seconds: null, idle_timeout_seconds: 1800 });
    const audit = await call('GET', `/api/audit?action=session_policy.update`, { key: t.adminKey });
    expect(audit.status).toBe(200);
    expect(audit.body.records.length).toBe(2);
    const other = await newTenant();
    expect((await call('GET', '/api/sessions/policy', { key: other.adminKey })).body.idle_timeout_seconds).toBeNull();
    expect(
      (
        await call('GET', `/api/sessions/policy?organization_id=${t.organization_id}`, {
          key: other.adminKey,
        })
      ).status,
    ).toBe(403);
  });

  it('refuses limits out of bounds with 422 naming the field, and changes nothing', async () => {
    const t = await newTenant();
    for (const json of [{ lifetime_seconds: 10 }, { idle_timeout_seconds: 91 * 86_400 }, { lifetime_seconds: 1.5 }]) {
      const res = await call('PUT', '/api/sessions/policy', { key: t.adminKey, json });
      expect(res.status).toBe(422);
      expect(JSON.stringify(res.body)).toContain(Object.keys(json)[0]);
    }
    expect((await call('GET', '/api/sessions/policy', { key: t.adminKey })).body.lifetime_seconds).toBeNull();
  });

  it('ends a session past its lifetime: it stops verifying and is listed as ended by its lifetime', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    await call('PUT', '/api/sessions/policy', { key: t.adminKey, json: { lifetime_seconds: 3600 } });
    const old = await startSession(u.key, u.user_id);
    const fresh = await startSession(u.key, u.user_id);
    await age(old.session_id, { created_at: 3_700_000 });
    expect(await verify(u.key, u.user_id, old.conversation_id)).toBe(false);
    expect(await verify(u.key, u.user_id, fresh.conversation_id)).toBe(true);
    const listed = (await sessionsOf(u.key, u.user_id)).body.sessions as { session_id: string }[];
    expect(listed.find((s) => s.session_id === old.session_id)).toMatchObject({
      status: 'ended',
      end_reason: 'lifetime',
    });
    expect(listed.find((s) => s.session_id === fresh.session_id)).toMatchObject({ status: 'active' });
    const reopen = await call('POST', '/update_session_status', {
      key: u.key,
      json: { user_id: u.user_id, session_id: old.session_id, status: 'active' },
    });
    expect(reopen.status).toBe(409);
  });

  it('ends a session idle past the timeout (plus the minute activity may lag), and use keeps one alive', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    await call('PUT', '/api/sessions/policy', { key: t.adminKey, json: { idle_timeout_seconds: 600 } });
    const idle = await startSession(u.key, u.user_id);
    const used = await startSession(u.key, u.user_id);
    const recent = await startSession(u.key, u.user_id);
    await age(idle.session_id, { last_activity: 600_000 + 61_000 });
    await age(used.session_id, { last_activity: 500_000 });
    // Within the minute's lag: not yet ended.
    await age(recent.session_id, { last_activity: 600_000 + 30_000 });
    expect(await verify(u.key, u.user_id, idle.conversation_id)).toBe(false);
    expect(await verify(u.key, u.user_id, used.conversation_id)).toBe(true);
    expect(await verify(u.key, u.user_id, recent.conversation_id)).toBe(true);
    const listed = (await sessionsOf(u.key, u.user_id)).body.sessions as { session_id: string }[];
    expect(listed.find((s) => s.session_id === idle.session_id)).toMatchObject({ end_reason: 'inactivity' });
    // The use was recorded: the session's idle clock restarted.
    const doc = await suite.db.collection('sessions').findOne({ session_id: used.session_id });
    expect(Date.now() - new Date(doc!.last_activity).getTime()).toBeLessThan(60_000);
  });

  it('records activity at most once a minute', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const s = await startSession(u.key, u.user_id);
    await age(s.session_id, { last_activity: 30_000 });
    const before = (await suite.db.collection('sessions').findOne({ session_id: s.session_id }))!.last_activity;
    expect(await verify(u.key, u.user_id, s.conversation_id)).toBe(true);
    const after = (await suite.db.collection('sessions').findOne({ session_id: s.session_id }))!.last_activity;
    expect(after.getTime()).toBe(before.getTime());
    await age(s.session_id, { last_activity: 90_000 });
    expect(await verify(u.key, u.user_id, s.conversation_id)).toBe(true);
    const moved = (await suite.db.collection('sessions').findOne({ session_id: s.session_id }))!.last_activity;
    expect(Date.now() - moved.getTime()).toBeLessThan(10_000);
  });
});
