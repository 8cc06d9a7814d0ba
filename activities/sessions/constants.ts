/** Sessions' vocabulary, shared with the edge (which imports no model). */
export const SESSION_STATUSES = ['active', 'paused', 'ended'] as const;
export const SESSION_SOURCES = ['web', 'mobile', 'api'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];
export type SessionSource = (typeof SESSION_SOURCES)[number];

/** Why a session ended: by a call (`ended`), or past its organization's lifetime or inactivity timeout. */
export const END_REASONS = ['ended', 'lifetime', 'inactivity'] as const;
export type EndReason = (typeof END_REASONS)[number];

/** Bounds of an organization's session lifetime and inactivity timeout, in seconds (docs/components/sessions.md). */
export const SESSION_LIMIT_MIN_SECONDS = 60;
export const SESSION_LIFETIME_MAX_SECONDS = 365 * 86_400;
export const SESSION_IDLE_MAX_SECONDS = 90 * 86_400;

/** A user's list shows an ended session for this long after its end; export keeps it until erasure. */
export const ENDED_LISTED_DAYS = 30;
