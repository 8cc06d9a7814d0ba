/**
 * `npm start`: finds or starts Temporal, a MongoDB-wire server and MinIO, then the Temporal
 * worker(s) and the HTTP edge as child processes. One Ctrl-C stops everything, in reverse order.
 */
import { parseEnv, setConfig } from '../activities/config';
import { launchPlatform } from './platform';

async function main() {
  const cfg = parseEnv();
  setConfig(cfg);
  process.stderr.write(`start: data directory ${cfg.dataDir}\n`);
  let stopping = false;
  const platform = await launchPlatform({
    cfg,
    ui: true,
    onExit: (name, code, signal) => {
      process.stderr.write(`start: ${name} exited (${signal ?? code}); stopping the platform\n`);
      void shutdown(1);
    },
  });
  async function shutdown(code: number) {
    if (stopping) return;
    stopping = true;
    process.stderr.write('start: stopping…\n');
    await platform.stop();
    process.stderr.write('start: stopped\n');
    process.exit(code);
  }
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));
  process.stderr.write(
    [
      '',
      `  API          ${platform.edgeUrl}   (docs: ${platform.edgeUrl}/docs, health: ${platform.edgeUrl}/health)`,
      `  Temporal UI  ${platform.temporalUi ?? `use the Web UI of the Temporal server at ${platform.env.TEMPORAL_ADDRESS}`}`,
      `  Admin key    ${cfg.PLATFORM_ADMIN_KEY ? 'the PLATFORM_ADMIN_KEY you set' : `${cfg.dataDir}/admin-key.txt`}`,
      '  Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );
}

main().catch((err) => {
  process.stderr.write(`start: ${(err as Error).message}\n`);
  process.exit(1);
});
