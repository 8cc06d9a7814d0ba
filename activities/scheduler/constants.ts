/** Scheduler values the edge validates against, kept apart from the schemas so it imports no model. */
export const EVENT_TYPES = ['email', 'loyalty', 'billing', 'support', 'feedback', 'documents', 'webhook'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
export const OVERLAPS = ['skip', 'buffer_one', 'allow_all'] as const;
export type Overlap = (typeof OVERLAPS)[number];
export const DEFAULT_CATCHUP_MINUTES = 60;
/**
 * Why a run failed: `not_allowed` (403), `limit` (409, 429), `refused` (another 4xx) are the
 * platform's own answers, the text the same request made by hand gets; `internal` is anything
 * else (a mail server, the database, the network: their text may name hosts and internals).
 */
export const FAILURES = ['not_allowed', 'limit', 'refused', 'internal'] as const;
export type Failure = (typeof FAILURES)[number];
/** What a basic reader sees instead of an internal failure's text (the detail: admins and the log). */
export const INTERNAL_FAILURE_TEXT =
  "The task failed on the platform's side (a mail server, database or network could not be reached); an administrator can read the detail";
/** A failed run recorded before failures were classed: its text may be an internal one. */
export const UNCLASSED_FAILURE_TEXT = 'The task failed; an administrator can read the detail';
/** A rotation of the organization's scheduled-webhook signing secret: the previous one's default and longest grace. */
export const WEBHOOK_SECRET_DEFAULT_GRACE_SECONDS = 86_400;
export const WEBHOOK_SECRET_MAX_GRACE_SECONDS = 7 * 86_400;
