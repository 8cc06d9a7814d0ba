import { slice } from '../core/config.ts';

/** The scheduler's limits (docs/configuration.md): read at call time, so a changed configuration applies at once. */
export const schedulerSettings = slice([
  'SCHEDULER_MAX_EVENTS_PER_USER',
  'SCHEDULER_MAX_EVENTS_PER_ORGANIZATION',
  'SCHEDULER_MAX_STORED_EVENTS_PER_USER',
  'SCHEDULER_MIN_INTERVAL_SECONDS_BASIC',
  'SCHEDULER_MAX_CATCHUP_MINUTES_BASIC',
] as const);
