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
  /**
   * The tombstones of the same person's earlier accounts in the organization, erased since
   * (docs/privacy.md): once-only rules count what those received as the user's own. Mostly empty.
   */
  earlier?: string[];
}
