/** The gifts component's surface: what the edge, the workflows and other components may use. */
export { syncCatalogue, syncScheduledCatalogues } from './catalogue.ts';
export type { FulfilAnswer, RedemptionInput, RedemptionState, ReviewCheck, Settlement } from './fulfilment.ts';
export {
  checkRedemption,
  closeUnreserved,
  fulfilRedemption,
  releaseRedemption,
  reserveRedemption,
  reviewRedemption,
  settleRedemption,
  settleReviewed,
} from './fulfilment.ts';
export { giftSettingsOf, providerBalance, putGiftSettings, setSandboxBalance } from './funding.ts';
export { createGift, deleteGift, getGift, listGifts, replaceGift } from './gifts.ts';
export { getRedemption, listRedemptions } from './redemptions.ts';
export type { RedemptionRuns } from './runs.ts';
export { configureGifts, redeemGift, settleInReview } from './runs.ts';
export { giftsForSearch } from './store.ts';
export { giftsUserData } from './user-data.ts';
