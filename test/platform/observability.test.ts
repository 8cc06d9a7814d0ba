/**
 * Request ids (header, workflow memo and search attribute), the access log, the edge's
 * Prometheus metrics and the Temporal worker's own metrics.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';

import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

import { freePort } from '../../tools/infra.ts';
import { processArgs } from '../../tools/processes.ts';
import { basicUser, call, newTenant, unique } from '../helpers/api.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
let client: Client;
const children: ChildProcess[] = [];

beforeAll(async () => {
  const e = inject('platformEnv');
  client = new Client({
    connection: await Connection.connect({ address: e.TEMPORAL_ADDRESS }),
    namespace: e.TEMPORAL_NAMESPACE,
  });
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await client?.connection.close();
});

/** An edge or worker process as `npm start` runs one, with its stderr (the JSON log) kept. */
async function launch(script: 'edge' | 'worker', env: Record<string, string>, ready: string) {
  const child = spawn(process.execPath, processArgs(script), {
    cwd: root,
    env: { ...process.env, ...inject('platformEnv'), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const out = { text: '' };
  child.stdout!.on('data', (d: Buffer) => (out.text += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out.text += d.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => out.text.includes(ready) && (clearInterval(timer), resolve()), 50);
    child.once('exit', (code) => (clearInterval(timer), reject(new Error(`${script} exited (${code}): ${out.text}`))));
  });
  return {
    child,
    out,
    lines: () =>
      out.text
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, any>),
  };
}

/** Samples of the Prometheus text exposition format: name, labels, value (TYPE/HELP lines checked). */
function parseMetrics(text: string) {
  const types = new Map<string, string>();
  const samples: { name: string; labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const type = /^# TYPE (\w+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) types.set(type[1], type[2]);
    if (line.startsWith('#')) continue;
    const m = /^(\w+)(?:\{(.*)\})? (-?[\d.e+-]+|NaN|\+Inf|-Inf)(?: \d+)?$/.exec(line);
    expect(m, `not an exposition line: ${line}`).not.toBeNull();
    const labels: Record<string, string> = {};
    for (const [, k, v] of m![2]?.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g) ?? []) labels[k] = v;
    samples.push({ name: m![1], labels, value: Number(m![3]) });
  }
  return {
    types,
    samples,
    find: (name: string, want: Record<string, string>) =>
      samples.find((s) => s.name === name && Object.entries(want).every(([k, v]) => s.labels[k] === v)),
  };
}

/** The suite's metrics token (METRICS_TOKEN): /metrics answers nothing without it. */
const metricsToken = () => inject('platformEnv').METRICS_TOKEN;

const scrape = async (base?: string) => {
  const res = await call('GET', '/metrics', { baseUrl: base, key: metricsToken() });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
  return parseMetrics(res.raw.toString('utf8'));
};

describe('request ids', () => {
  it("are generated, or the caller's valid one is echoed, on every answer including errors", async () => {
    const generated = await call('GET', '/health');
    expect(generated.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{24}$/);
    expect((await call('GET', '/health')).headers.get('x-request-id')).not.toBe(generated.headers.get('x-request-id'));
    const mine = `trace-${unique('x')}.1:2_Z`;
    for (const [method, path, status] of [
      ['GET', '/health', 200],
      ['GET', '/no/such/route', 404],
      ['DELETE', '/health', 405],
      ['GET', '/api/feedback/stats', 401],
    ] as const) {
      const res = await call(method, path, { headers: { 'x-request-id': mine } });
      expect(res.status).toBe(status);
      expect(res.headers.get('x-request-id'), `${method} ${path}`).toBe(mine);
    }
    for (const bad of ['has space', 'a'.repeat(129), '<script>', 'semi;colon', '"quoted"']) {
      const res = await call('GET', '/health', { headers: { 'x-request-id': bad } });
      expect(res.headers.get('x-request-id'), bad).toMatch(/^req_[0-9a-f]{24}$/);
    }
  });

  it('go into the workflow a request starts: memo request_id and search attribute RequestId', async () => {
    const t = await newTenant();
    const user = await basicUser(t);
    const request_id = unique('req-feedback');
    const res = await call('POST', '/api/feedback/submit', {
      key: user.key,
      headers: { 'x-request-id': request_id },
      json: { user_id: user.user_id, feedback_type: 'praise', rating: 5, comment: 'Great app' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe(request_id);
    const description = await client.workflow.getHandle(`feedback-analysis:${res.body.feedback_id}`).describe();
    expect(await description.memo).toMatchObject({ request_id });
    expect(description.searchAttributes).toMatchObject({
      RequestId: [request_id],
      OrganizationId: [t.organization_id],
      UserId: [user.user_id],
    });
    // What an operator types in the Temporal UI's search box.
    const found: string[] = [];
    for (let i = 0; i < 50 && !found.length; i += 1) {
      for await (const w of client.workflow.list({ query: `RequestId = "${request_id}"` })) found.push(w.workflowId);
      if (!found.length) await new Promise((r) => setTimeout(r, 200));
    }
    expect(found).toEqual([`feedback-analysis:${res.body.feedback_id}`]);
  });
});

describe('edge metrics', () => {
  it('/metrics counts requests by route pattern, method and status, with latency histograms, workflow starts and database commands', async () => {
    const t = await newTenant();
    const user = await basicUser(t);
    const route = '/api/billing/usage/:user_id';
    const first = await scrape();
    const before = first.find('http_requests_total', { method: 'GET', route, status: '200' })?.value ?? 0;
    const inserts = { collection: 'feedback', command: 'insert', ok: 'true' };
    const insertsBefore = first.find('db_command_duration_seconds_count', inserts)?.value ?? 0;
    expect((await call('GET', `/api/billing/usage/${user.user_id}`, { key: user.key })).status).toBe(200);
    expect((await call('GET', '/no/such/route')).status).toBe(404);
    const fb = await call('POST', '/api/feedback/submit', {
      key: user.key,
      json: { user_id: user.user_id, feedback_type: 'bug', rating: 2, comment: 'It crashed' },
    });
    expect(fb.status).toBe(200);

    const m = await scrape();
    expect(m.types.get('http_requests_total')).toBe('counter');
    expect(m.types.get('http_request_duration_seconds')).toBe('histogram');
    expect(m.find('http_requests_total', { method: 'GET', route, status: '200' })!.value).toBe(before + 1);
    expect(
      m.find('http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })!.value,
    ).toBeGreaterThanOrEqual(1);
    // Patterns, never raw paths: no label holds a user's id.
    expect(m.samples.some((s) => Object.values(s.labels).some((v) => v.includes(user.user_id)))).toBe(false);
    const labels = { method: 'GET', route, status: '200' };
    const count = m.find('http_request_duration_seconds_count', labels)!.value;
    expect(count).toBe(before + 1);
    expect(m.find('http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })!.value).toBe(count);
    expect(m.find('http_request_duration_seconds_sum', labels)!.value).toBeGreaterThan(0);
    const buckets = m.samples.filter(
      (s) =>
        s.name === 'http_request_duration_seconds_bucket' &&
        s.labels.route === route &&
        s.labels.method === 'GET' &&
        s.labels.status === '200',
    );
    expect(buckets.length).toBeGreaterThan(5);
    expect(buckets.map((b) => b.value)).toEqual([...buckets.map((b) => b.value)].sort((a, b) => a - b)); // cumulative
    expect(m.types.get('workflow_starts_total')).toBe('counter');
    expect(
      m.find('workflow_starts_total', { workflow_type: 'feedbackAnalysisWorkflow', outcome: 'started' })!.value,
    ).toBeGreaterThanOrEqual(1);
    expect(m.types.get('workflow_failures_total')).toBe('counter');
    // The database commands the edge sent: the feedback it stored is one insert more.
    expect(m.types.get('db_command_duration_seconds')).toBe('histogram');
    expect(m.find('db_command_duration_seconds_count', inserts)!.value).toBeGreaterThanOrEqual(insertsBefore + 1);
    expect(m.find('db_command_duration_seconds_sum', inserts)!.value).toBeGreaterThan(0);
  });
});

describe('who may read /metrics', () => {
  it('only the bearer of METRICS_TOKEN: 401 without it, with another token or with an API key', async () => {
    const t = await newTenant();
    for (const [what, headers] of [
      ['no Authorization', {}],
      ['another token', { authorization: `Bearer ${metricsToken()}x` }],
      ['a prefix of the token', { authorization: `Bearer ${metricsToken().slice(0, -1)}` }],
      ['an admin API key', { authorization: `Bearer ${t.adminKey}` }],
      ['the token as X-API-Key', { 'x-api-key': metricsToken() }],
      ['the token without the Bearer scheme', { authorization: metricsToken() }],
    ] as const) {
      const res = await call('GET', '/metrics', { headers: { ...headers } });
      expect(res.status, what).toBe(401);
      expect(res.headers.get('www-authenticate'), what).toBe('Bearer realm="metrics"');
      expect(res.body, what).toEqual({ detail: 'Metrics need Authorization: Bearer <METRICS_TOKEN>' });
      expect(res.raw.toString(), what).not.toMatch(/http_requests_total|webhook_delivery_attempts_total/);
    }
    const ok = await call('GET', '/metrics', { key: metricsToken() });
    expect(ok.status).toBe(200);
    expect(ok.raw.toString()).toMatch(/^# HELP /m);
  });
});

describe('an extra edge and worker (their logs and metrics)', () => {
  it('writes one JSON access line per request: method, route pattern, status, ms, organization, request id; never the key', async () => {
    const port = await freePort();
    // No METRICS_TOKEN on this edge: it serves no metrics at all, whoever asks.
    const edge = await launch(
      'edge',
      { PORT: String(port), METRICS_TOKEN: '', LOG_LEVEL: 'info' },
      'edge: listening on',
    );
    const base = `http://127.0.0.1:${port}`;
    const t = await newTenant();
    const user = await basicUser(t);
    const request_id = unique('req-log');
    const res = await fetch(`${base}/api/billing/usage/${encodeURIComponent(user.user_id)}?period=2026-01`, {
      headers: { authorization: `Bearer ${user.key}`, 'x-request-id': request_id },
    });
    expect(res.status).toBe(200);
    const missing = await fetch(`${base}/nothing/here?api_key=${user.key}`, {
      headers: { 'x-request-id': `${request_id}-404` },
    });
    expect(missing.status).toBe(404);
    expect((await fetch(`${base}/metrics`)).status).toBe(404); // no METRICS_TOKEN: not served
    expect((await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${metricsToken()}` } })).status).toBe(
      404,
    );
    await new Promise((r) => setTimeout(r, 300));

    const lines = edge.lines();
    expect(lines.length).toBeGreaterThan(0);
    const access = lines.filter((l) => l.request_id === request_id);
    expect(access).toHaveLength(1);
    expect(access[0]).toMatchObject({
      level: 'info',
      process: 'edge',
      msg: 'edge: request',
      method: 'GET',
      route: '/api/billing/usage/:user_id',
      status: 200,
      organization_id: t.organization_id,
    });
    expect(typeof access[0].ms).toBe('number');
    expect(Date.parse(access[0].time)).toBeGreaterThan(Date.now() - 60_000);
    expect(lines.find((l) => l.request_id === `${request_id}-404`)).toMatchObject({
      route: 'unmatched',
      status: 404,
      organization_id: null,
    });
    expect(edge.out.text).not.toContain(user.key);
    expect(edge.out.text).not.toContain(user.user_id); // the pattern, not the URL
  }, 90_000); // a process start (tsx) on a busy 2-core machine

  it("serves the Temporal worker's own metrics on WORKER_METRICS_PORT, the next free port when it is taken", async () => {
    const listen = (port: number) =>
      new Promise<net.Server | undefined>((resolve) => {
        const server = net
          .createServer()
          .once('error', () => resolve(undefined))
          .listen(port, '127.0.0.1', () => resolve(server));
      });
    // A port that is free, taken here, with the next one free for the worker.
    let basePort = 0;
    let taken: net.Server | undefined;
    while (!taken) {
      basePort = await freePort();
      const next = await listen(basePort + 1);
      if (!next) continue;
      await new Promise((r) => next.close(r));
      taken = await listen(basePort);
    }
    try {
      const queue = unique('metrics-worker');
      const worker = await launch(
        'worker',
        { TEMPORAL_TASK_QUEUE: queue, WORKER_METRICS_PORT: String(basePort), LOG_LEVEL: 'info' },
        'worker: polling task queue',
      );
      const started = worker.lines().find((l) => typeof l.metrics === 'string');
      expect(started?.metrics).toBe(`http://127.0.0.1:${basePort + 1}/metrics`);
      let m = await scrape(`http://127.0.0.1:${basePort + 1}`);
      for (let i = 0; i < 50 && !m.samples.some((s) => s.labels.task_queue === queue); i += 1) {
        await new Promise((r) => setTimeout(r, 200));
        m = await scrape(`http://127.0.0.1:${basePort + 1}`);
      }
      const ours = m.samples.filter((s) => s.name.startsWith('temporal_') && s.labels.task_queue === queue);
      expect(ours.length).toBeGreaterThan(0);
      worker.child.kill('SIGTERM');
    } finally {
      taken.close();
    }
  }, 120_000); // a worker start bundles the workflows
});
