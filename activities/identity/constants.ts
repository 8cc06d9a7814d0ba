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
