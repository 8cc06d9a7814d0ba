/** The loyalty component's surface: what the edge, the workflows and other components may use. */
export type { ActorLevel } from './awards.ts';
export { awardAction, clientRequestId } from './awards.ts';
export type { ExpiryRun } from './expiry.ts';
export { expireLapsedPoints } from './expiry.ts';
export { appliedRequest, creditPoints, debitPoints, getBalance, getHistory, refundDebit } from './ledger.ts';
export { whilePledged } from './pledges.ts';
export { LIMIT_PERIODS, MAX_LIMIT } from './policies.ts';
export { ledgerEventsSettled, publishPendingEntries } from './publish.ts';
export {
  completeReferral,
  creditReferral,
  lookupReferralCode,
  recordReferral,
  referralCodeOwner,
  referralQr,
} from './referrals.ts';
export { onScanCreditReversed, reverseCredit } from './reversal.ts';
export { getRules, putRules } from './rules.ts';
export { loyaltyTask } from './scheduled.ts';
export { loyaltyUserData } from './user-data.ts';
