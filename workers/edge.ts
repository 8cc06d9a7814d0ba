/** The HTTP edge process: h3 app served by listhen. */
import { toNodeListener } from 'h3';
import { listen } from 'listhen';

import { config } from '../activities/core/config.ts';
import { ensureConfigEncryptionKey } from '../activities/core/encryption.ts';
import { createAccessLogger, createLogger } from '../activities/core/logger.ts';
import { closeRuntime, initRuntime } from '../activities/core/runtime.ts';
import { eventsSettled } from '../activities/events/index.ts';
import { ensureBootstrapAdminKey, stopRevocationWatcher } from '../activities/identity/index.ts';
import { campaignStatsSettled, ledgerEventsSettled } from '../activities/loyalty/index.ts';
import { createEdgeApp } from '../edge/app.ts';
import { wirePlatform } from './root.ts';
import { closeTemporal } from './runs/client.ts';

export async function startEdge(opts: { port?: number; quiet?: boolean } = {}) {
  const cfg = config();
  wirePlatform();
  await initRuntime(cfg);
  const bootstrap = await ensureBootstrapAdminKey();
  const configKey = ensureConfigEncryptionKey();
  const logger = createLogger('edge', cfg.LOG_LEVEL);
  const app = createEdgeApp({ logger, accessLogger: createAccessLogger(cfg.LOG_LEVEL) });
  const listener = await listen(toNodeListener(app), {
    hostname: cfg.HOST,
    port: opts.port ?? cfg.PORT,
    showURL: false,
    isProd: true,
    qr: false,
    public: cfg.HOST !== '127.0.0.1' && cfg.HOST !== 'localhost',
  });
  // Idle keep-alive connections stay open longer than clients and balancers keep theirs (60 s is
  // the usual idle timeout), so the client is the one that closes: with Node's 5 s default a client
  // whose event loop was busy for a few seconds could send on a socket the edge had just closed
  // (EPIPE / "other side closed" on a request that never arrived).
  listener.server.keepAliveTimeout = 65_000;
  listener.server.headersTimeout = 66_000;
  if (!opts.quiet) {
    logger.info({ url: listener.url }, `listening on ${listener.url}`);
    if (bootstrap.source === 'generated')
      logger.info({ file: bootstrap.file }, `generated the system-admin API key into ${bootstrap.file} (mode 0600)`);
    else if (bootstrap.source === 'file')
      logger.info({ file: bootstrap.file }, `system-admin API key is in ${bootstrap.file}`);
    if (!cfg.STRIPE_SECRET_KEY && cfg.PAYMENTS_TEST_MODE)
      logger.warn(
        "payments in test mode (PAYMENTS_TEST_MODE): Stripe's test payment methods such as pm_card_visa buy tokens for free",
      );
    if (configKey.source === 'generated')
      logger.info(
        { file: configKey.file },
        `generated the key provider secrets are encrypted with into ${configKey.file} (mode 0600)`,
      );
  }
  return {
    url: listener.url,
    async close() {
      await listener.close();
      await stopRevocationWatcher();
      // Events being recorded and fanned out after their answers (the sweep would finish them, later).
      await ledgerEventsSettled();
      await campaignStatsSettled();
      await eventsSettled();
      await closeTemporal();
      await closeRuntime();
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  startEdge()
    .then((edge) => {
      const stop = () => {
        void edge.close().finally(() => process.exit(0));
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    })
    .catch((err) => {
      // The configuration may be what failed: LOG_LEVEL is not read here.
      createLogger('edge', 'info', { sync: true }).fatal({ err }, `could not start: ${(err as Error)?.message ?? err}`);
      process.exit(1);
    });
}
