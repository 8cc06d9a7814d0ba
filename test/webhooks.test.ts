import http from 'node:http';
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, newTenant, unique, type Tenant } from './helpers/api.ts';

interface Delivery { headers: http.IncomingHttpHeaders; body: string }
const deliveries = new Map<string, Delivery[]>();
const plans = new Map<string, number[]>(); // statuses to answer, in order, per path
let server: http.Server;
let base: string;
let t: Tenant;

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
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

async function waitRun(id: string) {
  for (let i = 0; i < 200; i += 1) {
    const res = await call('GET', `/scheduler/events/${id}/runs`, { key: t.adminKey });
    if (res.body.runs?.length) return res.body.runs[0];
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('no run recorded');
}

const createHook = (path: string, extra: Record<string, unknown> = {}) =>
  call('POST', '/api/scheduler-service/events', { key: t.adminKey, json: { idp_id: unique('hooked'), type_of_event: 'webhook', recurrency: 'daily', start_event: '2031-01-01T10:00:00Z', metadata: { url: `${base}${path}`, ...extra } } });

describe('webhook events', () => {
  it('POSTs execute_scheduled_task with a verifiable signature', async () => {
    const ev = (await createHook('/ok', { order: 7 })).body.event;
    await call('POST', `/api/scheduler-service/events/${ev.id}/execute`, { key: t.adminKey });
    const run = await waitRun(ev.id);
    expect(run).toMatchObject({ outcome: 'success', result: { status: 200 } });
    const [d] = deliveries.get('/ok')!;
    const body = JSON.parse(d.body);
    expect(body).toMatchObject({ action: 'execute_scheduled_task', event_id: ev.id, run_id: run.run_id, organization_id: t.organization_id, user_id: ev.user_id, metadata: { order: 7 } });
    expect(d.headers['x-platform-delivery']).toBe(run.run_id);
    const [, ts, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(d.headers['x-platform-signature']))!;
    const secret = inject('platformEnv').WEBHOOK_SIGNING_SECRET;
    expect(v1).toBe(createHmac('sha256', secret).update(`${ts}.${d.body}`).digest('hex'));
    expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(60);
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

  it('delivers to a host name through the address its check resolved, with the URL\'s Host header', async () => {
    const port = new URL(base).port;
    const ev = (await call('POST', '/api/scheduler-service/events', { key: t.adminKey, json: { idp_id: unique('named'), type_of_event: 'webhook', recurrency: 'daily', start_event: '2031-01-01T10:00:00Z', metadata: { url: `http://localhost:${port}/named` } } })).body.event;
    await call('POST', `/api/scheduler-service/events/${ev.id}/execute`, { key: t.adminKey });
    expect(await waitRun(ev.id)).toMatchObject({ outcome: 'success', result: { status: 200 } });
    expect(deliveries.get('/named')?.map((d) => d.headers.host)).toEqual([`localhost:${port}`]);
  });

  it('refuses an event without a usable URL at creation', async () => {
    for (const url of [undefined, 'not a url', 'ftp://example.com/x']) {
      const res = await call('POST', '/api/scheduler-service/events', { key: t.adminKey, json: { idp_id: 'x', type_of_event: 'webhook', recurrency: 'daily', start_event: '2031-01-01T10:00:00Z', metadata: url ? { url } : {} } });
      expect(res.status, String(url)).toBe(422);
      expect(res.body.detail).toMatch(/^metadata\.url/);
    }
  });
});
