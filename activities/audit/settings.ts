import { slice } from '../core/config.ts';

/**
 * How long audit records are kept (docs/configuration.md): read at call time, so a changed
 * configuration applies at once.
 */
export const auditSettings = slice(['AUDIT_RETENTION_DAYS'] as const);
