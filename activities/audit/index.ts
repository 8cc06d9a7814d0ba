/** The audit trail's surface: administrative changes, hash-chained per organization (docs/components/audit.md). */
export { ACTOR_LEVELS, AUDIT_OUTCOMES, BREAK_REASONS, MASK, type ActorLevel, type AuditOutcome, type BreakReason } from './constants';
export { bodyChanges, isSecretName, masked, mergeChanges, type Changes } from './mask';
export { listAuditRecords, recordChange, type AuditEntry, type AuditRecordView } from './records';
export { beginIntent, dropIntent, settleStaleIntents } from './intents';
export { verifyChain, type VerifyResult } from './chain';
export { purgeAuditRecords, type AuditRetentionResult } from './retention';
