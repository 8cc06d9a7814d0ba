/** The HTTP edge process: h3 app served by listhen. */
import { listen } from 'listhen';
import { toNodeListener } from 'h3';
import { config } from '../activities/config';
import { initRuntime, closeRuntime } from '../activities/runtime';
import { warmVenues } from '../activities/retail/venues';
import { ensureBootstrapAdminKey, stopRevocationWatcher } from '../activities/identity/api-keys';
import { ensureConfigEncryptionKey } from '../activities/llm/secrets';
import { createEdgeApp } from '../edge/app';
import { closeTemporal } from '../edge/temporal';

export async function startEdge(opts: { port?: number; quiet?: boolean } = {}) {
  const cfg = config();
  await initRuntime(cfg);
  warmVenues();
  const bootstrap = await ensureBootstrapAdminKey();
  const configKey = ensureConfigEncryptionKey();
  const app = createEdgeApp();
  const listener = await listen(toNodeListener(app), {
    hostname: cfg.HOST,
    port: opts.port ?? cfg.PORT,
    showURL: false,
    isProd: true,
    qr: false,
    public: cfg.HOST !== '127.0.0.1' && cfg.HOST !== 'localhost',
  });
  if (!opts.quiet) {
    process.stderr.write(`edge: listening on ${listener.url}\n`);
    if (bootstrap.source === 'generated') process.stderr.write(`edge: generated the system-admin API key into ${bootstrap.file} (mode 0600)\n`);
    else if (bootstrap.source === 'file') process.stderr.write(`edge: system-admin API key is in ${bootstrap.file}\n`);
    if (configKey.source === 'generated') process.stderr.write(`edge: generated the key provider secrets are encrypted with into ${configKey.file} (mode 0600)\n`);
  }
  return {
    url: listener.url,
    async close() {
      await listener.close();
      stopRevocationWatcher();
      await closeTemporal();
      await closeRuntime();
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  startEdge()
    .then((edge) => {
      const stop = () => {
        edge.close().finally(() => process.exit(0));
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    })
    .catch((err) => {
      process.stderr.write(`edge: ${(err as Error).stack ?? err}\n`);
      process.exit(1);
    });
}
