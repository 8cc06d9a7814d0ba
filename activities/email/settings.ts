import { slice } from '../core/config.ts';

/**
 * Email's hourly limit per user, the outbox's retention and where unsubscribe links point
 * (docs/configuration.md): read at call time, so a changed configuration applies at once.
 */
export const emailSettings = slice(['EMAIL_USER_LIMIT_PER_HOUR', 'OUTBOX_RETENTION_DAYS', 'publicUrl'] as const);
