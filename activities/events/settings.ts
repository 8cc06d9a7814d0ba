import { slice } from '../core/config.ts';

/**
 * How long an endpoint may fail before it is disabled (docs/configuration.md): read at call time, so a
 * changed configuration applies at once.
 */
export const eventsSettings = slice(['WEBHOOK_DISABLE_AFTER_DAYS'] as const);
