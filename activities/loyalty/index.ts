/** The loyalty component's surface: what the edge, the workflows and other components may use. */
export { expireLapsedPoints } from './expiry';
export type { ExpiryRun } from './expiry';
export { appliedRequest, creditPoints, debitPoints, getBalance, getHistory, refundDebit } from './ledger';
export { LIMIT_PERIODS, MAX_LIMIT } from './policies';
export { completeReferral, creditReferral, lookupReferralCode, recordReferral, referralCodeOwner, referralQr } from './referrals';
export { reverseOperation } from './reversal';
export { awardAction, clientRequestId, getRules, putRules } from './rules';
export type { ActorLevel } from './rules';
export { loyaltyTask } from './scheduled';
