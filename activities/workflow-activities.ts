/**
 * activities/ holds the components, one folder each (the name is the card's: the code that uses
 * MongoDB and MinIO). They are called by workflows, as Temporal activities, and by the edge
 * alike; each folder's index.ts is its surface. activities/core/ is the room they share,
 * activities/adapters/ the vendor adapters (docs/architecture.md).
 *
 * This file is the one list of what the worker registers as Temporal activities. Workflows import
 * only the types of this module; the worker wraps each function so a PlatformError (a client's
 * fault) travels as a non-retryable failure that the edge maps back to its status.
 */
export { purgeAuditRecords } from './audit/index.ts';
export { applyPaymentEvent } from './billing/index.ts';
export { processStoredDocument, thumbnailStoredFile } from './documents/index.ts';
export { purgeOutbox } from './email/index.ts';
export { composeEmail, sendEmail } from './email/index.ts';
export { attemptDelivery, beforeSleep, deliverDue, sweepEvents } from './events/index.ts';
export { analyseFeedback } from './feedback/index.ts';
export {
  checkRedemption,
  closeUnreserved,
  fulfilRedemption,
  releaseRedemption,
  reserveRedemption,
  reviewRedemption,
  settleRedemption,
  settleReviewed,
  syncScheduledCatalogues,
} from './gifts/index.ts';
export { purgeIdempotencyKeys } from './idempotency/index.ts';
export { convertStoredHeic, discardUpload, processStoredImage } from './images/index.ts';
export { completeReferral, creditReferral, recordReferral } from './loyalty/index.ts';
export { expireLapsedPoints, reviewTiers } from './loyalty/index.ts';
export {
  beginUserErasure,
  beginUserExport,
  eraseUserPart,
  expireUserExport,
  exportUserPart,
  failUserExport,
  finishUserErasure,
  packUserExport,
  purgeUserRuns,
  stopUserRuns,
  takeErasurePlace,
} from './privacy/index.ts';
export { purgeNormalizedResponses, storeNormalizedResponse } from './responses/index.ts';
export {
  analyseScan,
  creditScan,
  dropScanPlaceholder,
  mirrorScan,
  readReceipt,
  recordScanStarted,
} from './scanning/index.ts';
export { runScheduledEvent } from './scheduler/index.ts';
export { transcribeStoredAudio } from './support/index.ts';
export { answerQuestion, requireConversation } from './support/index.ts';
export { processStoredText } from './text/index.ts';
