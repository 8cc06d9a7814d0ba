import { describe, expect, it } from 'vitest';

import { adminKey, basicUser, call, newTenant, unique } from '../helpers/api.ts';

describe.each(['', '/api/session-service'])('session service at "%s"', (prefix) => {
  it('initializes a session with a first conversation, scoped to the organization', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const res = await call('POST', `${prefix}/initialize_session`, {
      key: u.key,
      json: { user_id: u.idp_id, source: 'mobile' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      user_id: u.user_id,
      idp_id: u.idp_id,
      organization_id: t.organization_id,
    });
    expect(res.body.session_id).toMatch(/^ses_/);
    expect(res.body.conversation_id).toMatch(/^conv_/);
    expect(res.body.metadata).toMatchObject({ status: 'active', source: 'mobile', organization_id: t.organization_id });
    expect(new Date(res.body.metadata.created_at).toISOString()).toBe(res.body.metadata.created_at);

    const verify = await call('POST', `${prefix}/verify_session`, {
      key: u.key,
      json: { user_id: u.user_id, conversation_id: res.body.conversation_id },
    });
    expect(verify.body).toMatchObject({ success: true, valid: true, session_id: res.body.session_id });
  });

  it('defaults the organization and source, and holds several conversations per session', async () => {
    const idp = unique('walk-in');
    const init = await call('POST', `${prefix}/initialize_session`, { key: adminKey(), json: { user_id: idp } });
    expect(init.status).toBe(200);
    expect(init.body.organization_id).toBe('default');
    expect(init.body.metadata.source).toBe('web');
    const second = await call('POST', `${prefix}/new_conversation`, {
      key: adminKey(),
      json: { user_id: idp, session_id: init.body.session_id },
    });
    expect(second.status).toBe(200);
    expect(second.body.session_id).toBe(init.body.session_id);
    expect(second.body.conversation_id).not.toBe(init.body.conversation_id);
    const implicit = await call('POST', `${prefix}/new_conversation`, { key: adminKey(), json: { user_id: idp } });
    expect(implicit.body.session_id).toBe(init.body.session_id);
    for (const c of [init.body.conversation_id, second.body.conversation_id, implicit.body.conversation_id]) {
      const v = await call('POST', `${prefix}/verify_session`, {
        key: adminKey(),
        json: { user_id: idp, conversation_id: c },
      });
      expect(v.body.valid).toBe(true);
    }
  });

  it("says invalid for another user's conversation or an unknown one", async () => {
    const t = await newTenant();
    const a = await basicUser(t);
    const b = await basicUser(t);
    const init = await call('POST', `${prefix}/initialize_session`, { key: a.key, json: { user_id: a.user_id } });
    const other = await call('POST', `${prefix}/verify_session`, {
      key: b.key,
      json: { user_id: b.user_id, conversation_id: init.body.conversation_id },
    });
    expect(other.status).toBe(200);
    expect(other.body.valid).toBe(false);
    const unknown = await call('POST', `${prefix}/verify_session`, {
      key: a.key,
      json: { user_id: a.user_id, conversation_id: 'conv_nope' },
    });
    expect(unknown.body.valid).toBe(false);
  });

  it("refuses a session id that is not the user's", async () => {
    const t = await newTenant();
    const a = await basicUser(t);
    const b = await basicUser(t);
    const init = await call('POST', `${prefix}/initialize_session`, { key: a.key, json: { user_id: a.user_id } });
    const res = await call('POST', `${prefix}/new_conversation`, {
      key: b.key,
      json: { user_id: b.user_id, session_id: init.body.session_id },
    });
    expect(res.status).toBe(404);
    expect(res.body.detail).toMatch(/Session not found/);
  });

  it('generates, lists (masked), verifies and revokes keys', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const gen = await call('POST', `${prefix}/generate_api_key`, { key: u.key, json: { user_id: u.idp_id } });
    expect(gen.status).toBe(200);
    expect(gen.body.api_key).toMatch(/^pk_[A-Za-z0-9_-]{43}$/);
    expect(gen.body.metadata).toMatchObject({
      permissions: ['basic'],
      user_id: u.user_id,
      idp_id: u.idp_id,
      organization_id: t.organization_id,
    });

    const before = await call('GET', `${prefix}/list_api_keys/${u.idp_id}`, { key: u.key });
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({ user_id: u.user_id, idp_id: u.idp_id });
    const listed = before.body.api_keys.find((k: any) => k.key_id === gen.body.metadata.key_id);
    expect(listed).toMatchObject({ active: true, status: 'active', permissions: ['basic'], last_used: null });
    expect(listed.key).toBe(`${gen.body.api_key.slice(0, 7)}…`);
    expect(JSON.stringify(before.body)).not.toContain(gen.body.api_key.slice(7, 20));

    const verify = await call('POST', `${prefix}/verify_api_key`, { json: { api_key: gen.body.api_key } });
    expect(verify.body).toMatchObject({
      valid: true,
      user_id: u.user_id,
      idp_id: u.idp_id,
      organization_id: t.organization_id,
    });
    const after = await call('GET', `${prefix}/list_api_keys/${u.user_id}`, { key: u.key });
    const used = after.body.api_keys.find((k: any) => k.key_id === gen.body.metadata.key_id);
    expect(Date.parse(used.last_used)).toBeGreaterThan(Date.parse(used.created_at) - 1);

    const revoke = await call('POST', `${prefix}/revoke_api_key`, {
      key: u.key,
      json: { user_id: u.user_id, api_key: gen.body.api_key },
    });
    expect(revoke.body).toMatchObject({ success: true, message: 'API key revoked' });
    expect((await call('POST', `${prefix}/verify_api_key`, { json: { api_key: gen.body.api_key } })).body).toEqual({
      valid: false,
      reason: 'revoked',
    });
    // Effective on the very next request.
    expect((await call('GET', `${prefix}/list_api_keys/${u.user_id}`, { key: gen.body.api_key })).status).toBe(401);
    const again = await call('POST', `${prefix}/revoke_api_key`, {
      key: u.key,
      json: { user_id: u.user_id, api_key: gen.body.metadata.key_id },
    });
    expect(again.body.message).toBe('API key was already revoked');
    const final = await call('GET', `${prefix}/list_api_keys/${u.user_id}`, { key: u.key });
    expect(final.body.api_keys.find((k: any) => k.key_id === gen.body.metadata.key_id)).toMatchObject({
      active: false,
      status: 'revoked',
    });
  });

  it('pauses, resumes and ends a session; an ended session is final and stops verifying', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const init = await call('POST', `${prefix}/initialize_session`, { key: u.key, json: { user_id: u.user_id } });
    const set = (status: string, key = u.key, user_id = u.user_id) =>
      call('POST', `${prefix}/update_session_status`, {
        key,
        json: { user_id, session_id: init.body.session_id, status },
      });
    expect((await set('paused')).body.metadata.status).toBe('paused');
    expect(
      (
        await call('POST', `${prefix}/verify_session`, {
          key: u.key,
          json: { user_id: u.user_id, conversation_id: init.body.conversation_id },
        })
      ).body.valid,
    ).toBe(true);
    expect((await set('active')).body.metadata.status).toBe('active');
    expect((await set('ended')).body.metadata.status).toBe('ended');
    const verify = await call('POST', `${prefix}/verify_session`, {
      key: u.key,
      json: { user_id: u.user_id, conversation_id: init.body.conversation_id },
    });
    expect(verify.body).toMatchObject({ valid: false, status: 'ended' });
    expect((await set('active')).status).toBe(409);
    const more = await call('POST', `${prefix}/new_conversation`, {
      key: u.key,
      json: { user_id: u.user_id, session_id: init.body.session_id },
    });
    expect(more.status).toBe(409);
    expect((await set('sleeping')).status).toBe(422);
    const other = await basicUser(t);
    expect((await set('paused', other.key, other.user_id)).status).toBe(404);
  });

  it('verify_api_key says false for garbage without a key and needs none', async () => {
    for (const api_key of ['', 'nope', 'pk_' + 'x'.repeat(43), 'pk_short']) {
      const res = await call('POST', `${prefix}/verify_api_key`, { json: { api_key } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ valid: false, reason: 'not_found' });
    }
  });
});

describe('ended sessions', () => {
  it('stay ended whatever activity and status changes race the end', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    for (let round = 0; round < 4; round += 1) {
      const init = await call('POST', '/initialize_session', { key: u.key, json: { user_id: u.user_id } });
      const { session_id, conversation_id } = init.body;
      const status = (s: string) =>
        call('POST', '/update_session_status', { key: u.key, json: { user_id: u.user_id, session_id, status: s } });
      const activity = () => [
        call('POST', '/verify_session', { key: u.key, json: { user_id: u.user_id, conversation_id } }),
        call('POST', '/new_conversation', { key: u.key, json: { user_id: u.user_id, session_id } }),
      ];
      const racing = [
        ...activity(),
        ...activity(),
        status('paused'),
        ...activity(),
        status('ended'),
        ...activity(),
        status('active'),
        ...activity(),
        ...activity(),
      ];
      const answers = await Promise.all(racing);
      for (const a of answers) expect([200, 409], JSON.stringify(a.body)).toContain(a.status);
      const verify = await call('POST', '/verify_session', {
        key: u.key,
        json: { user_id: u.user_id, conversation_id },
      });
      expect(verify.body, `round ${round}`).toMatchObject({ valid: false, status: 'ended' });
      expect((await status('paused')).status).toBe(409);
      expect(
        (await call('POST', '/new_conversation', { key: u.key, json: { user_id: u.user_id, session_id } })).status,
      ).toBe(409);
      const implicit = await call('POST', '/new_conversation', { key: u.key, json: { user_id: u.user_id } });
      expect(implicit.body.session_id).not.toBe(session_id);
      expect((await status('ended')).body.metadata.status).toBe('ended'); // ending again is harmless
    }
  });
});
