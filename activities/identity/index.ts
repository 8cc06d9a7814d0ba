/** The identity component's surface: what the edge, the workflows and other components may use. */
export type { Principal } from './api-keys.ts';
export {
  authenticateKey,
  ensureBootstrapAdminKey,
  forgetUserKeys,
  stopRevocationWatcher,
  verifyApiKey,
} from './api-keys.ts';
export { spendKeyCredit } from './credits.ts';
export { beginIdentityErasure, exportIdentity, finishIdentityErasure, idpHeld, releaseIdp } from './erasure.ts';
export {
  currentKeyLevel,
  issueApiKey,
  listApiKeys,
  listOrganizationKeys,
  requireRankOver,
  revokeApiKey,
  whyUnusable,
} from './key-management.ts';
export { keyUsage, updateApiKey } from './key-profile.ts';
export { countKeyRequest } from './key-usage.ts';
export { createOrganization, findOrganization, getOrganization, updateOrganization } from './organizations.ts';
export { MAX_GRACE_SECONDS, rotateApiKey } from './rotation.ts';
export {
  findUser,
  findUserRef,
  getUser,
  isPlatformUserId,
  isTombstone,
  resolveOrCreateUserRef,
  returningFacts,
  searchMembers,
  updateUser,
  upsertUser,
} from './users.ts';
