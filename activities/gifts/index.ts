/** The gifts component's surface: what the edge, the workflows and other components may use. */
export { checkRedemption, closeUnreserved, fulfilRedemption, releaseRedemption, reserveRedemption, reviewRedemption, settleRedemption, settleReviewed } from './fulfilment';
export type { FulfilAnswer, RedemptionInput, RedemptionState, ReviewCheck, Settlement } from './fulfilment';
export { createGift, deleteGift, getGift, listGifts, replaceGift } from './gifts';
export { getRedemption, listRedemptions } from './redemptions';
export { configureGifts, redeemGift, settleInReview } from './runs';
export type { RedemptionRuns } from './runs';
export { giftsForSearch } from './store';
export { giftsUserData } from './user-data';
