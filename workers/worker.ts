/**
 * The Temporal worker process: registers every workflow and activity of the platform on the task
 * queue. Several can run side by side (WORKER_COUNT in `npm start`, replicas in docker compose).
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

import {
  DefaultLogger,
  type LogLevel,
  makeTelemetryFilterString,
  NativeConnection,
  Runtime,
  Worker,
} from '@temporalio/worker';

import { stopOcr } from '../activities/adapters/ocr.ts';
import { stopSpeech } from '../activities/adapters/speech.ts';
import { type Config, config } from '../activities/core/config.ts';
import { createLogger, type Logger } from '../activities/core/logger.ts';
import { closeRuntime, initRuntime } from '../activities/core/runtime.ts';
import { campaignStatsSettled } from '../activities/loyalty/index.ts';
import { analyseOffThread, stopAnalysisThread } from '../activities/text/index.ts';
import * as activities from '../activities/workflow-activities.ts';
import { PLATFORM_FAILURE_TYPE } from '../workflows/failures.ts';
import { wrapActivities } from './activity-wrapper.ts';
import { wirePlatform } from './root.ts';
import { ensureSchedules } from './runs/platform-schedules.ts';
import { prepareServers } from './servers.ts';
import { WORKFLOW_BUNDLE, WORKFLOW_SOURCES } from './workflow-sources.ts';

/** This code runs from dist/ (`npm run build`): the workflows come from the prebuilt bundle beside it. */
const builtHere = import.meta.url.endsWith('.js');

export async function createWorker() {
  const cfg = config();
  wirePlatform();
  await prepareServers(cfg);
  await initRuntime(cfg);
  // The text analysis thread loads its code on first use (~0.5-1 s): pay that at start, not on a user's text.
  analyseOffThread('warm up', { embed: true }).catch(() => undefined);
  const connection = await NativeConnection.connect({ address: cfg.TEMPORAL_ADDRESS! });
  await ensureSchedules(cfg);
  const worker = await Worker.create({
    connection,
    namespace: cfg.TEMPORAL_NAMESPACE,
    taskQueue: cfg.TEMPORAL_TASK_QUEUE,
    ...workflowCode(),
    activities: wrapActivities(activities),
    maxConcurrentActivityTaskExecutions: 8,
  });
  return { worker, connection };
}

/**
 * The workflow code. Compiled (dist/workers/worker.js), the bundle `npm run build` made beside it
 * (dist/workflow-bundle.js, interceptors included): no bundling at start. From the sources, the SDK
 * bundles workflows/index.ts at start (a few seconds), so an edited workflow runs at once.
 */
export function workflowCode():
  { workflowBundle: { codePath: string } } | { workflowsPath: string; interceptors: { workflowModules: string[] } } {
  if (builtHere)
    return { workflowBundle: { codePath: fileURLToPath(new URL(`../${WORKFLOW_BUNDLE}`, import.meta.url)) } };
  return {
    workflowsPath: fileURLToPath(new URL(WORKFLOW_SOURCES.workflowsPath, import.meta.url)),
    // heartbeat timeouts for long activities: a killed worker's activity moves on within 20 s
    interceptors: {
      workflowModules: WORKFLOW_SOURCES.interceptorModules.map((m) => fileURLToPath(new URL(m, import.meta.url))),
    },
  };
}

function isClientFailureLog(meta: Record<string, unknown> | undefined): boolean {
  let err = meta?.error as { type?: string; nonRetryable?: boolean; cause?: unknown; stack?: string } | undefined;
  // "Workflow failed" arrives from the workflow thread as a plain Error (type lost): a failure
  // raised by the activity wrapper is a PlatformError, and a server-side one (5xx) has already
  // been logged with its type by each failed activity attempt.
  if (meta?.workflowType) {
    for (let e = err, depth = 0; e && depth < 4; e = e.cause as typeof err, depth += 1) {
      if (e.stack?.startsWith('ApplicationFailure') && e.stack.includes('activity-wrapper')) return true;
    }
  }
  for (let depth = 0; err && depth < 4; depth += 1) {
    if (err.type === PLATFORM_FAILURE_TYPE && err.nonRetryable) return true;
    err = err.cause as typeof err;
  }
  return false;
}

const PINO_LEVEL: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/**
 * The SDK's runtime, once per process: its log (activity and workflow failures, with workflowId,
 * workflowType and activityType) as JSON lines, and with WORKER_METRICS_PORT its Prometheus
 * metrics. Workers sharing a host take the first free port from WORKER_METRICS_PORT up.
 */
function installRuntime(cfg: Config, log: Logger): string | undefined {
  // At info the SDK reports every worker state change: only its warnings and errors by default.
  const sdkLevel = cfg.LOG_LEVEL === 'debug' ? 'DEBUG' : 'WARN';
  const logger = new DefaultLogger(sdkLevel, (entry) => {
    // A refused upload is the client's mistake, answered with a 4xx: not a warning for operators.
    if (entry.level === 'WARN' && isClientFailureLog(entry.meta)) return;
    log[PINO_LEVEL[entry.level]]({ ...entry.meta }, entry.message);
  });
  const telemetryOptions = { logging: { filter: makeTelemetryFilterString({ core: 'WARN' }) } };
  const base = cfg.WORKER_METRICS_PORT;
  if (!base) {
    Runtime.install({ logger, telemetryOptions });
    return undefined;
  }
  const host = cfg.HOST === 'localhost' ? '127.0.0.1' : cfg.HOST.includes(':') ? `[${cfg.HOST}]` : cfg.HOST;
  for (let port = base; port < base + 16 && port <= 65535; port += 1) {
    const bindAddress = `${host}:${port}`;
    try {
      Runtime.install({ logger, telemetryOptions: { ...telemetryOptions, metrics: { prometheus: { bindAddress } } } });
      return bindAddress;
    } catch (err) {
      if (!/in use/i.test((err as Error).message)) throw err;
    }
  }
  throw new Error(`WORKER_METRICS_PORT: ports ${base} to ${base + 15} are all taken`);
}

/**
 * A worker has no port to ask: while it runs, it touches a file every HEARTBEAT_MS, and the image's
 * health check (workers/healthcheck.ts) calls a worker healthy while the file is fresh. A worker
 * stuck (event loop held) or no longer running stops touching it. Removed at the end.
 */
export const HEARTBEAT_MS = 10_000;

function startHeartbeat(file: string, worker: Worker, log: Logger): { stop(): void } {
  let warned = false;
  fs.rmSync(file, { force: true }); // a killed predecessor's: this worker is not polling yet
  const beat = () => {
    if (worker.getState() !== 'RUNNING') return;
    try {
      fs.writeFileSync(file, `${new Date().toISOString()}\n`);
    } catch (err) {
      if (!warned) log.warn({ err, file }, `WORKER_HEARTBEAT_FILE: cannot write ${file}`);
      warned = true;
    }
  };
  const first = setTimeout(beat, 1000); // once it polls (run() has just been called)
  const timer = setInterval(beat, HEARTBEAT_MS);
  timer.unref();
  first.unref();
  return {
    stop() {
      clearTimeout(first);
      clearInterval(timer);
      fs.rmSync(file, { force: true });
    },
  };
}

async function main() {
  const cfg = config();
  const log = createLogger('worker', cfg.LOG_LEVEL);
  const metrics = installRuntime(cfg, log);
  if (metrics)
    log.info({ metrics: `http://${metrics}/metrics` }, `Temporal worker metrics on http://${metrics}/metrics`);
  const { worker, connection } = await createWorker();
  log.info(
    { task_queue: cfg.TEMPORAL_TASK_QUEUE, temporal: cfg.TEMPORAL_ADDRESS },
    `polling task queue ${cfg.TEMPORAL_TASK_QUEUE} on ${cfg.TEMPORAL_ADDRESS}`,
  );
  const heartbeat = cfg.WORKER_HEARTBEAT_FILE ? startHeartbeat(cfg.WORKER_HEARTBEAT_FILE, worker, log) : undefined;
  try {
    await worker.run(); // returns after SIGINT/SIGTERM, once in-flight tasks are done
  } finally {
    heartbeat?.stop();
    await connection.close();
    await stopOcr();
    stopSpeech();
    stopAnalysisThread();
    // Campaign report sums of the last second (scheduled awards run here).
    await campaignStatsSettled();
    await closeRuntime();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err) => {
    // The configuration may be what failed: LOG_LEVEL is not read here.
    createLogger('worker', 'info', { sync: true }).fatal({ err }, `could not start: ${(err as Error)?.message ?? err}`);
    process.exit(1);
  });
}
