/** Every workflow the worker runs (this file is the worker's workflowsPath). */
export { processImageWorkflow, convertHeicWorkflow } from './images.ts';
export { referralWorkflow } from './referrals.ts';
export { retentionWorkflow } from './retention.ts';
export { loyaltyMaintenanceWorkflow } from './loyalty-maintenance.ts';
export { emailWorkflow } from './email.ts';
export { scheduledEventWorkflow } from './scheduler.ts';
export { ticketScanWorkflow } from './ticket-scan.ts';
export { feedbackAnalysisWorkflow } from './feedback.ts';
export { audioQaWorkflow } from './audio-qa.ts';
export { processDocumentWorkflow, generateThumbnailWorkflow } from './documents.ts';
export { paymentEventWorkflow } from './payments.ts';
export { processTextWorkflow } from './text.ts';
export { redemptionWorkflow } from './redemption.ts';
export { webhookDeliveryWorkflow } from './webhook-delivery.ts';
export { eventsMaintenanceWorkflow } from './events-maintenance.ts';
export { userExportWorkflow } from './user-export.ts';
export { userErasureWorkflow } from './user-erasure.ts';
