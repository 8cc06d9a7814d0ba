/** The loyalty component's surface: what the edge, the workflows and other components may use. */
export { awardAction, clientRequestId } from './awards';
export type { ActorLevel } from './awards';
export { expireLapsedPoints } from './expiry';
export type { ExpiryRun } from './expiry';
export { appliedRequest, creditPoints, debitPoints, getBalance, getHistory, refundDebit } from './ledger';
export { LIMIT_PERIODS, MAX_LIMIT } from './policies';
export { completeReferral, creditReferral, lookupReferralCode, recordReferral, referralCodeOwner, referralQr } from './referrals';
export { onScanCreditReversed, reverseOperation } from './reversal';
export type { ReversalMark, ScanReversedListener } from './reversal';
export { getRules, putRules } from './rules';
export { loyaltyTask } from './scheduled';
export { ledgerEventsSettled, publishPendingEntries } from './events';
export { loyaltyUserData } from './user-data';
