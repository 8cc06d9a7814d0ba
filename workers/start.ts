/**
 * `npm start`: finds or starts Temporal, a MongoDB-wire server and MinIO, then the Temporal
 * worker(s) and the HTTP edge as child processes. One Ctrl-C stops everything, in reverse order.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseEnv, setConfig } from '../activities/config';
import { startInfra } from './infra';

const GUARD = fileURLToPath(new URL('./guard.sh', import.meta.url));
const TSX = fileURLToPath(new URL('../node_modules/.bin/tsx', import.meta.url));

function startProcess(name: string, script: string, env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn('bash', [GUARD, String(process.pid), TSX, fileURLToPath(new URL(script, import.meta.url))], {
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  child.on('exit', (code, signal) => {
    if (!stopping) {
      process.stderr.write(`start: ${name} exited (${signal ?? code}); stopping the platform\n`);
      void shutdown(1);
    }
  });
  return child;
}

let stopping = false;
let shutdown: (code: number) => Promise<void> = async (code) => process.exit(code);

async function main() {
  const cfg = parseEnv();
  setConfig(cfg);
  process.stderr.write(`start: data directory ${cfg.dataDir}\n`);
  const infra = await startInfra({ cfg, ui: true });
  const env = { ...process.env, ...infra.env, DATA_DIR: cfg.dataDir };
  const children: ChildProcess[] = [];
  shutdown = async (code: number) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write('start: stopping…\n');
    for (const child of children.reverse()) {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
      }
    }
    await infra.stop();
    process.stderr.write('start: stopped\n');
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));

  for (let i = 0; i < cfg.WORKER_COUNT; i += 1) children.push(startProcess(`worker ${i + 1}`, './worker.ts', env));
  children.push(startProcess('edge', './edge.ts', env));

  const edgeUrl = `http://${cfg.HOST}:${cfg.PORT}`;
  process.stderr.write(
    [
      '',
      `  API          ${edgeUrl}   (docs: ${edgeUrl}/docs, health: ${edgeUrl}/health)`,
      `  Temporal UI  ${infra.temporalUi ?? '(Temporal at ' + infra.env.TEMPORAL_ADDRESS + ': use its own UI)'}`,
      `  Admin key    ${cfg.PLATFORM_ADMIN_KEY ? 'PLATFORM_ADMIN_KEY' : `${cfg.dataDir}/admin-key.txt`}`,
      '  Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );
}

main().catch((err) => {
  process.stderr.write(`start: ${(err as Error).message}\n`);
  process.exit(1);
});
