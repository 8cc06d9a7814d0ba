import { slice } from '../core/config.ts';

/**
 * The default organization, the bootstrap admin key (or its file under DATA_DIR) and the keys a user
 * may hold (docs/configuration.md): read at call time, so a changed configuration applies at once.
 */
export const identitySettings = slice([
  'DEFAULT_ORGANIZATION_ID',
  'PLATFORM_ADMIN_KEY',
  'dataDir',
  'MAX_KEYS_PER_USER',
] as const);
