/**
 * The Temporal worker process: registers every workflow and activity of the platform on the task
 * queue. Several can run side by side (WORKER_COUNT in `npm start`, replicas in docker compose).
 */
import { fileURLToPath } from 'node:url';
import { DefaultLogger, NativeConnection, Worker, Runtime, makeTelemetryFilterString } from '@temporalio/worker';
import { config } from '../activities/config';
import { initRuntime, closeRuntime } from '../activities/runtime';
import { warmVenues } from '../activities/retail/venues';
import { stopOcr } from '../activities/engines/ocr';
import { stopSpeech } from '../activities/engines/speech';
import { analyseOffThread, stopAnalysisThread } from '../activities/text/analysis-runner';
import * as activities from '../activities/workflow-activities';
import { wrapActivities } from './activity-wrapper';
import { prepareServers } from './infra';
import { ensureSchedules } from './schedules';
import { Connection } from '@temporalio/client';
import { PLATFORM_FAILURE_TYPE } from '../workflows/failures';

export async function createWorker() {
  const cfg = config();
  await prepareServers(cfg);
  await initRuntime(cfg);
  warmVenues();
  // The text analysis thread loads its code on first use (~0.5-1 s): pay that at start, not on a user's text.
  analyseOffThread('warm up', { embed: true }).catch(() => undefined);
  const connection = await NativeConnection.connect({ address: cfg.TEMPORAL_ADDRESS! });
  const clientConnection = await Connection.connect({ address: cfg.TEMPORAL_ADDRESS! });
  try {
    await ensureSchedules(clientConnection, cfg);
  } finally {
    await clientConnection.close();
  }
  const worker = await Worker.create({
    connection,
    namespace: cfg.TEMPORAL_NAMESPACE,
    taskQueue: cfg.TEMPORAL_TASK_QUEUE,
    workflowsPath: fileURLToPath(new URL('../workflows/index.ts', import.meta.url)),
    activities: wrapActivities(activities),
    maxConcurrentActivityTaskExecutions: 8,
  });
  return { worker, connection };
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

async function main() {
  const level = config().LOG_LEVEL === 'debug' ? 'DEBUG' : 'WARN';
  const base = new DefaultLogger(level);
  // A refused upload is the client's mistake, answered with a 4xx: not a warning for operators.
  const logger = new DefaultLogger(level, (entry) => {
    if (entry.level === 'WARN' && isClientFailureLog(entry.meta)) return;
    base.log(entry.level, entry.message, entry.meta);
  });
  Runtime.install({
    logger,
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'WARN' }) } },
  });
  const { worker, connection } = await createWorker();
  process.stderr.write(`worker: polling task queue ${config().TEMPORAL_TASK_QUEUE} on ${config().TEMPORAL_ADDRESS}\n`);
  try {
    await worker.run(); // returns after SIGINT/SIGTERM, once in-flight tasks are done
  } finally {
    await connection.close();
    await stopOcr();
    stopSpeech();
    stopAnalysisThread();
    await closeRuntime();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err) => {
    process.stderr.write(`worker: ${(err as Error).stack ?? err}\n`);
    process.exit(1);
  });
}
