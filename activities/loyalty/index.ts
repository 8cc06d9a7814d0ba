/** The loyalty component's surface: what the edge, the workflows and other components may use. */
export type { ActorLevel } from './awards.ts';
export { awardAction, clientRequestId, evaluateAward } from './awards.ts';
export { isTimeZone } from './calendar.ts';
export { campaignStatsSettled } from './campaign-stats.ts';
export {
  campaignReport,
  createCampaign,
  getCampaign,
  listCampaigns,
  MAX_LIVE_CAMPAIGNS,
  patchCampaign,
  removeCampaign,
} from './campaigns.ts';
export type { ExpiryRun } from './expiry.ts';
export { expireLapsedPoints } from './expiry.ts';
export { appliedRequest, creditPoints, debitPoints, getBalance, getHistory, refundDebit } from './ledger.ts';
export { isCurrency, ROUNDINGS } from './money.ts';
export { whilePledged } from './pledges.ts';
export { LIMIT_PERIODS, MAX_LIMIT } from './policies.ts';
export { ledgerEventsSettled, publishPendingEntries } from './publish.ts';
export { receiptEarning } from './receipt-earning.ts';
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
export {
  getTierProgram,
  MAX_TIERS,
  memberTierView,
  putTierProgram,
  reviewTiers,
  setMemberAttributesOf,
  setTierByHand,
  tierHistory,
  type TierReview,
} from './tiers.ts';
export { loyaltyUserData } from './user-data.ts';
