/**
 * A local webhook receiver for the events tests: records every request per path and answers the
 * statuses planned for that path in order (200 once the plan is spent). Verification uses the
 * Standard Webhooks library, as a receiver would.
 */
import http from 'node:http';

import { Webhook } from 'standardwebhooks';

import { call, type Tenant, until } from './api.ts';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Receiver {
  url(path: string): string;
  received(path: string): Received[];
  /** statuses (or 'hang': never answer) the next requests to `path` get, in order */
  plan(path: string, answers: (number | 'hang')[]): void;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const got = new Map<string, Received[]>();
  const plans = new Map<string, (number | 'hang')[]>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const path = req.url!;
      const list = got.get(path) ?? [];
      list.push({ headers: req.headers, body, at: Date.now() });
      got.set(path, list);
      const answer = plans.get(path)?.shift() ?? 200;
      if (answer === 'hang') return;
      res.statusCode = answer;
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url: (path) => `${base}${path}`,
    received: (path) => got.get(path) ?? [],
    plan: (path, answers) => void plans.set(path, [...answers]),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** The payload if one of the request's signatures verifies with `secret` (throws otherwise). */
export function verified(
  secret: string,
  r: Received,
): { id: string; type: string; created_at: string; organization_id: string; data: Record<string, any> } {
  const headers = {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  };
  return new Webhook(secret).verify(r.body, headers) as any;
}

/** An endpoint of the tenant's organization at `path` of the receiver; answers its id and secret. */
export async function addEndpoint(
  t: Tenant,
  rx: Receiver,
  path: string,
  events: string[] = ['*'],
): Promise<{ id: string; secret: string }> {
  const res = await call('POST', '/api/webhooks/endpoints', { key: t.adminKey, json: { url: rx.url(path), events } });
  if (res.status !== 201) throw new Error(`endpoint not created: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.endpoint.id, secret: res.body.secret };
}

/** Waits until `path` received `n` requests (at most `ms`), answers them parsed. */
export async function receivedAt(rx: Receiver, path: string, n: number, ms = 20_000) {
  await until(
    `${n} deliveries at ${path}`,
    async () => rx.received(path).length,
    (k) => k >= n,
    ms,
    100,
  );
  return rx.received(path);
}
