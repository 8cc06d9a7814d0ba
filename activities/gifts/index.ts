/** The gifts component's surface: what the edge, the workflows and other components may use. */
export { checkRedemption, closeUnreserved, fulfilRedemption, releaseRedemption, reserveRedemption, reviewRedemption, settleRedemption, settleReviewed } from './fulfilment';
export type { FulfilAnswer, RedemptionInput, RedemptionState, ReviewCheck, Settlement } from './fulfilment';
export { createGift, deleteGift, getGift, listGifts, replaceGift } from './gifts';
export type { RedemptionDoc } from './models';
export { getRedemption, listRedemptions, prepareRedemption, viewRedemption } from './redemptions';
export { findRedemption, giftsForSearch } from './store';
