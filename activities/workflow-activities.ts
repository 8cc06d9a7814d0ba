/**
 * Every activity function the Temporal worker registers. Workflows import only the types of this
 * module; the worker wraps each function so a PlatformError (a client's fault) travels as a
 * non-retryable failure that the edge maps back to its status.
 */
export { processStoredImage, convertStoredHeic, discardUpload } from './images';
export { storeNormalizedResponse, purgeNormalizedResponses } from './responses';
export { purgeIdempotencyKeys } from './idempotency';
export { purgeAuditRecords } from './audit';
export { recordReferral, creditReferral, completeReferral } from './loyalty';
export { expireLapsedPoints } from './loyalty';
export { composeEmail, sendEmail } from './email';
export { runScheduledEvent } from './scheduler';
export { readReceipt, analyseScan, mirrorScan, creditScan, recordScanStarted, dropScanPlaceholder } from './scanning';
export { analyseFeedback } from './feedback';
export { transcribeStoredAudio } from './support';
export { answerQuestion, requireConversation } from './support';
export { processStoredDocument, thumbnailStoredFile } from './documents';
export { applyPaymentEvent } from './billing';
export { processStoredText } from './text';
export { reserveRedemption, fulfilRedemption, checkRedemption, settleRedemption, releaseRedemption, closeUnreserved, reviewRedemption, settleReviewed } from './gifts';
export { attemptDelivery, sweepEvents } from './events';
export { beginUserExport, exportUserPart, packUserExport, failUserExport, expireUserExport, beginUserErasure, stopUserRuns, eraseUserPart, purgeUserRuns, finishUserErasure } from './privacy';
