/** The audit trail's surface: administrative changes, hash-chained per organization (docs/components/audit.md). */
export {
  ACTOR_LEVELS,
  AUDIT_OUTCOMES,
  BREAK_REASONS,
  MASK,
  PERSONAL,
  UNKNOWN_USER,
  textLength,
  type ActorLevel,
  type AuditOutcome,
  type BreakReason,
} from './constants.ts';
export {
  bodyChanges,
  isPlatformId,
  isSecretName,
  isUserReferenceName,
  masked,
  mergeChanges,
  recordedUser,
  type ChangePolicy,
  type Changes,
  type JsonSchema,
} from './mask.ts';
export { listAuditRecords, recordChange, type AuditEntry, type AuditRecordView } from './records.ts';
export { beginIntent, dropIntent, newIntentId, settleStaleIntents } from './intents.ts';
export { verifyChain, type VerifyResult } from './chain.ts';
export { purgeAuditRecords, type AuditRetentionResult } from './retention.ts';
