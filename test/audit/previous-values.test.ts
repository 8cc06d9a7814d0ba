/**
 * The audit record says what a change replaced: components note the previous value
 * (activities/core/audit-note.ts), so `changes` carries `{from, to}` for the fields an admin
 * changed, masked where secret (docs/components/audit.md, "Which actions carry from/to"). Over
 * HTTP: the change is made with an X-Request-Id, and its record is read back with GET /api/audit.
 */
import { beforeAll, describe, expect, it } from 'vitest';

import { adminKey, basicUser, call, newTenant, type Tenant, unique } from '../helpers/api.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();

type Json = Record<string, any>;

/** Makes the change under its own request id; answers the change's answer and its one audit record. */
async function changed(
  key: string,
  method: string,
  path: string,
  json: unknown,
  find: { org?: string; action: string; target: string },
): Promise<{ body: Json; record: Json; raw: string }> {
  const rid = unique('req-changes');
  const res = await call(method, path, { key, json, headers: { 'x-request-id': rid } });
  if (res.status < 200 || res.status >= 300)
    throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  const q = new URLSearchParams({ action: find.action, target_id: find.target, limit: '100' });
  if (find.org) q.set('organization_id', find.org);
  const list = await call('GET', `/api/audit?${q}`, { key });
  expect(list.status).toBe(200);
  const mine = list.body.records.filter((r: Json) => r.request_id === rid);
  expect(mine).toHaveLength(1);
  return { body: res.body, record: mine[0], raw: list.raw.toString('utf8') };
}

let t: Tenant;
let sys: string;

beforeAll(async () => {
  t = await newTenant();
  sys = adminKey();
});

describe('audit records carry the previous value', () => {
  it('PATCH /api/users/{ref}: display_name from the old name to the new', async () => {
    const u = await basicUser(t);
    expect(
      (await call('PATCH', `/api/users/${u.user_id}`, { key: t.adminKey, json: { display_name: 'Ada Before' } }))
        .status,
    ).toBe(200);
    const { record } = await changed(
      t.adminKey,
      'PATCH',
      `/api/users/${u.user_id}`,
      { display_name: 'Ada After', user_rate_limit_per_minute: 120 },
      { action: 'user.update', target: u.user_id },
    );
    expect(Object.keys(record.changes).sort()).toEqual(['display_name', 'user_rate_limit_per_minute']);
    expect(record.changes.user_rate_limit_per_minute).toEqual({ from: null, to: 120 });
    // The name from and to, or `[personal]` on both sides where the trail keeps names out (docs/components/audit.md).
    const name = record.changes.display_name;
    expect(name).toEqual(
      name.from === '[personal]' ? { from: '[personal]', to: '[personal]' } : { from: 'Ada Before', to: 'Ada After' },
    );
  });

  it('an organization renamed (and its tier changed) by the system admin', async () => {
    const org = await newTenant();
    const before = (await call('GET', `/api/organizations/${org.organization_id}`, { key: sys })).body.organization;
    const name = unique('Renamed org');
    const { record } = await changed(
      sys,
      'PATCH',
      `/api/organizations/${org.organization_id}`,
      { name, tier: 'business' },
      { org: org.organization_id, action: 'organization.update', target: org.organization_id },
    );
    expect(record.organization_id).toBe(org.organization_id);
    expect(record.changes).toEqual({ name: { from: before.name, to: name }, tier: { from: 'free', to: 'business' } });
  });

  it('PUT /loyalty/rules: per changed action its previous points and policy, and each changed setting', async () => {
    const org = await newTenant();
    const rules = (json: unknown) =>
      changed(org.adminKey, 'PUT', '/loyalty/rules', json, {
        action: 'loyalty_rules.update',
        target: org.organization_id,
      });
    // From the defaults: purchase 10 → 25, review gone, a new action, referral points 100 → 150.
    const first = await rules({
      actions: {
        daily_login: 5,
        purchase: 25,
        profile_completed: 50,
        survey_completed: 15,
        social_share: 5,
        app_download: 25,
        newsletter_signup: 10,
        birthday: { points: 30, self_service: false },
      },
      referral_points: 150,
    });
    expect(first.record.changes.actions).toEqual({
      from: { purchase: 10, review: 20, birthday: null },
      to: { purchase: 25, review: null, birthday: 30 },
    });
    expect(first.record.changes.policies).toEqual({
      from: { review: { self_service: false, limit: null }, birthday: null },
      to: { review: null, birthday: { self_service: false, limit: null } },
    });
    expect(first.record.changes.referral_points).toEqual({ from: 100, to: 150 });
    expect(first.record.changes).not.toHaveProperty('referred_points');

    // A policy alone: only that action's policy, from what it was.
    const second = await rules({ policies: { purchase: { limit: { max: 3, per: 'day' } } }, pending_days: 2 });
    expect(second.record.changes.policies).toEqual({
      from: { purchase: { self_service: false, limit: null } },
      to: { purchase: { self_service: false, limit: { max: 3, per: 'day' } } },
    });
    expect(second.record.changes.pending_days).toEqual({ from: 0, to: 2 });
    expect(second.record.changes).not.toHaveProperty('actions');
  });

  it('PATCH /api/webhooks/endpoints/{id}: url, events, enabled and description (its length) from their old values; rotate-secret never shows the secret', async () => {
    const created = await call('POST', '/api/webhooks/endpoints', {
      key: t.adminKey,
      json: { url: 'http://127.0.0.1:9/before', events: ['*'], description: 'first' },
    });
    expect(created.status).toBe(201);
    const id = created.body.endpoint.id as string;
    const { record } = await changed(
      t.adminKey,
      'PATCH',
      `/api/webhooks/endpoints/${id}`,
      { url: 'http://127.0.0.1:9/after', events: ['points.credited'], enabled: false, description: null },
      { action: 'webhook_endpoint.update', target: id },
    );
    expect(record.changes).toEqual({
      url: { from: 'http://127.0.0.1:9/before', to: 'http://127.0.0.1:9/after' },
      events: { from: ['*'], to: ['points.credited'] },
      enabled: { from: true, to: false },
      // an admin's own words: their length only (test/audit/no-personal-data-in-trail.test.ts)
      description: { from: '<text: 5 characters>', to: null },
    });

    const rotated = await changed(
      t.adminKey,
      'POST',
      `/api/webhooks/endpoints/${id}/rotate-secret`,
      { grace_seconds: 0 },
      { action: 'webhook_endpoint.rotate_secret', target: id },
    );
    expect(rotated.record.changes.secret).toEqual({ from: '***', to: '***' });
    expect(typeof rotated.body.secret).toBe('string');
    expect(rotated.raw).not.toContain(rotated.body.secret);
    expect(created.body.secret && rotated.raw.includes(created.body.secret)).toBe(false);

    const paused = await changed(t.adminKey, 'POST', `/api/webhooks/endpoints/${id}/pause`, undefined, {
      action: 'webhook_endpoint.pause',
      target: id,
    });
    expect(paused.record.changes).toEqual({ paused: { from: false, to: true } });
    const resumed = await changed(t.adminKey, 'POST', `/api/webhooks/endpoints/${id}/resume`, undefined, {
      action: 'webhook_endpoint.resume',
      target: id,
    });
    expect(resumed.record.changes).toEqual({ paused: { from: true, to: false } });
  });

  it('POST /update-provider-config with a new api key: the key masked on both sides, and no raw key anywhere in GET /api/audit', async () => {
    const agent_name = 'transcription';
    const first = `audit-raw-provider-key-${unique('one')}`;
    const second = `audit-raw-provider-key-${unique('two')}`;
    const set = (config_json: Json) =>
      changed(
        sys,
        'POST',
        '/api/llm-config/update-provider-config',
        { agent_name, config_json },
        { action: 'llm_provider.update', target: agent_name },
      );
    await set({ provider: 'audit-standin', base_url: 'http://127.0.0.1:9/v1', api_key: first, models: ['m1'] });
    const { record, raw } = await set({
      provider: 'audit-standin',
      base_url: 'http://127.0.0.1:9/v1',
      api_key: second,
      models: ['m1', 'm2'],
    });
    expect(record.changes.api_key).toEqual({ from: '***', to: '***' });
    expect(record.changes.models).toEqual({ from: ['m1'], to: ['m1', 'm2'] });
    expect(record.changes.config_json.to.api_key).toBe('***');
    const hint = (await call('GET', `/api/llm-config/provider-config/${agent_name}`, { key: sys })).body.config
      .api_key as string;
    expect(hint).toContain('…');
    for (const key of [first, second]) expect(raw).not.toContain(key);
    // nor the hint of it the provider's configuration shows (its first and last characters)
    expect(raw).not.toContain(hint);
    const all = await call('GET', '/api/audit?action=llm_provider.update&limit=100', { key: sys });
    for (const key of [first, second]) expect(all.raw.toString('utf8')).not.toContain(key);
  });

  it("POST /update-llm-config: an organization's settings from their previous values", async () => {
    const biz = await newTenant('business');
    const set = (config_json: Json) =>
      changed(
        biz.adminKey,
        'POST',
        '/api/llm-config/update-llm-config',
        { agent_name: 'support', config_json },
        { action: 'llm_config.update', target: 'support' },
      );
    await set({ model: 'gpt-4o-mini', temperature: 0.3 });
    const { record } = await set({ model: 'gpt-4o', temperature: 0.3 });
    expect(record.changes.model).toEqual({ from: 'gpt-4o-mini', to: 'gpt-4o' });
    expect(record.changes).not.toHaveProperty('temperature');
  });

  it('POST /revoke_api_key: status from active to revoked; a repeat (already revoked) notes nothing', async () => {
    const u = await basicUser(t);
    const keys = await call('GET', `/list_api_keys/${u.user_id}`, { key: t.adminKey });
    const key_id = keys.body.api_keys[0].key_id as string;
    const { record } = await changed(
      t.adminKey,
      'POST',
      '/revoke_api_key',
      { user_id: u.user_id, api_key: u.key },
      { action: 'api_key.revoke', target: key_id },
    );
    expect(record.changes.status).toEqual({ from: 'active', to: 'revoked' });
    expect(record.changes.api_key).toEqual({ to: '***' });
    const again = await changed(
      t.adminKey,
      'POST',
      '/revoke_api_key',
      { user_id: u.user_id, api_key: key_id },
      { action: 'api_key.revoke', target: key_id },
    );
    expect(again.record.changes).not.toHaveProperty('status');
  });

  it('POST /rotate_api_key: rotated_to names the successor, and the old key from active to expired', async () => {
    const u = await basicUser(t);
    const { body, record, raw } = await changed(
      t.adminKey,
      'POST',
      '/rotate_api_key',
      { user_id: u.user_id, api_key: u.key, grace_seconds: 0 },
      {
        action: 'api_key.rotate',
        target: (await call('GET', `/list_api_keys/${u.user_id}`, { key: t.adminKey })).body.api_keys[0].key_id,
      },
    );
    expect(record.changes.rotated_to).toEqual({ from: null, to: body.metadata.key_id });
    expect(record.changes.status).toEqual({ from: 'active', to: 'expired' });
    expect(raw).not.toContain(body.api_key);
    expect(raw).not.toContain(u.key);
  });

  it('PUT /api/gifts/gifts/{id}: the fields that changed; a refused change leaves no record', async () => {
    const gift = {
      gift_name: 'Changes voucher',
      gift_type: 'electronic_pins',
      country: 'US',
      supplier: 'Steam',
      electronic_pin_amount: 5,
      points_value: 10,
    };
    const created = await call('POST', '/api/gifts/gifts', { key: t.adminKey, json: gift });
    expect(created.status).toBe(201);
    const id = created.body.gift.id as string;
    const { record } = await changed(
      t.adminKey,
      'PUT',
      `/api/gifts/gifts/${id}`,
      { ...gift, gift_name: 'Changes voucher, renamed', points_value: 12, country: undefined },
      { action: 'gift.update', target: id },
    );
    expect(record.changes.gift_name).toEqual({ from: 'Changes voucher', to: 'Changes voucher, renamed' });
    expect(record.changes.points_value).toEqual({ from: 10, to: 12 });
    expect(record.changes.country).toEqual({ from: 'US', to: null });
    expect(record.changes).not.toHaveProperty('supplier.from');
  });

  it('scheduler: an event updated (the changed fields) and paused and resumed (paused from/to)', async () => {
    const u = await basicUser(t);
    const created = await call('POST', '/api/scheduler-service/events', {
      key: t.adminKey,
      json: {
        idp_id: u.user_id,
        type_of_event: 'loyalty',
        recurrency: 'daily',
        start_event: '2031-01-05T09:30:00Z',
        metadata: { action_type: 'daily_login' },
      },
    });
    expect([200, 201]).toContain(created.status);
    const id = created.body.event.id as string;
    const { record } = await changed(
      t.adminKey,
      'PUT',
      `/api/scheduler-service/events/${id}`,
      {
        idp_id: u.user_id,
        type_of_event: 'loyalty',
        recurrency: 'weekly',
        start_event: '2031-01-05T09:30:00Z',
        metadata: { action_type: 'profile_completed' },
      },
      { action: 'scheduled_event.update', target: id },
    );
    expect(record.changes.recurrency).toEqual({ from: 'daily', to: 'weekly' });
    expect(record.changes.metadata).toEqual({
      from: { action_type: 'daily_login' },
      to: { action_type: 'profile_completed' },
    });
    expect(record.changes).not.toHaveProperty('start_event.from');

    const paused = await changed(
      t.adminKey,
      'POST',
      `/scheduler/events/${id}/pause`,
      { note: 'audit' },
      { action: 'scheduled_event.pause', target: id },
    );
    expect(paused.record.changes.paused).toEqual({ from: false, to: true });
    const resumed = await changed(
      t.adminKey,
      'POST',
      `/scheduler/events/${id}/resume`,
      {},
      { action: 'scheduled_event.resume', target: id },
    );
    expect(resumed.record.changes.paused).toEqual({ from: true, to: false });
  });

  it('PUT /retail/admin/brands/{id}: the fields that changed', async () => {
    const created = await call('POST', '/retail/admin/brands', {
      key: t.adminKey,
      json: { name: 'Brand before', description: 'd' },
    });
    expect(created.status).toBe(201);
    const id = String(created.body.brand.id);
    const { record } = await changed(
      t.adminKey,
      'PUT',
      `/retail/admin/brands/${id}`,
      { name: 'Brand after', description: 'd', featured: true },
      { action: 'brand.update', target: id },
    );
    expect(record.changes.name).toEqual({ from: 'Brand before', to: 'Brand after' });
    expect(record.changes.featured).toEqual({ from: false, to: true });
    expect(record.changes.description).toEqual({ to: 'd' });
  });

  it('the chain still verifies', async () => {
    expect((await call('GET', '/api/audit/verify', { key: t.adminKey })).body).toMatchObject({
      ok: true,
      first_break: null,
    });
  });
});
