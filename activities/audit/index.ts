/** The audit trail's surface: administrative changes, hash-chained per organization (docs/components/audit.md). */
export { verifyChain } from './chain.ts';
export { ACTOR_LEVELS, AUDIT_OUTCOMES, BREAK_REASONS, textLength } from './constants.ts';
export { beginIntent, dropIntent, newIntentId } from './intents.ts';
export {
  bodyChanges,
  type ChangePolicy,
  isPlatformId,
  isUserReferenceName,
  type JsonSchema,
  mergeChanges,
  recordedUser,
} from './mask.ts';
export { type AuditEntry, listAuditRecords, recordChange } from './records.ts';
export { purgeAuditRecords } from './retention.ts';
