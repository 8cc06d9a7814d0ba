/** The configured gift provider (GIFT_PROVIDER), built once per process. */
import { type GiftProvider, httpProvider, sandboxProvider } from '../adapters/gift-provider.ts';
import { ensureConfigEncryptionKey } from '../core/encryption.ts';
import { misconfigured } from '../core/errors.ts';
import { giftsSettings } from './settings.ts';
import { sandboxAccounts, sandboxTransactions } from './store.ts';

let provider: { key: string; engine: GiftProvider } | undefined;

/** The configured provider, built once per process (the HTTP provider keeps its OAuth token). */
export function giftProvider(): GiftProvider {
  const cfg = giftsSettings();
  const key = [
    cfg.GIFT_PROVIDER,
    cfg.GIFT_PROVIDER_URL,
    cfg.GIFT_PROVIDER_AUTH_URL,
    cfg.GIFT_PROVIDER_CLIENT_ID,
    cfg.dataDir,
  ].join('|');
  if (provider?.key === key) return provider.engine;
  let engine: GiftProvider;
  if (cfg.GIFT_PROVIDER === 'reloadly') {
    if (!cfg.GIFT_PROVIDER_URL || !cfg.GIFT_PROVIDER_CLIENT_ID || !cfg.GIFT_PROVIDER_CLIENT_SECRET)
      throw misconfigured('gift provider not configured');
    const url = cfg.GIFT_PROVIDER_URL.replace(/\/+$/, '');
    engine = httpProvider({
      url,
      auth_url: cfg.GIFT_PROVIDER_AUTH_URL ?? `${url}/oauth/token`,
      client_id: cfg.GIFT_PROVIDER_CLIENT_ID,
      client_secret: cfg.GIFT_PROVIDER_CLIENT_SECRET,
    });
  } else {
    engine = sandboxProvider({
      transactions: sandboxTransactions,
      accounts: sandboxAccounts,
      secret: ensureConfigEncryptionKey().secret,
    });
  }
  provider = { key, engine };
  return engine;
}
