import { slice } from '../core/config.ts';

/**
 * The exports a user may ask for in 24 hours (docs/configuration.md): read at call time, so a changed
 * configuration applies at once.
 */
export const privacySettings = slice(['USER_EXPORTS_PER_DAY'] as const);
