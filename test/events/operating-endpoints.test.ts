/**
 * What an organization's admins do with an endpoint's queue, over HTTP with a local receiver:
 * pause (events queue, nothing is sent), resume (what queued is sent), replay since a time (the
 * same webhook-id again), the queue's stats, and the per-endpoint metrics.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

import { basicUser, call, newTenant, type Tenant, unique, until } from '../helpers/api.ts';
import { addEndpoint, receivedAt, type Receiver, startReceiver } from '../helpers/receiver.ts';

let rx: Receiver;

beforeAll(async () => {
  rx = await startReceiver();
});
afterAll(() => rx.close());

const award = (tenant: Tenant, idp: string) =>
  call('POST', `/loyalty/award-points/${idp}`, { key: tenant.adminKey, json: { action_type: 'purchase' } });
const op = (tenant: Tenant, id: string, what: 'pause' | 'resume') =>
  call('POST', `/api/webhooks/endpoints/${id}/${what}`, { key: tenant.adminKey });
async function stats(tenant: Tenant, id: string) {
  const res = await call('GET', `/api/webhooks/endpoints/${id}/stats`, { key: tenant.adminKey });
  if (res.status !== 200) throw new Error(`stats: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.stats;
}
const deliveriesOf = async (tenant: Tenant, endpoint_id: string) =>
  (await call('GET', `/api/webhooks/deliveries?endpoint_id=${endpoint_id}&limit=100`, { key: tenant.adminKey })).body
    .deliveries;
const idsOf = (got: { headers: Record<string, unknown> }[]) => got.map((g) => String(g.headers['webhook-id'])).sort();

describe('pausing an endpoint', () => {
  it('queues its events while paused and sends them all once resumed; the stats show the backlog', async () => {
    const tenant = await newTenant();
    const path = unique('/paused');
    const ep = await addEndpoint(tenant, rx, path);
    const u = await basicUser(tenant);
    const paused = await op(tenant, ep.id, 'pause');
    expect(paused.status).toBe(200);
    expect(paused.body.endpoint.paused_at).toEqual(expect.any(String));
    // Pausing again changes nothing (the same instant).
    expect((await op(tenant, ep.id, 'pause')).body.endpoint.paused_at).toBe(paused.body.endpoint.paused_at);
    for (let i = 0; i < 3; i += 1) expect((await award(tenant, u.idp_id)).status).toBe(200);
    // A ping waits too.
    expect((await call('POST', `/api/webhooks/endpoints/${ep.id}/test`, { key: tenant.adminKey })).status).toBe(202);
    const waiting = await until(
      'the four deliveries queued',
      () => stats(tenant, ep.id),
      (s) => s?.backlog === 4,
      10_000,
    );
    expect(waiting).toMatchObject({ state: 'paused', backlog: 4, oldest_undelivered_at: expect.any(String) });
    expect(waiting.oldest_undelivered_age_seconds).toBeGreaterThanOrEqual(0);
    await new Promise((r) => setTimeout(r, 1500));
    expect(rx.received(path)).toHaveLength(0);
    const listed = await deliveriesOf(tenant, ep.id);
    expect(listed.map((d: { status: string; attempts: unknown[] }) => [d.status, d.attempts.length])).toEqual(
      Array.from({ length: 4 }, () => ['pending', 0]),
    );

    const resumed = await op(tenant, ep.id, 'resume');
    expect(resumed.status).toBe(200);
    expect(resumed.body.endpoint.paused_at).toBeNull();
    const got = await receivedAt(rx, path, 4, 15_000);
    expect(new Set(idsOf(got)).size).toBe(4);
    const after = await until(
      'the stats counting the four successes',
      () => stats(tenant, ep.id),
      (s) => s?.last_24h.succeeded === 4,
      10_000,
    );
    expect(after).toMatchObject({
      state: 'active',
      backlog: 0,
      oldest_undelivered_at: null,
      last_24h: { attempts: 4, succeeded: 4, failed: 0, success_rate: 1 },
      attempts_total: { succeeded: 4, failed: 0 },
      last_success_at: expect.any(String),
      last_error: null,
    });
    // Resuming an endpoint that is not paused changes nothing.
    expect((await op(tenant, ep.id, 'resume')).body.endpoint.paused_at).toBeNull();
  });

  it('holds a retry by hand while paused; events recorded during a pause are not lost when it is resumed', async () => {
    const tenant = await newTenant();
    const path = unique('/paused-retry');
    const ep = await addEndpoint(tenant, rx, path);
    const u = await basicUser(tenant);
    await award(tenant, u.idp_id);
    await receivedAt(rx, path, 1);
    const [d] = await until(
      'the delivery recorded',
      () => deliveriesOf(tenant, ep.id),
      (x) => x?.[0]?.status === 'succeeded',
      10_000,
    );
    await op(tenant, ep.id, 'pause');
    const retried = await call('POST', `/api/webhooks/deliveries/${d.id}/retry`, { key: tenant.adminKey });
    expect(retried.status).toBe(202);
    await award(tenant, u.idp_id);
    await new Promise((r) => setTimeout(r, 2000));
    expect(rx.received(path)).toHaveLength(1);
    await op(tenant, ep.id, 'resume');
    const got = await receivedAt(rx, path, 3, 15_000);
    expect(got.filter((g) => g.headers['webhook-id'] === d.event_id)).toHaveLength(2);
  });
});

describe('the stats of a failing endpoint', () => {
  it('name the last error and the success rate', async () => {
    const tenant = await newTenant();
    const path = unique('/failing');
    rx.plan(path, [500, 503]);
    const ep = await addEndpoint(tenant, rx, path);
    const u = await basicUser(tenant);
    await award(tenant, u.idp_id);
    await receivedAt(rx, path, 3, 15_000);
    const s = await until(
      'the stats counting three attempts',
      () => stats(tenant, ep.id),
      (x) => x?.last_24h.attempts === 3,
      10_000,
    );
    const [d] = await deliveriesOf(tenant, ep.id);
    expect(s).toMatchObject({
      backlog: 0,
      last_24h: { attempts: 3, succeeded: 1, failed: 2, success_rate: 0.3333 },
      attempts_total: { succeeded: 1, failed: 2 },
      last_error: { status: 503, error: null, delivery_id: d.id, at: expect.any(String) },
    });
  });
});

describe('replaying an endpoint', () => {
  it('sends again every ended delivery since a time with the same webhook-id, or only the failed ones', async () => {
    const tenant = await newTenant();
    const path = unique('/replay');
    const ep = await addEndpoint(tenant, rx, path);
    const u = await basicUser(tenant);
    const before = new Date(Date.now() - 1000).toISOString();
    await award(tenant, u.idp_id);
    await award(tenant, u.idp_id);
    const first = idsOf(await receivedAt(rx, path, 2));
    await until(
      'both recorded',
      () => deliveriesOf(tenant, ep.id),
      (x) => x?.length === 2 && x.every((d: { status: string }) => d.status === 'succeeded'),
      10_000,
    );
    // Nothing failed: a failed-only replay queues nothing.
    const none = await call('POST', `/api/webhooks/endpoints/${ep.id}/replay`, {
      key: tenant.adminKey,
      json: { since: before, failed_only: true },
    });
    expect(none.status).toBe(202);
    expect(none.body).toEqual({ success: true, queued: 0, next_since: null });
    // A window that ends before them: nothing.
    const earlier = await call('POST', `/api/webhooks/endpoints/${ep.id}/replay`, {
      key: tenant.adminKey,
      json: { since: new Date(Date.now() - 3_600_000).toISOString(), until: before },
    });
    expect(earlier.body.queued).toBe(0);
    const replay = await call('POST', `/api/webhooks/endpoints/${ep.id}/replay`, {
      key: tenant.adminKey,
      json: { since: before },
    });
    expect(replay.body).toEqual({ success: true, queued: 2, next_since: null });
    const got = await receivedAt(rx, path, 4, 15_000);
    expect(idsOf(got.slice(2))).toEqual(first);
    const ended = await until(
      'both recorded again',
      () => deliveriesOf(tenant, ep.id),
      (x) =>
        x?.every((d: { status: string; attempts: unknown[] }) => d.status === 'succeeded' && d.attempts.length === 2),
      10_000,
    );
    expect(ended).toHaveLength(2);
  });

  it('refuses a range that ends before it starts or a bad date with 422, and queues nothing', async () => {
    const tenant = await newTenant();
    const ep = await addEndpoint(tenant, rx, unique('/replay-bad'));
    for (const json of [
      { since: '2026-01-02T00:00:00Z', until: '2026-01-01T00:00:00Z' },
      { since: 'yesterday' },
      {},
      { since: '2026-01-01', failed_only: 'yes' },
    ]) {
      const res = await call('POST', `/api/webhooks/endpoints/${ep.id}/replay`, { key: tenant.adminKey, json });
      expect(res.status, JSON.stringify(json)).toBe(422);
    }
  });
});

describe('who may operate an endpoint', () => {
  it("another organization's admin gets 404, a basic key 403, and the endpoint is unchanged", async () => {
    const owner = await newTenant();
    const other = await newTenant();
    const ep = await addEndpoint(owner, rx, unique('/guarded'));
    const u = await basicUser(owner);
    for (const [method, path, json] of [
      ['POST', `/api/webhooks/endpoints/${ep.id}/pause`, undefined],
      ['POST', `/api/webhooks/endpoints/${ep.id}/resume`, undefined],
      ['POST', `/api/webhooks/endpoints/${ep.id}/replay`, { since: '2026-01-01' }],
      ['GET', `/api/webhooks/endpoints/${ep.id}/stats`, undefined],
    ] as const) {
      expect((await call(method, path, { key: other.adminKey, json })).status, `${method} ${path}`).toBe(404);
      expect((await call(method, path, { key: u.key, json })).status, `${method} ${path}`).toBe(403);
    }
    const still = await call('GET', `/api/webhooks/endpoints/${ep.id}`, { key: owner.adminKey });
    expect(still.body.endpoint.paused_at).toBeNull();
  });
});

describe('per-endpoint metrics', () => {
  it('show each endpoint backlog, oldest undelivered age, paused state and attempts', async () => {
    const tenant = await newTenant();
    const ep = await addEndpoint(tenant, rx, unique('/metered'));
    const u = await basicUser(tenant);
    await op(tenant, ep.id, 'pause');
    await award(tenant, u.idp_id);
    await until(
      'the delivery queued',
      () => stats(tenant, ep.id),
      (s) => s?.backlog === 1,
      10_000,
    );
    const scrape = await call('GET', '/metrics', { key: inject('platformEnv').METRICS_TOKEN });
    const text = scrape.raw.toString('utf8');
    const labels = `organization_id="${tenant.organization_id}",endpoint_id="${ep.id}"`;
    expect(text).toContain(`webhook_endpoint_backlog{${labels}} 1`);
    expect(text).toContain(`webhook_endpoint_paused{${labels}} 1`);
    expect(text).toMatch(new RegExp(`webhook_endpoint_oldest_undelivered_seconds\\{${labels}\\} [0-9.]+`));
    await op(tenant, ep.id, 'resume');
    await until(
      'the delivery counted',
      () => stats(tenant, ep.id),
      (s) => s?.attempts_total.succeeded === 1,
      15_000,
    );
    const again = (await call('GET', '/metrics', { key: inject('platformEnv').METRICS_TOKEN })).raw.toString('utf8');
    expect(again).toContain(`webhook_endpoint_attempts{${labels},outcome="succeeded"} 1`);
    expect(again).toContain(`webhook_endpoint_paused{${labels}} 0`);
    expect(again).toContain(`webhook_endpoint_backlog{${labels}} 0`);
  });
});
