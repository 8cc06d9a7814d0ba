import { slice } from '../core/config.ts';

/**
 * The gift provider, its credentials and when a redemption's outcome counts as unknown
 * (docs/configuration.md): read at call time, so a changed configuration applies at once.
 */
export const giftsSettings = slice([
  'GIFT_PROVIDER',
  'GIFT_PROVIDER_URL',
  'GIFT_PROVIDER_AUTH_URL',
  'GIFT_PROVIDER_CLIENT_ID',
  'GIFT_PROVIDER_CLIENT_SECRET',
  'GIFT_PROCESSING_LIMIT_SECONDS',
  'GIFT_PROVIDER_ATTEMPTS',
  'GIFT_BALANCE_CACHE_SECONDS',
  'dataDir',
] as const);
