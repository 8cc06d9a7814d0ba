/**
 * `npm start`: finds or starts Temporal, a MongoDB-wire server and MinIO, then the Temporal
 * worker(s) and the HTTP edge as child processes, and keeps them running (a process that dies is
 * restarted with a backoff, and logged). It says "ready" once GET /health/ready answers 200.
 * Ctrl-C stops everything, in reverse order; so does a server that cannot be restarted.
 */
import { parseEnv, setConfig } from '../activities/core/config.ts';
import { launchPlatform, type Platform } from './platform.ts';

async function main() {
  const cfg = parseEnv();
  setConfig(cfg);
  process.stderr.write(`start: data directory ${cfg.dataDir}\n`);
  const began = Date.now();
  let platform: Platform | undefined;
  let stopping = false;
  let fatal: string | undefined;
  async function shutdown(code: number) {
    if (stopping) return;
    stopping = true;
    process.stderr.write('start: stopping…\n');
    await platform?.stop();
    process.stderr.write('start: stopped\n');
    process.exit(code);
  }
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));
  process.on('SIGHUP', () => void shutdown(0));
  platform = await launchPlatform({
    cfg,
    ui: true,
    onFatal: (reason) => {
      fatal = reason;
      process.stderr.write(`start: stopping the platform: ${reason}\n`);
      void shutdown(1);
    },
  });
  if (stopping) return;
  if (fatal) return;
  const { edgeUrl } = platform;
  process.stderr.write(
    [
      '',
      `start: ready in ${((Date.now() - began) / 1000).toFixed(1)} s: every server answers and a worker polls task queue ${cfg.TEMPORAL_TASK_QUEUE} (WORKER_COUNT ${cfg.WORKER_COUNT})`,
      `  API          ${edgeUrl}   (docs: ${edgeUrl}/docs, health: ${edgeUrl}/health, readiness: ${edgeUrl}/health/ready)`,
      `  Console      ${edgeUrl}/console   (sign in with an admin key)`,
      `  Temporal UI  ${platform.temporalUi ?? `use the Web UI of the Temporal server at ${platform.env.TEMPORAL_ADDRESS}`}`,
      `  Admin key    ${cfg.PLATFORM_ADMIN_KEY ? 'the PLATFORM_ADMIN_KEY you set' : `${cfg.dataDir}/admin-key.txt`}`,
      // Test payments hand out tokens for free: whoever starts the platform must see that they are on.
      ...(!cfg.STRIPE_SECRET_KEY && cfg.PAYMENTS_TEST_MODE
        ? [
            "  Payments     TEST MODE (PAYMENTS_TEST_MODE): Stripe's test payment methods such as pm_card_visa buy tokens for free",
          ]
        : []),
      '  Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );
}

main().catch((err) => {
  process.stderr.write(`start: ${(err as Error).message}\n`);
  process.exit(1);
});
