/**
 * Outgoing events over HTTP with a local receiver: endpoints, the Standard Webhooks signature (checked
 * with the `standardwebhooks` library), exactly one event per change, retries, 410, rotation, the
 * delivery list, manual retries and the event log.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

import { basicUser, call, newTenant, type Tenant, unique, until } from '../helpers/api.ts';
import { addEndpoint, receivedAt, type Receiver, startReceiver, verified } from '../helpers/receiver.ts';

let rx: Receiver;
let t: Tenant;

beforeAll(async () => {
  rx = await startReceiver();
  t = await newTenant();
});
afterAll(() => rx.close());

const award = (tenant: Tenant, idp: string, action = 'purchase', key?: string, headers?: Record<string, string>) =>
  call('POST', `/loyalty/award-points/${idp}`, { key: key ?? tenant.adminKey, json: { action_type: action }, headers });

const deliveriesOf = async (tenant: Tenant, endpoint_id: string) =>
  (await call('GET', `/api/webhooks/deliveries?endpoint_id=${endpoint_id}`, { key: tenant.adminKey })).body.deliveries;

describe('webhook endpoints', () => {
  it('creates an endpoint whose secret is shown once, lists, reads, changes and deletes it', async () => {
    const created = await call('POST', '/api/webhooks/endpoints', {
      key: t.adminKey,
      json: { url: rx.url('/crud'), events: ['points.credited'], description: 'shop' },
    });
    expect(created.status).toBe(201);
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
    expect(created.body.endpoint).toMatchObject({
      url: rx.url('/crud'),
      events: ['points.credited'],
      enabled: true,
      description: 'shop',
      organization_id: t.organization_id,
    });
    const id = created.body.endpoint.id;
    const listed = await call('GET', '/api/webhooks/endpoints', { key: t.adminKey });
    expect(listed.body.endpoints.map((e: { id: string }) => e.id)).toContain(id);
    expect(JSON.stringify(listed.body)).not.toContain(created.body.secret);
    expect(
      JSON.stringify((await call('GET', `/api/webhooks/endpoints/${id}`, { key: t.adminKey })).body),
    ).not.toContain('whsec_');
    const changed = await call('PATCH', `/api/webhooks/endpoints/${id}`, {
      key: t.adminKey,
      json: { events: ['*'], enabled: false, description: null },
    });
    expect(changed.body.endpoint).toMatchObject({ events: ['*'], enabled: false, description: null });
    expect((await call('DELETE', `/api/webhooks/endpoints/${id}`, { key: t.adminKey })).status).toBe(200);
    expect((await call('GET', `/api/webhooks/endpoints/${id}`, { key: t.adminKey })).status).toBe(404);
  });

  it('keeps at most 20 endpoints per organization under concurrent creates, and says who created each', async () => {
    const tenant = await newTenant();
    const creates = await Promise.all(
      Array.from({ length: 26 }, (_, i) =>
        call('POST', '/api/webhooks/endpoints', {
          key: tenant.adminKey,
          json: { url: rx.url(`/cap-${i}`), events: ['*'] },
        }),
      ),
    );
    expect(creates.filter((c) => c.status === 201)).toHaveLength(20);
    expect(creates.filter((c) => c.status === 409)).toHaveLength(6);
    const made = creates.find((c) => c.status === 201)!.body.endpoint;
    expect(made.created_by).toEqual({ key_id: expect.stringMatching(/^key_/), user_id: tenant.admin.user_id });
    expect((await call('GET', '/api/webhooks/endpoints', { key: tenant.adminKey })).body.endpoints).toHaveLength(20);
    expect((await call('DELETE', `/api/webhooks/endpoints/${made.id}`, { key: tenant.adminKey })).status).toBe(200);
    expect(
      (
        await call('POST', '/api/webhooks/endpoints', {
          key: tenant.adminKey,
          json: { url: rx.url('/cap-again'), events: ['*'] },
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await call('POST', '/api/webhooks/endpoints', {
          key: tenant.adminKey,
          json: { url: rx.url('/cap-over'), events: ['*'] },
        })
      ).status,
    ).toBe(409);
  });

  it('refuses bad input with 422 and changes nothing', async () => {
    const bad = [
      { url: 'ftp://example.com/x', events: ['*'] },
      { url: rx.url('/x'), events: ['points.nope'] },
      { url: rx.url('/x'), events: ['*', 'ping'] },
      { url: rx.url('/x'), events: [] },
    ];
    const before = (await call('GET', '/api/webhooks/endpoints', { key: t.adminKey })).body.endpoints.length;
    for (const json of bad) {
      const res = await call('POST', '/api/webhooks/endpoints', { key: t.adminKey, json });
      expect(res.status, JSON.stringify(json)).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    }
    expect((await call('GET', '/api/webhooks/endpoints', { key: t.adminKey })).body.endpoints.length).toBe(before);
  });

  it("hides another organization's endpoints and deliveries (404), and refuses basic keys (403)", async () => {
    const other = await newTenant();
    const theirs = await addEndpoint(other, rx, unique('/theirs'));
    for (const [method, path] of [
      ['GET', `/api/webhooks/endpoints/${theirs.id}`],
      ['PATCH', `/api/webhooks/endpoints/${theirs.id}`],
      ['DELETE', `/api/webhooks/endpoints/${theirs.id}`],
      ['POST', `/api/webhooks/endpoints/${theirs.id}/rotate-secret`],
      ['POST', `/api/webhooks/endpoints/${theirs.id}/test`],
    ] as const) {
      const res = await call(method, path, {
        key: t.adminKey,
        ...(method !== 'GET' && { json: method === 'PATCH' ? { enabled: false } : {} }),
      });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect(
      (await call('GET', `/api/webhooks/endpoints?organization_id=${other.organization_id}`, { key: t.adminKey }))
        .status,
    ).toBe(403);
    const u = await basicUser(t);
    expect((await call('GET', '/api/webhooks/endpoints', { key: u.key })).status).toBe(403);
    expect(
      (await call('POST', '/api/webhooks/endpoints', { key: u.key, json: { url: rx.url('/x'), events: ['*'] } }))
        .status,
    ).toBe(403);
    expect((await call('GET', '/api/events', { key: u.key })).status).toBe(403);
    const still = await call('GET', `/api/webhooks/endpoints/${theirs.id}`, { key: other.adminKey });
    expect(still.body.endpoint.enabled).toBe(true);
  });
});

describe('delivery', () => {
  it('delivers points.credited once per change, signed so a Standard Webhooks library verifies it', async () => {
    const tenant = await newTenant();
    const path = unique('/credited');
    const ep = await addEndpoint(tenant, rx, path, ['points.credited']);
    const u = await basicUser(tenant);
    const first = await award(tenant, u.idp_id, 'purchase', undefined, { 'idempotency-key': 'order-1' });
    expect(first.status).toBe(200);
    // The same change again (a client's retry): no second event.
    expect(
      (await award(tenant, u.idp_id, 'purchase', undefined, { 'idempotency-key': 'order-1' })).body.duplicate,
    ).toBe(true);
    const [got] = await receivedAt(rx, path, 1);
    const event = verified(ep.secret, got);
    expect(event).toMatchObject({
      type: 'points.credited',
      organization_id: tenant.organization_id,
      data: {
        user_id: u.user_id,
        amount: first.body.points_awarded,
        balance_after: first.body.balance,
        reason: 'action',
        entry_id: first.body.entry_id,
      },
    });
    expect(event.id).toMatch(/^evt_/);
    expect(event.data.operation_id).toContain('order-1');
    expect(got.headers['webhook-id']).toBe(event.id);
    expect(() => verified(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, got)).toThrow();
    await new Promise((r) => setTimeout(r, 1500));
    expect(rx.received(path)).toHaveLength(1);
    const log = await call('GET', '/api/events?type=points.credited', { key: tenant.adminKey });
    expect(log.body.events).toEqual([{ ...JSON.parse(got.body), recorded_at: expect.any(String) }]);
    const [d] = await deliveriesOf(tenant, ep.id);
    expect(d).toMatchObject({ event_id: event.id, status: 'succeeded', attempts: [{ status: 200 }] });
  });

  it('emits nothing for a refused change: a 409 limited award, a 403 award by a basic key', async () => {
    const tenant = await newTenant();
    const path = unique('/refused');
    await addEndpoint(tenant, rx, path);
    const u = await basicUser(tenant);
    expect((await award(tenant, u.idp_id, 'daily_login', u.key)).status).toBe(200);
    expect((await award(tenant, u.idp_id, 'daily_login', u.key, { 'idempotency-key': 'again' })).status).toBe(409);
    expect((await award(tenant, u.idp_id, 'purchase', u.key)).status).toBe(403);
    await receivedAt(rx, path, 1);
    await new Promise((r) => setTimeout(r, 2000));
    expect(rx.received(path)).toHaveLength(1);
    expect((await call('GET', '/api/events', { key: tenant.adminKey })).body.events).toHaveLength(1);
  });

  it('retries a receiver that answers 500 three times and delivers on the fourth attempt', async () => {
    const tenant = await newTenant();
    const path = unique('/flaky');
    rx.plan(path, [500, 500, 500]);
    const ep = await addEndpoint(tenant, rx, path);
    const u = await basicUser(tenant);
    await award(tenant, u.idp_id);
    const got = await receivedAt(rx, path, 4, 30_000);
    const ids = got.map((g) => g.headers['webhook-id']);
    expect(new Set(ids).size).toBe(1);
    // Each wait longer than the one before (0.2 s, 0.8 s, 3.2 s here, with jitter).
    expect(got[3].at - got[2].at).toBeGreaterThan(got[2].at - got[1].at);
    const d = await until(
      'the delivery recorded as succeeded',
      async () => (await deliveriesOf(tenant, ep.id))[0],
      (x) => x?.status === 'succeeded',
      10_000,
    );
    expect(d.attempts.map((a: { status: number }) => a.status)).toEqual([500, 500, 500, 200]);
    expect(d.next_attempt_at).toBeNull();
    const failing = await call('GET', `/api/webhooks/endpoints/${ep.id}`, { key: tenant.adminKey });
    expect(failing.body.endpoint.failing_since).toBeNull();
  });

  it('ends at once the deliveries of a deleted endpoint, also one waiting for a later retry', async () => {
    const tenant = await newTenant();
    const path = unique('/deleted');
    rx.plan(
      path,
      Array.from({ length: 10 }, () => 500),
    );
    const ep = await addEndpoint(tenant, rx, path);
    const u = await basicUser(tenant);
    await award(tenant, u.idp_id);
    // Four attempts (0.2, 0.8 and 3.2 s apart): the fifth is 12.8 s away.
    await receivedAt(rx, path, 4, 30_000);
    await until(
      'the fourth attempt recorded',
      async () => (await deliveriesOf(tenant, ep.id))[0],
      (x) => x?.attempts.length === 4 && x.status === 'retrying',
      10_000,
    );
    expect((await call('DELETE', `/api/webhooks/endpoints/${ep.id}`, { key: tenant.adminKey })).status).toBe(200);
    const d = await until(
      'the delivery ended',
      async () => (await deliveriesOf(tenant, ep.id))[0],
      (x) => x?.status === 'failed',
      5_000,
    );
    expect([d.final_reason, d.next_attempt_at, d.attempts.length]).toEqual(['the endpoint was deleted', null, 4]);
    expect(rx.received(path)).toHaveLength(4);
  });

  it('disables an endpoint that answers 410 Gone and says why', async () => {
    const tenant = await newTenant();
    const path = unique('/gone');
    rx.plan(path, [410]);
    const ep = await addEndpoint(tenant, rx, path);
    const u = await basicUser(tenant);
    await award(tenant, u.idp_id);
    await receivedAt(rx, path, 1);
    const e = await until(
      'the endpoint disabled',
      async () => (await call('GET', `/api/webhooks/endpoints/${ep.id}`, { key: tenant.adminKey })).body.endpoint,
      (x) => x.enabled === false,
      10_000,
    );
    expect(e.disabled_reason).toMatch(/410/);
    await award(tenant, u.idp_id, 'purchase');
    await new Promise((r) => setTimeout(r, 1500));
    expect(rx.received(path)).toHaveLength(1);
    // The first delivery's only attempt got the 410; one started meanwhile (another process saw
    // the endpoint enabled for up to a second) ends without an attempt.
    const deliveries = await deliveriesOf(tenant, ep.id);
    expect(deliveries.find((d: { attempts: unknown[] }) => d.attempts.length)).toMatchObject({
      status: 'failed',
      attempts: [{ status: 410 }],
    });
    for (const d of deliveries) expect(d.status).toBe('failed');
    // A ping still tests it, disabled as it is.
    await call('POST', `/api/webhooks/endpoints/${ep.id}/test`, { key: tenant.adminKey });
    await receivedAt(rx, path, 2);
  });

  it('counts a receiver that does not answer within 10 s as a failed attempt, and tries again', async () => {
    const tenant = await newTenant();
    const path = unique('/slow');
    rx.plan(path, ['hang']);
    const ep = await addEndpoint(tenant, rx, path);
    const u = await basicUser(tenant);
    await award(tenant, u.idp_id);
    await receivedAt(rx, path, 2, 30_000);
    const d = await until(
      'the delivery recorded as succeeded',
      async () => (await deliveriesOf(tenant, ep.id))[0],
      (x) => x?.status === 'succeeded',
      10_000,
    );
    expect(d.attempts).toMatchObject([{ status: null, error: 'no answer within 10 s' }, { status: 200 }]);
    expect(d.attempts[0].duration_ms).toBeGreaterThanOrEqual(9_900);
    const metrics = await (
      await fetch(`${inject('edgeUrl')}/metrics`, {
        headers: { authorization: `Bearer ${inject('platformEnv').METRICS_TOKEN}` },
      })
    ).text();
    expect(metrics).toMatch(/webhook_delivery_attempts_total\{outcome="failed_attempt"\} [1-9]/);
    expect(metrics).toMatch(/webhook_delivery_attempts_total\{outcome="succeeded"\} [1-9]/);
  }, 60_000);

  it('signs with both secrets during a rotation, then only with the new one', async () => {
    const tenant = await newTenant();
    const path = unique('/rotated');
    const ep = await addEndpoint(tenant, rx, path);
    const rotated = await call('POST', `/api/webhooks/endpoints/${ep.id}/rotate-secret`, {
      key: tenant.adminKey,
      json: { grace_seconds: 3600 },
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(ep.secret);
    expect(rotated.body.endpoint.previous_secret_expires_at).not.toBeNull();
    const u = await basicUser(tenant);
    await award(tenant, u.idp_id);
    const [during] = await receivedAt(rx, path, 1);
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verified(ep.secret, during).type).toBe('points.credited');
    expect(verified(rotated.body.secret, during).type).toBe('points.credited');
    const again = await call('POST', `/api/webhooks/endpoints/${ep.id}/rotate-secret`, {
      key: tenant.adminKey,
      json: { grace_seconds: 0 },
    });
    await award(tenant, u.idp_id, 'purchase');
    const [, after] = await receivedAt(rx, path, 2);
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verified(again.body.secret, after).type).toBe('points.credited');
    expect(() => verified(rotated.body.secret, after)).toThrow();
    expect(() => verified(ep.secret, after)).toThrow();
  });

  it('sends a ping to the endpoint tested only, and retries a delivery by hand', async () => {
    const tenant = await newTenant();
    const a = unique('/ping-a');
    const b = unique('/ping-b');
    const epA = await addEndpoint(tenant, rx, a);
    await addEndpoint(tenant, rx, b);
    const ping = await call('POST', `/api/webhooks/endpoints/${epA.id}/test`, { key: tenant.adminKey });
    expect(ping.status).toBe(202);
    const [got] = await receivedAt(rx, a, 1);
    expect(verified(epA.secret, got)).toMatchObject({ id: ping.body.event_id, type: 'ping' });
    const [d] = await until(
      'the ping delivered',
      () => deliveriesOf(tenant, epA.id),
      (x) => x[0]?.status === 'succeeded',
      10_000,
    );
    const retried = await call('POST', `/api/webhooks/deliveries/${d.id}/retry`, { key: tenant.adminKey });
    expect(retried.status).toBe(202);
    const twice = await receivedAt(rx, a, 2);
    expect(twice[1].headers['webhook-id']).toBe(ping.body.event_id);
    expect(rx.received(b)).toHaveLength(0);
    const other = await newTenant();
    expect((await call('POST', `/api/webhooks/deliveries/${d.id}/retry`, { key: other.adminKey })).status).toBe(404);
  });

  it('lists deliveries by status and event type, and the event log by type and time', async () => {
    const tenant = await newTenant();
    const path = unique('/lists');
    const ep = await addEndpoint(tenant, rx, path);
    const u = await basicUser(tenant);
    const from = new Date().toISOString();
    for (let i = 0; i < 3; i += 1) await award(tenant, u.idp_id);
    await receivedAt(rx, path, 3);
    const log = await call('GET', `/api/events?type=points.credited&from=${from}&limit=2`, { key: tenant.adminKey });
    expect(log.body.events).toHaveLength(2);
    expect(log.body.has_more).toBe(true);
    expect(log.body.events[0].data.balance_after).toBeLessThan(log.body.events[1].data.balance_after);
    const page2 = await call('GET', `/api/events?type=points.credited&from=${from}&limit=2&page=2`, {
      key: tenant.adminKey,
    });
    expect(page2.body).toMatchObject({ has_more: false });
    expect(page2.body.events).toHaveLength(1);
    expect((await call('GET', `/api/events?to=${from}`, { key: tenant.adminKey })).body.events).toHaveLength(0);
    await until(
      'three delivered',
      () => deliveriesOf(tenant, ep.id),
      (x) => x.filter((d: { status: string }) => d.status === 'succeeded').length === 3,
      10_000,
    );
    const ok = await call('GET', `/api/webhooks/deliveries?status=succeeded&event_type=points.credited`, {
      key: tenant.adminKey,
    });
    expect(ok.body.deliveries).toHaveLength(3);
    expect(
      (await call('GET', `/api/webhooks/deliveries?status=failed`, { key: tenant.adminKey })).body.deliveries,
    ).toHaveLength(0);
  });
});
