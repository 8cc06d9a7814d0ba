/** The audit trail's vocabularies, shared with the edge (free of I/O). */

/** The level of the key that made a change: only admin and system_admin changes are recorded. */
export const ACTOR_LEVELS = ['admin', 'system_admin'] as const;
export type ActorLevel = (typeof ACTOR_LEVELS)[number];

/**
 * succeeded: the handler answered 2xx and the record was appended before the answer was sent;
 * unknown: the process stopped (or the store failed) between the change and its record, and the
 * maintenance run appended the intent the request had written before its handler ran.
 */
export const AUDIT_OUTCOMES = ['succeeded', 'unknown'] as const;
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];

/** Why verify stopped: the record's own hash, its link to the previous one, or a seq with no record. */
export const BREAK_REASONS = ['hash_mismatch', 'prev_hash_mismatch', 'missing'] as const;
export type BreakReason = (typeof BREAK_REASONS)[number];

/** The previous hash of an organization's first record. */
export const ZERO_HASH = '0'.repeat(64);

/** What a masked value reads as in `changes`. */
export const MASK = '***';
/** What stands for a person's contact details or name in a record: the trail outlives an erasure (docs/privacy.md). */
export const PERSONAL = '[personal]';
/** What stands for a user reference the platform could not resolve to a user id: never the raw reference (it may be an email). */
export const UNKNOWN_USER = '[unknown user]';
/** What a free text reads as in a record: its length, never its words. */
export const textLength = (text: string) => `<text: ${text.length} characters>`;

/** An intent older than this with no record is a request that died: the maintenance run records it as outcome unknown. */
export const INTENT_SETTLE_MINUTES = 15;
