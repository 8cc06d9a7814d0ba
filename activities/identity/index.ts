/** The identity component's surface: what the edge, the workflows and other components may use. */
export { authenticateKey, ensureBootstrapAdminKey, forgetUserKeys, stopRevocationWatcher, verifyApiKey } from './api-keys';
export type { Principal } from './api-keys';
export { currentKeyLevel, issueApiKey, listApiKeys, requireRankOver, revokeApiKey, whyUnusable } from './key-management';
export { createOrganization, findOrganization, getOrganization, updateOrganization } from './organizations';
export { MAX_GRACE_SECONDS, rotateApiKey } from './rotation';
export { findUser, findUserRef, getUser, isPlatformUserId, isTombstone, resolveOrCreateUserRef, updateUser, upsertUser } from './users';
export { beginIdentityErasure, exportIdentity, finishIdentityErasure } from './erasure';
