/** Sessions' vocabulary, shared with the edge (which imports no model). */
export const SESSION_STATUSES = ['active', 'paused', 'ended'] as const;
export const SESSION_SOURCES = ['web', 'mobile', 'api'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];
export type SessionSource = (typeof SESSION_SOURCES)[number];
