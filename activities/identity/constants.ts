/** Identity's vocabulary, shared with the edge (which imports no model). */
export const TIERS = ['free', 'business', 'enterprise'] as const;
export type Tier = (typeof TIERS)[number];

/** basic < admin < system_admin: a key holds its highest permission and everything below it. */
export const PERMISSIONS = ['basic', 'admin', 'system_admin'] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** A principal's level from which it acts as an admin (PERMISSIONS' index of 'admin'). */
export const ADMIN_LEVEL = 1;

/** What most operations need to know of a user. */
export interface UserRef {
  user_id: string;
  idp_id: string;
  organization_id: string;
  /** a person erased here before (docs/privacy.md): the once-only rules read what they already received */
  returning?: boolean;
}

/** How a key's credits refill: to their amount at each UTC day's or month's start. */
export const REFILL_INTERVALS = ['daily', 'monthly'] as const;
export type RefillInterval = (typeof REFILL_INTERVALS)[number];

/**
 * A key's requests counted by outcome (GET /api/keys/{key_id}/usage): success (2xx, 3xx),
 * client_error (other 4xx, and a client gone before the answer), forbidden (403), rate_limited
 * (429 of the per-minute limits), no_credits (refused for want of credits), server_error (5xx).
 */
export const KEY_OUTCOMES = [
  'success',
  'client_error',
  'forbidden',
  'rate_limited',
  'no_credits',
  'server_error',
] as const;
export type KeyOutcome = (typeof KEY_OUTCOMES)[number];

/** Bounds of what an admin sets on a key. */
export const KEY_NAME_MAX = 100;
export const KEY_META_MAX_BYTES = 2048;
export const KEY_CREDITS_MAX = 1_000_000_000;
export const KEY_USAGE_MAX_DAYS = 90;
