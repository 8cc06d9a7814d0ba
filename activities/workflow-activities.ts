/**
 * Every activity function the Temporal worker registers. Workflows import only the types of this
 * module; the worker wraps each function so a PlatformError (a client's fault) travels as a
 * non-retryable failure that the edge maps back to its status.
 */
export { processStoredImage, convertStoredHeic, discardUpload } from './images/images';
export { storeNormalizedResponse, purgeNormalizedResponses } from './responses/normalized';
export { purgeIdempotencyKeys } from './idempotency/keys';
export { recordReferral, creditReferral, completeReferral } from './loyalty/referrals';
export { expireLapsedPoints } from './loyalty/expiry';
export { composeEmail, sendEmail } from './email/email';
export { runScheduledEvent } from './scheduler/events';
export { readReceipt, analyseScan, mirrorScan, creditScan } from './scanning/scans';
export { analyseFeedback } from './feedback/feedback';
export { transcribeStoredAudio } from './support/audio';
export { answerQuestion, requireConversation } from './support/support';
export { processStoredDocument, thumbnailStoredFile } from './documents/documents';
export { applyPaymentEvent } from './billing/billing';
export { processStoredText } from './text/text';
export { reserveRedemption, fulfilRedemption, checkRedemption, settleRedemption, releaseRedemption, closeUnreserved, reviewRedemption, settleReviewed } from './gifts/fulfilment';
