/**
 * `npm run bench`: throughput and latency of the edge's hot read paths against an h3
 * hello-world on the same machine, and the Temporal workflow overhead of process_image against
 * calling the image activity directly. Prints ratios measured in one run; asserts nothing.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import autocannon from 'autocannon';

import { parseEnv, setConfig } from '../../activities/core/config.ts';
import { generateSecret } from '../../activities/identity/api-keys.ts';
import { freePort } from '../../tools/infra.ts';
import { launchPlatform } from '../../tools/platform.ts';
import { commandsBetween, edgeDbTimes } from './db-times.ts';

const DURATION = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = 50;
const IMAGE_RUNS = Number(process.env.BENCH_IMAGE_RUNS ?? 30);
/**
 * `npm run bench -- scale retail` or BENCH_SECTIONS=scale,retail: the sections to run, of
 * edge,loyalty,scheduler,images,retail,support,documents,billing,economy,engine,events,scale,store,startup (default: all).
 */
const chosen =
  process.argv
    .slice(2)
    .filter((a) => !a.startsWith('-'))
    .join(',') || process.env.BENCH_SECTIONS;
const SECTIONS = new Set(
  (chosen ?? 'edge,loyalty,scheduler,images,retail,support,documents,billing,economy,engine,events,scale,store,startup')
    .split(',')
    .map((x) => x.trim()),
);
/** the sections reported against the h3 hello-world baseline */
const NEEDS_BASELINE = ['edge', 'loyalty', 'retail'].some((s) => SECTIONS.has(s));

interface Load {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

async function load(name: string, opts: autocannon.Options): Promise<Load> {
  await autocannon({ ...opts, duration: 1, connections: CONNECTIONS }); // warm-up
  const r = await autocannon({ ...opts, duration: DURATION, connections: CONNECTIONS });
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors, non2xx: r.non2xx };
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-bench-'));
  const adminKey = generateSecret();
  const metricsToken = `bench-metrics-${adminKey.slice(-16)}`; // the scale section reads the edge's /metrics
  const env = {
    DATA_DIR: dataDir,
    PLATFORM_ADMIN_KEY: adminKey,
    RATE_LIMIT_PER_MINUTE: '0',
    PAYMENT_WEBHOOK_SECRET: 'whsec_bench',
    PAYMENTS_TEST_MODE: 'true',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    METRICS_TOKEN: metricsToken,
  }; // the events section's receiver is local
  const cfg = parseEnv({ ...process.env, ...env });
  process.stderr.write('bench: starting the platform…\n');
  const platform = await launchPlatform({ cfg, freePorts: true, env, stdio: 'ignore' });
  const helloPort = await freePort();
  const hello = spawn(
    fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url)),
    [fileURLToPath(new URL('./hello.ts', import.meta.url))],
    {
      env: { ...process.env, PORT: String(helloPort) },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await new Promise((r) => hello.stdout!.once('data', r));

  try {
    const base = platform.edgeUrl;
    const headers = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };
    const post = async (p: string, body: unknown) =>
      (await fetch(`${base}${p}`, { method: 'POST', headers, body: JSON.stringify(body) })).json() as Promise<any>;
    const user = await post('/generate_api_key', { user_id: 'bench-user' });
    const userKey: string = user.api_key;

    const results: Load[] = [];
    if (NEEDS_BASELINE)
      results.push(await load('h3 hello-world GET /hello', { url: `http://127.0.0.1:${helloPort}/hello` }));
    const baseline = results[0]?.rps ?? Number.NaN;
    const out: string[] = [];
    const line = (s: string) => out.push(s);
    const adminHeaders = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };

    if (SECTIONS.has('edge')) {
      results.push(
        await load('POST /verify_api_key', {
          url: `${base}/verify_api_key`,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ api_key: userKey }),
        }),
      );
      results.push(
        await load('GET /list_api_keys/{user}', {
          url: `${base}/list_api_keys/bench-user`,
          headers: { authorization: `Bearer ${userKey}` },
        }),
      );
    }

    if (SECTIONS.has('loyalty')) {
      // Loyalty: awards spread over 200 users, then the ledger invariant for every user.
      const USERS = 200;
      let n = 0;
      const awardOptions = {
        url: base,
        connections: CONNECTIONS,
        requests: [
          {
            method: 'POST' as const,
            headers: adminHeaders,
            body: JSON.stringify({ action_type: 'purchase' }),
            setupRequest: (req: any) => ({ ...req, path: `/loyalty/award-points/bench-${n++ % USERS}` }),
          },
        ],
      };
      await autocannon({ ...awardOptions, duration: 2 }); // warm-up: creates the users
      const dbBefore = await edgeDbTimes(base, metricsToken);
      const award = await autocannon({ ...awardOptions, duration: DURATION });
      const awardCommands = commandsBetween(dbBefore, await edgeDbTimes(base, metricsToken), award.requests.total);
      results.push({
        name: `POST /loyalty/award-points (${USERS} users)`,
        rps: award.requests.average,
        p50: award.latency.p50,
        p99: award.latency.p99,
        errors: award.errors,
        non2xx: award.non2xx,
      });
      const invariant = await checkLedger(platform.env.MONGODB_URI, USERS);
      line(
        `Award points at ${CONNECTIONS} connections (audited, events recorded): ${awardCommands.perRequest.toFixed(2)} database commands per award (${awardCommands.top})`,
      );
      line(
        `Ledger invariant after the award run: ${invariant.users} users, ${invariant.entries} entries, ${invariant.violations} violations (balance = sum of entries = last balance_after, seq dense)`,
      );

      // Redemption under contention: one user, balance for 100 redemptions, 200 sent at once.
      await fetch(`${base}/loyalty/rules`, {
        method: 'PUT',
        headers: adminHeaders,
        body: JSON.stringify({ actions: { purchase: 10, bench_topup: 100_000, daily_login: 5 } }),
      }); // daily_login: the scale section's scheduled runs award it
      await post('/loyalty/award-points/bench-redeemer', { action_type: 'bench_topup' });
      const gift = await post('/api/gifts/gifts', {
        gift_name: 'Bench gift',
        gift_type: 'electronic_pins',
        supplier: 'Bench',
        electronic_pin_amount: 1,
        points_value: 1000,
      });
      const redeemLatency: number[] = [];
      const t0 = performance.now();
      const statuses = await Promise.all(
        Array.from({ length: 200 }, async () => {
          const t = performance.now();
          const res = await fetch(`${base}/api/gifts/gifts/${gift.gift.id}/redeem`, {
            method: 'POST',
            headers: adminHeaders,
            body: JSON.stringify({ user_id: 'bench-redeemer' }),
          });
          await res.arrayBuffer();
          redeemLatency.push(performance.now() - t);
          return res.status;
        }),
      );
      const redeemWall = performance.now() - t0;
      const finalBalance = (
        (await (await fetch(`${base}/loyalty/points/bench-redeemer`, { headers: adminHeaders })).json()) as {
          points: number;
        }
      ).points;
      line(
        `Redemption under contention: 200 concurrent requests for one user with points for 100: ${statuses.filter((x) => x === 200).length} × 200, ${statuses.filter((x) => x === 409).length} × 409, final balance ${finalBalance}; ${(200 / (redeemWall / 1000)).toFixed(0)} req/s, p50 ${pct(redeemLatency, 50).toFixed(0)} ms, p99 ${pct(redeemLatency, 99).toFixed(0)} ms`,
      );
    }

    if (SECTIONS.has('scheduler')) {
      // Scheduler: 1,000 one-off events due over ~50 s, then how late each run started.
      const EVENTS = Number(process.env.BENCH_EVENTS ?? 1000);
      const firstDue = Date.now() + 40_000 + EVENTS * 25;
      const dueTimes = Array.from({ length: EVENTS }, (_, i) => new Date(firstDue + Math.floor((i * 50_000) / EVENTS)));
      let next = 0;
      const tCreate = performance.now();
      await Promise.all(
        Array.from({ length: 20 }, async () => {
          while (next < EVENTS) {
            const i = next++;
            const res = await fetch(`${base}/api/scheduler-service/events`, {
              method: 'POST',
              headers: adminHeaders,
              body: JSON.stringify({
                idp_id: `sched-${i % 50}`,
                type_of_event: 'loyalty',
                start_event: dueTimes[i].toISOString(),
                metadata: { action_type: 'purchase' },
              }),
            });
            if (res.status !== 200) throw new Error(`event creation answered ${res.status}: ${await res.text()}`);
          }
        }),
      );
      const createRate = EVENTS / ((performance.now() - tCreate) / 1000);
      const lateness = await waitForRuns(platform.env.MONGODB_URI, EVENTS, dueTimes[EVENTS - 1].getTime() + 120_000);
      line(
        `Scheduler: ${EVENTS} events created at ${createRate.toFixed(0)} events/s (20 concurrent clients, each with its Temporal Schedule); ${lateness.runs} runs recorded; dispatch lateness (run start - due time) p50 ${pct(lateness.ms, 50).toFixed(0)} ms, p99 ${pct(lateness.ms, 99).toFixed(0)} ms, max ${Math.max(...lateness.ms).toFixed(0)} ms`,
      );
      if (process.env.BENCH_TIMELINE) {
        const byDue = [...lateness.byRun.values()].sort((a, b) => a.due - b.due);
        for (let w = 0; w < byDue.length; w += 100) {
          const slice = byDue.slice(w, w + 100).map((r) => r.started - r.due);
          line(`  runs ${w}-${w + slice.length - 1}: p50 ${pct(slice, 50)} ms, max ${Math.max(...slice)} ms`);
        }
      }
      // Where the lateness goes: the Schedule starting the run workflow (server), then the worker.
      const phases = await runPhases(platform.env.TEMPORAL_ADDRESS, cfg.TEMPORAL_NAMESPACE, lateness.byRun);
      line(
        `  of which due time -> run workflow started (Temporal Schedule): p50 ${pct(phases.server, 50).toFixed(0)} ms, p99 ${pct(phases.server, 99).toFixed(0)} ms; workflow started -> run step started (worker): p50 ${pct(phases.worker, 50).toFixed(0)} ms, p99 ${pct(phases.worker, 99).toFixed(0)} ms`,
      );
    }

    Object.assign(process.env, platform.env);
    setConfig(parseEnv({ ...process.env, ...platform.env }));
    const { initRuntime, closeRuntime } = await import('../../activities/core/runtime.ts');
    (await import('../../workers/root.ts')).wirePlatform(); // the in-process sections call components as the processes do
    await initRuntime();
    if (SECTIONS.has('images')) {
      // Workflow overhead: the same image through HTTP + Temporal, and through the activity directly.
      const images = await import('../../activities/images/images.ts');
      const jpeg = fs.readFileSync(fileURLToPath(new URL('../fixtures/photo.jpg', import.meta.url)));
      const viaWorkflow: number[] = [];
      const direct: number[] = [];
      for (let i = 0; i < IMAGE_RUNS + 3; i += 1) {
        const form = new FormData();
        for (const [k, v] of Object.entries({ user_id: 'bench-user', session_id: 's', conversation_id: 'c' }))
          form.append(k, v);
        form.append('file', new Blob([jpeg], { type: 'image/jpeg' }), 'photo.jpg');
        let t = performance.now();
        const res = await fetch(`${base}/process_image`, {
          method: 'POST',
          headers: { authorization: `Bearer ${userKey}` },
          body: form,
        });
        if (res.status !== 200) throw new Error(`process_image answered ${res.status}: ${await res.text()}`);
        await res.arrayBuffer();
        if (i >= 3) viaWorkflow.push(performance.now() - t);
        t = performance.now();
        const upload = await images.storeUpload({
          media_id: `bench${i}`,
          organization_id: 'default',
          user_id: 'usr_bench',
          filename: 'photo.jpg',
          body: jpeg,
        });
        await images.processStoredImage(upload);
        if (i >= 3) direct.push(performance.now() - t);
      }
      line('');
      line(`process_image (${IMAGE_RUNS} sequential runs, 320x240 JPEG)`);
      line('| path | p50 ms | p99 ms |');
      line('|---|---:|---:|');
      line(
        `| HTTP edge + Temporal workflow | ${pct(viaWorkflow, 50).toFixed(1)} | ${pct(viaWorkflow, 99).toFixed(1)} |`,
      );
      line(
        `| store + image activity called directly | ${pct(direct, 50).toFixed(1)} | ${pct(direct, 99).toFixed(1)} |`,
      );
      line(`| workflow overhead (p50 ratio) | ${(pct(viaWorkflow, 50) / pct(direct, 50)).toFixed(2)}× | |`);
    }
    let nearbyP99: number | undefined;
    if (SECTIONS.has('retail')) {
      const { benchRetail } = await import('./retail.ts');
      line('');
      const retail = await benchRetail(base, adminKey, platform.env, baseline, DURATION);
      nearbyP99 = (retail as { nearbyP99?: number }).nearbyP99;
      for (const l of retail.lines) line(l);
    }
    if (SECTIONS.has('support')) {
      const { benchSupport } = await import('./support.ts');
      line('');
      for (const l of await benchSupport(base, adminKey)) line(l);
    }
    if (SECTIONS.has('billing')) {
      const { benchBilling } = await import('./billing.ts');
      line('');
      for (const l of await benchBilling(base, adminKey, 'whsec_bench')) line(l);
    }
    if (SECTIONS.has('documents')) {
      const { benchDocuments } = await import('./documents.ts');
      line('');
      for (const l of await benchDocuments(base, adminKey)) line(l);
    }
    if (SECTIONS.has('economy')) {
      const { benchEconomy } = await import('./economy.ts');
      line('');
      for (const l of await benchEconomy({ base, adminKey, mongoUri: platform.env.MONGODB_URI })) line(l);
    }
    if (SECTIONS.has('engine')) {
      const { benchEngine } = await import('./engine.ts');
      const { benchEconomy } = await import('./economy.ts');
      line('');
      for (const l of await benchEngine(base, adminKey)) line(l);
      for (const l of await benchEconomy({ base, adminKey, mongoUri: platform.env.MONGODB_URI, engine: true })) line(l);
    }
    if (SECTIONS.has('events')) {
      const { benchEvents } = await import('./events.ts');
      line('');
      for (const l of await benchEvents(base, adminKey, DURATION)) line(l);
    }
    let scaleLine: string | undefined;
    if (SECTIONS.has('scale')) {
      const { benchScale } = await import('./scale.ts');
      const scale = await benchScale(base, adminKey, metricsToken);
      scaleLine = scale.pop();
      line('');
      for (const l of scale) line(l);
    }
    let storeLine: string | undefined;
    if (SECTIONS.has('startup')) {
      const { benchStartup } = await import('./startup.ts');
      line('');
      for (const l of await benchStartup(platform.env)) line(l);
    }
    if (SECTIONS.has('store')) {
      const { benchStore, decodedPerMatched } = await import('./store.ts');
      const store = await benchStore(platform.env.MONGODB_URI);
      line('');
      for (const l of store.lines) line(l);
      // Over the whole run: the sections above sent the platform's own queries.
      const ratio = await decodedPerMatched(platform.storeMetricsUrl);
      const ms = (x: number | undefined) => (x === undefined ? 'n/a' : `${x.toFixed(2)} ms`);
      storeLine = `store: decoded per returned = ${ratio === undefined ? 'n/a' : ratio.toFixed(2)}, id read p50 = ${ms(store.readP50)}, insert p50 = ${ms(store.insertP50)}, ping p50 = ${ms(store.pingP50)}, nearby p99 = ${nearbyP99 === undefined ? 'n/a (retail not run)' : `${nearbyP99.toFixed(1)} ms`}`;
      line(storeLine);
    }
    await closeRuntime();

    const print = (s: string) => process.stdout.write(`${s}\n`);
    print('');
    if (results.length) {
      print(
        `Edge hot paths, ${CONNECTIONS} connections, ${DURATION} s each (${os.cpus().length} cores, Node ${process.version})`,
      );
      print('| route | req/s | vs hello-world | p50 ms | p99 ms | errors | non-2xx |');
      print('|---|---:|---:|---:|---:|---:|---:|');
      for (const r of results)
        print(
          `| ${r.name} | ${r.rps.toFixed(0)} | ${((r.rps / baseline) * 100).toFixed(0)}% | ${r.p50} | ${r.p99} | ${r.errors} | ${r.non2xx} |`,
        );
      print('');
    }
    for (const l of out) print(l);
    print('');
    print(
      'Targets: award-points at 50 connections (audited, events on) >= 10% of hello-world, p99 <= 50 ms, <= 1.5 database commands per award; 200 concurrent redemptions of one member p99 <= 1 s with exactly 100 × 200 and 100 × 409; economy >= 500 ops/s, p99 <= 500 ms, 0 invariant violations (also with 5 tiers and budgeted campaigns active); engine: an award against 50 active campaigns and 5 tiers <= +2 ms p50; verify_api_key >= 50% of hello-world, p99 <= 1.5× that of hello-world; listing keys >= 25%; scheduler lateness p99 < 1 s at 1,000 events; nearby (100,000 venues, 10 connections) p99 < 20 ms and >= 20% of hello-world; support answers p99 < 50 ms; workflow overhead < 1.5×; receipt scan < 1 s warm with 100,000 venues, accuracy >= 95%; store: decoded per returned <= 1.5; first-page thumbnail <= 1.5× pdftoppm; events: a backlog of one endpoint delivered at >= 1,000/s, change-to-delivery p99 < 1 s at 100 awards/s with all 100/s served, award p50 with an endpoint <= 1.10× without; scale: every hot path p99 <= 25 ms at 100,000 users, worst p99 ratio 100k/1k <= 1.5.',
    );
    // The scale verdict is the run's last line.
    if (scaleLine) print(scaleLine);
  } finally {
    hello.kill('SIGTERM');
    await platform.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Waits until `count` scheduled runs are recorded; lateness = run start minus due time. */
async function waitForRuns(uri: string, count: number, deadline: number) {
  const mongoose = (await import('mongoose')).default;
  const conn = await mongoose.createConnection(uri).asPromise();
  try {
    let runs: { _id: string; started_at: Date; scheduled_time?: Date }[] = [];
    // Not read while events come due: on FerretDB each read scans the collection, and that load
    // would add to the lateness being measured.
    await new Promise((r) => setTimeout(r, Math.max(0, deadline - 120_000 - Date.now())));
    while (Date.now() < deadline) {
      runs = (await conn
        .collection('scheduled_event_runs')
        .find({ trigger: 'scheduled' })
        .toArray()) as unknown as typeof runs;
      if (runs.length >= count) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    return {
      runs: runs.length,
      ms: runs.map((r) => r.started_at.getTime() - (r.scheduled_time?.getTime() ?? r.started_at.getTime())),
      byRun: new Map(
        runs
          .filter((r) => r.scheduled_time)
          .map((r) => [r._id, { due: r.scheduled_time!.getTime(), started: r.started_at.getTime() }]),
      ),
    };
  } finally {
    await conn.close();
  }
}

/** Each run's workflow start time from Temporal's visibility store (the run id is the workflow id). */
async function runPhases(address: string, namespace: string, byRun: Map<string, { due: number; started: number }>) {
  const { Client, Connection } = await import('@temporalio/client');
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection, namespace });
    const server: number[] = [];
    const worker: number[] = [];
    for await (const w of client.workflow.list({ query: `WorkflowType='scheduledEventWorkflow'` })) {
      const run = byRun.get(w.workflowId);
      if (!run) continue;
      server.push(w.startTime.getTime() - run.due);
      worker.push(run.started - w.startTime.getTime());
    }
    return { server, worker };
  } finally {
    await connection.close();
  }
}

/** Every user's ledger: dense seq 1..n, balance_after running sum, never negative. */
async function checkLedger(uri: string, users: number) {
  const mongoose = (await import('mongoose')).default;
  const conn = await mongoose.createConnection(uri).asPromise();
  let entries = 0;
  let violations = 0;
  try {
    const ids = await conn
      .collection('users')
      .find({ idp_id: { $regex: '^bench-\\d+$' } })
      .toArray();
    for (const u of ids) {
      const rows = await conn.collection('ledger_entries').find({ user_id: u.user_id }).sort({ seq: 1 }).toArray();
      let sum = 0;
      rows.forEach((r, i) => {
        sum += r.amount as number;
        if (r.seq !== i + 1 || r.balance_after !== sum || sum < 0) violations += 1;
      });
      entries += rows.length;
    }
    return { users: ids.length, entries, violations };
  } finally {
    await conn.close();
  }
}

main().catch((err) => {
  process.stderr.write(`bench: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
