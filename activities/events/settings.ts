import { slice } from '../core/config.ts';

/**
 * How long an endpoint may fail before it is disabled (docs/configuration.md): read at call time, so a
 * changed configuration applies at once.
 */
export const eventsSettings = slice([
  'WEBHOOK_DISABLE_AFTER_DAYS',
  'WEBHOOK_RETRY_BASE_SECONDS',
  'WEBHOOK_RETRY_HOURS',
] as const);

/** How long a delivery is attempted from when it is queued (or retried by hand): WEBHOOK_RETRY_HOURS. */
export const retryWindowMs = () => eventsSettings().WEBHOOK_RETRY_HOURS * 3_600_000;
