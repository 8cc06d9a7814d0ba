/**
 * Outgoing events: awards at a steady 100/s into an organization with one webhook endpoint (a
 * local receiver that answers 200 at once) against the same load into an organization with none;
 * then a burst to see how many events per second the cluster delivers.
 * - change-to-delivery latency: the receiver's clock at arrival minus the event's `created_at`
 *   (the ledger entry's instant), both on this machine;
 * - the cost an event adds to the award: the award's p50/p99 with an endpoint against without.
 */
import http from 'node:http';

import autocannon from 'autocannon';

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};

export async function benchEvents(base: string, adminKey: string, seconds: number): Promise<string[]> {
  const arrivals = new Map<string, number>(); // webhook-id -> latency ms
  let received = 0;
  let first = 0;
  let last = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const now = Date.now();
      received += 1;
      first ||= now;
      last = now;
      const id = String(req.headers['webhook-id']);
      if (!arrivals.has(id)) arrivals.set(id, now - Date.parse(JSON.parse(body).created_at));
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const receiver = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
  const headers = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };
  const send = async (method: string, p: string, body: unknown, key = adminKey) => {
    const res = await fetch(`${base}${p}`, {
      method,
      headers: { ...headers, authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`${p} answered ${res.status}: ${await res.text()}`);
    return res.json() as Promise<any>;
  };
  const tenant = async (name: string) => {
    const org = (await send('POST', '/api/organizations', { name: `${name} ${Date.now()}`, tier: 'enterprise' }))
      .organization.organization_id as string;
    const key = (
      await send('POST', '/generate_api_key', {
        user_id: `${name}-admin`,
        organization_id: org,
        permissions: ['admin'],
      })
    ).api_key as string;
    return { org, key };
  };
  const quiet = await tenant('events-bench-none');
  const hooked = await tenant('events-bench-hooked');
  // A build without outgoing events (the baseline of a before/after comparison) measures the award alone.
  const eventsBuilt =
    (await fetch(`${base}/api/webhooks/endpoints`, { headers: { authorization: `Bearer ${hooked.key}` } })).status !==
    404;
  const endpointId = eventsBuilt
    ? ((await send('POST', '/api/webhooks/endpoints', { url: receiver, events: ['*'] }, hooked.key)).endpoint
        .id as string)
    : '';

  const USERS = 100;
  const awards = async (
    key: string,
    opts: { rate?: number; connections: number; duration?: number; amount?: number },
  ) => {
    let n = 0;
    const r = await autocannon({
      url: base,
      connections: opts.connections,
      ...(opts.rate && { overallRate: opts.rate }),
      ...(opts.amount ? { amount: opts.amount } : { duration: opts.duration }),
      requests: [
        {
          method: 'POST',
          headers: { ...headers, authorization: `Bearer ${key}` },
          body: JSON.stringify({ action_type: 'purchase' }),
          setupRequest: (req: any) => ({ ...req, path: `/loyalty/award-points/ev-${n++ % USERS}` }),
        },
      ],
    });
    return r;
  };
  const lines: string[] = [];
  try {
    // Warm-up: creates the users and their first entries in both organizations.
    await awards(quiet.key, { connections: 10, amount: USERS * 2 });
    await awards(hooked.key, { connections: 10, amount: USERS * 2 });
    if (!eventsBuilt) {
      const alone = await awards(quiet.key, { rate: 100, connections: 10, duration: seconds });
      lines.push(
        `Awards at 100/s on a build without outgoing events: p50 ${alone.latency.p50} ms, p99 ${alone.latency.p99} ms (${alone.requests.average.toFixed(0)}/s)`,
      );
      return lines;
    }
    await waitFor(() => received >= USERS * 2, 60_000);
    arrivals.clear();

    // Below what this machine's Temporal dev server starts per second (about 30 runs): the latency
    // of the path itself, then the same at the 100/s, where the runs queue.
    const light = await awards(hooked.key, { rate: 20, connections: 4, duration: seconds });
    await waitFor(() => arrivals.size >= light.requests.total, 120_000);
    const lightLatency = [...arrivals.values()];
    arrivals.clear();
    const without = await awards(quiet.key, { rate: 100, connections: 10, duration: seconds });
    const before = received;
    const withHook = await awards(hooked.key, { rate: 100, connections: 10, duration: seconds });
    const sent = withHook.requests.total;
    await waitFor(() => received - before >= sent, 120_000);
    const steady = [...arrivals.values()];
    arrivals.clear();

    // A burst: as many awards as 50 connections send in `seconds`, and how fast they arrive.
    received = 0;
    first = 0;
    const burst = await awards(hooked.key, { connections: 50, duration: seconds });
    await waitFor(() => received >= burst.requests.total, 300_000);
    const burstLatency = [...arrivals.values()];
    const deliveredPerSecond = received / Math.max(0.001, (last - first) / 1000);
    const burstReceived = received;
    const burstDuplicates = received - arrivals.size;

    // A backlog drained: events queued while the endpoint is paused, then sent once it is resumed,
    // with nothing else running: how many deliveries a second one endpoint gets (a build without
    // pause has no such phase).
    const DRAIN = 3000;
    let drained = 'not measured (this build cannot pause an endpoint)';
    const pause = await fetch(`${base}/api/webhooks/endpoints/${endpointId}/pause`, {
      method: 'POST',
      headers: { authorization: `Bearer ${hooked.key}` },
    });
    if (pause.status === 200) {
      await awards(hooked.key, { connections: 20, amount: DRAIN });
      const backlog = async () =>
        (
          (await (
            await fetch(`${base}/api/webhooks/endpoints/${endpointId}/stats`, {
              headers: { authorization: `Bearer ${hooked.key}` },
            })
          ).json()) as { stats: { backlog: number } }
        ).stats.backlog;
      const deadline = Date.now() + 120_000;
      while ((await backlog()) < DRAIN && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
      received = 0;
      first = 0;
      const resumed = Date.now();
      await send('POST', `/api/webhooks/endpoints/${endpointId}/resume`, {}, hooked.key);
      await waitFor(() => received >= DRAIN, 300_000);
      drained = `${DRAIN} queued deliveries sent at ${(DRAIN / Math.max(0.001, (last - resumed) / 1000)).toFixed(0)}/s (resume to last arrival; goal ≥ 1,000/s)`;
    }

    lines.push(`Outgoing events (awards into a local receiver, ${USERS} users, ${seconds} s per phase)`);
    lines.push('| phase | awards/s | award p50 ms | award p99 ms | delivery p50 ms | delivery p99 ms |');
    lines.push('|---|---:|---:|---:|---:|---:|');
    lines.push(
      `| 20/s, one endpoint | ${light.requests.average.toFixed(0)} | ${light.latency.p50} | ${light.latency.p99} | ${pct(lightLatency, 50).toFixed(0)} | ${pct(lightLatency, 99).toFixed(0)} |`,
    );
    lines.push(
      `| 100/s, no endpoint | ${without.requests.average.toFixed(0)} | ${without.latency.p50} | ${without.latency.p99} | - | - |`,
    );
    lines.push(
      `| 100/s, one endpoint | ${withHook.requests.average.toFixed(0)} | ${withHook.latency.p50} | ${withHook.latency.p99} | ${pct(steady, 50).toFixed(0)} | ${pct(steady, 99).toFixed(0)} |`,
    );
    lines.push(
      `| burst, 50 connections, one endpoint | ${burst.requests.average.toFixed(0)} | ${burst.latency.p50} | ${burst.latency.p99} | ${pct(burstLatency, 50).toFixed(0)} | ${pct(burstLatency, 99).toFixed(0)} |`,
    );
    lines.push(
      `Award p50 with an endpoint / without: ${(withHook.latency.p50 / without.latency.p50).toFixed(2)}× (goal ≤ 1.10×); change-to-delivery p99 at 100/s: ${pct(steady, 99).toFixed(0)} ms (goal < 1,000 ms); burst: ${burst.requests.total} events delivered at ${deliveredPerSecond.toFixed(0)} events/s (first to last arrival), ${burstReceived} requests received (duplicates: ${burstDuplicates})`,
    );
    lines.push(`Backlog drained by one endpoint: ${drained}`);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
  return lines;
}

async function waitFor(ok: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error('events bench: the deliveries did not all arrive in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}
