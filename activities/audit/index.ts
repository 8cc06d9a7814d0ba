/** The audit trail's surface: administrative changes, hash-chained per organization (docs/components/audit.md). */
export { verifyChain, type VerifyResult } from './chain.ts';
export {
  ACTOR_LEVELS,
  type ActorLevel,
  AUDIT_OUTCOMES,
  type AuditOutcome,
  BREAK_REASONS,
  type BreakReason,
  MASK,
  PERSONAL,
  textLength,
  UNKNOWN_USER,
} from './constants.ts';
export { beginIntent, dropIntent, newIntentId, settleStaleIntents } from './intents.ts';
export {
  bodyChanges,
  type ChangePolicy,
  type Changes,
  isPlatformId,
  isSecretName,
  isUserReferenceName,
  type JsonSchema,
  masked,
  mergeChanges,
  recordedUser,
} from './mask.ts';
export { type AuditEntry, type AuditRecordView, listAuditRecords, recordChange } from './records.ts';
export { type AuditRetentionResult, purgeAuditRecords } from './retention.ts';
