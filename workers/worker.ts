/**
 * The Temporal worker process: registers every workflow and activity of the platform on the task
 * queue. Several can run side by side (WORKER_COUNT in `npm start`, replicas in docker compose).
 */
import { fileURLToPath } from 'node:url';
import { DefaultLogger, NativeConnection, Worker, Runtime, makeTelemetryFilterString } from '@temporalio/worker';
import { config } from '../activities/config';
import { initRuntime, closeRuntime } from '../activities/runtime';
import * as activities from '../activities/workflow-activities';
import { wrapActivities } from './activity-wrapper';

export async function createWorker() {
  const cfg = config();
  await initRuntime(cfg);
  const connection = await NativeConnection.connect({ address: cfg.TEMPORAL_ADDRESS! });
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

async function main() {
  Runtime.install({
    logger: new DefaultLogger(config().LOG_LEVEL === 'debug' ? 'DEBUG' : 'WARN'),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'WARN' }) } },
  });
  const { worker, connection } = await createWorker();
  process.stderr.write(`worker: polling task queue ${config().TEMPORAL_TASK_QUEUE} on ${config().TEMPORAL_ADDRESS}\n`);
  try {
    await worker.run(); // returns after SIGINT/SIGTERM, once in-flight tasks are done
  } finally {
    await connection.close();
    await closeRuntime();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err) => {
    process.stderr.write(`worker: ${(err as Error).stack ?? err}\n`);
    process.exit(1);
  });
}
