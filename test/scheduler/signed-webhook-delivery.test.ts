import { createHmac } from 'node:crypto';
import http from 'node:http';

import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

import { taskFor } from '../../activities/scheduler/registry.ts';
import { basicUser, call, newTenant, type Tenant, unique } from '../helpers/api.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();

interface Delivery {
  headers: http.IncomingHttpHeaders;
  body: string;
}
const deliveries = new Map<string, Delivery[]>();
const plans = new Map<string, number[]>(); // statuses to answer, in order, per path
let server: http.Server;
let base: string;
let t: Tenant;
/** t's signing secret of scheduled webhooks */
let secret: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const list = deliveries.get(req.url!) ?? [];
      list.push({ headers: req.headers, body });
      deliveries.set(req.url!, list);
      res.statusCode = plans.get(req.url!)?.shift() ?? 200;
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  t = await newTenant();
  secret = await rotate(t);
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

async function waitRun(id: string, tenant = t) {
  for (let i = 0; i < 200; i += 1) {
    const res = await call('GET', `/scheduler/events/${id}/runs`, { key: tenant.adminKey });
    if (res.body.runs?.length) return res.body.runs[0];
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('no run recorded');
}

const createHook = (path: string, extra: Record<string, unknown> = {}, tenant = t) =>
  call('POST', '/api/scheduler-service/events', {
    key: tenant.adminKey,
    json: {
      idp_id: unique('hooked'),
      type_of_event: 'webhook',
      recurrency: 'daily',
      start_event: '2031-01-01T10:00:00Z',
      metadata: { url: `${base}${path}`, ...extra },
    },
  });

/** Creates or rotates the tenant's signing secret of scheduled webhooks: the new secret. */
async function rotate(tenant: Tenant, grace_seconds?: number): Promise<string> {
  const res = await call('POST', '/api/scheduler-service/webhook-secret/rotate', {
    key: tenant.adminKey,
    json: grace_seconds === undefined ? {} : { grace_seconds },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  return res.body.secret;
}

/** The `v1=` signatures of an `x-platform-signature` header that `secret` makes (Stripe's check: any may match). */
function verifies(header: unknown, body: string, secret: string): boolean {
  const parts = String(header).split(',');
  const ts = /^t=(\d+)$/.exec(parts[0])?.[1];
  if (!ts) return false;
  const want = createHmac('sha256', secret).update(`${ts}.${body}`).digest('hex');
  return parts.slice(1).some((p) => p === `v1=${want}`);
}

/** Runs a new webhook event of the tenant now: its delivery. */
async function deliveredOnce(tenant: Tenant, path: string): Promise<Delivery> {
  const ev = (await createHook(path, {}, tenant)).body.event;
  await call('POST', `/api/scheduler-service/events/${ev.id}/execute`, { key: tenant.adminKey });
  const run = await waitRun(ev.id, tenant);
  expect(run, JSON.stringify(run)).toMatchObject({ outcome: 'success' });
  return deliveries.get(path)!.at(-1)!;
}

describe('webhook events', () => {
  it("POSTs execute_scheduled_task signed with the organization's own secret, without idp_id", async () => {
    const ev = (await createHook('/ok', { order: 7 })).body.event;
    await call('POST', `/api/scheduler-service/events/${ev.id}/execute`, { key: t.adminKey });
    const run = await waitRun(ev.id);
    expect(run).toMatchObject({ outcome: 'success', result: { status: 200 } });
    const [d] = deliveries.get('/ok')!;
    const body = JSON.parse(d.body);
    expect(body).toEqual({
      action: 'execute_scheduled_task',
      event_id: ev.id,
      run_id: run.run_id,
      organization_id: t.organization_id,
      user_id: ev.user_id,
      metadata: { order: 7 },
    });
    expect(d.headers['x-platform-delivery']).toBe(run.run_id);
    const [, ts] = /^t=(\d+),v1=[0-9a-f]{64}$/.exec(String(d.headers['x-platform-signature']))!;
    expect(verifies(d.headers['x-platform-signature'], d.body, secret)).toBe(true);
    expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(60);
    // The platform-wide secret the suite still sets (WEBHOOK_SIGNING_SECRET) signs nothing any more.
    const global = inject('platformEnv').WEBHOOK_SIGNING_SECRET;
    expect(global).toBeTruthy();
    expect(verifies(d.headers['x-platform-signature'], d.body, global)).toBe(false);
  });

  it("signs each organization's deliveries with its own secret: another's does not verify them", async () => {
    const other = await newTenant();
    const otherSecret = await rotate(other);
    const mine = await deliveredOnce(t, unique('/mine'));
    const theirs = await deliveredOnce(other, unique('/theirs'));
    expect(verifies(mine.headers['x-platform-signature'], mine.body, secret)).toBe(true);
    expect(verifies(mine.headers['x-platform-signature'], mine.body, otherSecret)).toBe(false);
    expect(verifies(theirs.headers['x-platform-signature'], theirs.body, otherSecret)).toBe(true);
    expect(verifies(theirs.headers['x-platform-signature'], theirs.body, secret)).toBe(false);
    expect(JSON.parse(theirs.body).organization_id).toBe(other.organization_id);
  });

  it('rotates: both secrets sign during the grace, then a rotation without grace signs with the new one only', async () => {
    const tenant = await newTenant();
    const first = await rotate(tenant);
    const status = await call('GET', '/api/scheduler-service/webhook-secret', { key: tenant.adminKey });
    expect(status.body).toMatchObject({
      success: true,
      signing_secret: { organization_id: tenant.organization_id, previous_secret_expires_at: null },
    });
    const second = await rotate(tenant, 3600);
    const during = await call('GET', '/api/scheduler-service/webhook-secret', { key: tenant.adminKey });
    expect(Date.parse(during.body.signing_secret.previous_secret_expires_at) - Date.now()).toBeGreaterThan(3500_000);
    const d1 = await deliveredOnce(tenant, unique('/grace'));
    expect(String(d1.headers['x-platform-signature'])).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(verifies(d1.headers['x-platform-signature'], d1.body, second)).toBe(true);
    expect(verifies(d1.headers['x-platform-signature'], d1.body, first)).toBe(true);
    const third = await rotate(tenant, 0);
    const d2 = await deliveredOnce(tenant, unique('/after'));
    expect(String(d2.headers['x-platform-signature'])).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifies(d2.headers['x-platform-signature'], d2.body, third)).toBe(true);
    for (const old of [first, second]) expect(verifies(d2.headers['x-platform-signature'], d2.body, old)).toBe(false);
    // The secret is shown only by the rotation; an admin's read names dates only.
    const after = await call('GET', '/api/scheduler-service/webhook-secret', { key: tenant.adminKey });
    expect(JSON.stringify(after.body)).not.toMatch(/whsec_/);
    expect(after.body.signing_secret.previous_secret_expires_at).toBeNull();
  });

  it('refuses a webhook event of an organization without its secret, at creation (422) and at a run', async () => {
    const tenant = await newTenant();
    expect((await call('GET', '/api/scheduler-service/webhook-secret', { key: tenant.adminKey })).body).toEqual({
      success: true,
      signing_secret: null,
    });
    const res = await createHook('/unsigned', {}, tenant);
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(/organization's own secret.*POST \/api\/scheduler-service\/webhook-secret\/rotate/);
    // An event saved before the secrets existed: its run fails at once, naming the same remedy.
    const run = taskFor('webhook').run({
      action: 'execute_scheduled_task',
      event_id: 'evt_old',
      run_id: 'event-run:evt_old-1',
      user_id: 'usr_x',
      idp_id: 'x',
      organization_id: tenant.organization_id,
      metadata: { url: `${base}/unsigned` },
      actor_level: 2,
    });
    await expect(run).rejects.toMatchObject({
      status: 422,
      message: expect.stringMatching(/this organization has none/),
    });
    expect(deliveries.get('/unsigned')).toBeUndefined();
    // Only the organization's admins read or rotate it: a basic key is 403, and so is another organization's admin naming it.
    const user = await basicUser(tenant);
    expect((await call('GET', '/api/scheduler-service/webhook-secret', { key: user.key })).status).toBe(403);
    expect(
      (await call('POST', '/api/scheduler-service/webhook-secret/rotate', { key: user.key, json: {} })).status,
    ).toBe(403);
    expect(
      (
        await call('POST', `/api/scheduler-service/webhook-secret/rotate?organization_id=${tenant.organization_id}`, {
          key: t.adminKey,
          json: {},
        })
      ).status,
    ).toBe(403);
    expect(
      (await call('GET', '/api/scheduler-service/webhook-secret', { key: tenant.adminKey })).body.signing_secret,
    ).toBeNull();
    await rotate(tenant);
    expect((await createHook('/unsigned', {}, tenant)).status).toBe(200);
  });

  it('checks the rotation body: grace_seconds from 0 to 7 days', async () => {
    for (const grace_seconds of [-1, 604_801, 1.5, '60']) {
      const res = await call('POST', '/api/scheduler-service/webhook-secret/rotate', {
        key: t.adminKey,
        json: { grace_seconds },
      });
      expect(res.status, String(grace_seconds)).toBe(422);
      expect(res.body.detail).toMatch(/grace_seconds/);
    }
  });

  it('retries a failing receiver with backoff, delivering the same run id', async () => {
    plans.set('/flaky', [503]);
    const ev = (await createHook('/flaky')).body.event;
    await call('POST', `/api/scheduler-service/events/${ev.id}/execute`, { key: t.adminKey });
    const run = await waitRun(ev.id);
    expect(run.outcome).toBe('success');
    const list = deliveries.get('/flaky')!;
    expect(list).toHaveLength(2);
    expect(new Set(list.map((d) => d.headers['x-platform-delivery'])).size).toBe(1);
  });

  it('records a refusal by the receiver as a failed run without retrying', async () => {
    plans.set('/gone', [410]);
    const ev = (await createHook('/gone')).body.event;
    await call('POST', `/api/scheduler-service/events/${ev.id}/execute`, { key: t.adminKey });
    const run = await waitRun(ev.id);
    expect(run).toMatchObject({ outcome: 'failed', error: 'webhook receiver answered 410' });
    expect(deliveries.get('/gone')).toHaveLength(1);
  });

  it("delivers to a host name through the address its check resolved, with the URL's Host header", async () => {
    const port = new URL(base).port;
    const ev = (
      await call('POST', '/api/scheduler-service/events', {
        key: t.adminKey,
        json: {
          idp_id: unique('named'),
          type_of_event: 'webhook',
          recurrency: 'daily',
          start_event: '2031-01-01T10:00:00Z',
          metadata: { url: `http://localhost:${port}/named` },
        },
      })
    ).body.event;
    await call('POST', `/api/scheduler-service/events/${ev.id}/execute`, { key: t.adminKey });
    expect(await waitRun(ev.id)).toMatchObject({ outcome: 'success', result: { status: 200 } });
    expect(deliveries.get('/named')?.map((d) => d.headers.host)).toEqual([`localhost:${port}`]);
  });

  it('refuses an event without a usable URL at creation', async () => {
    for (const url of [undefined, 'not a url', 'ftp://example.com/x']) {
      const res = await call('POST', '/api/scheduler-service/events', {
        key: t.adminKey,
        json: {
          idp_id: 'x',
          type_of_event: 'webhook',
          recurrency: 'daily',
          start_event: '2031-01-01T10:00:00Z',
          metadata: url ? { url } : {},
        },
      });
      expect(res.status, String(url)).toBe(422);
      expect(res.body.detail).toMatch(/^metadata\.url/);
    }
  });
});
