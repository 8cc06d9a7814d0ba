/** Every workflow the worker runs (this file is the worker's workflowsPath). */
export { processImageWorkflow, convertHeicWorkflow } from './images';
export { referralWorkflow } from './referrals';
export { retentionWorkflow } from './retention';
export { loyaltyMaintenanceWorkflow } from './loyalty-maintenance';
export { emailWorkflow } from './email';
export { scheduledEventWorkflow } from './scheduler';
export { ticketScanWorkflow } from './ticket-scan';
export { feedbackAnalysisWorkflow } from './feedback';
export { audioQaWorkflow } from './audio-qa';
export { processDocumentWorkflow, generateThumbnailWorkflow } from './documents';
export { paymentEventWorkflow } from './payments';
export { processTextWorkflow } from './text';
export { redemptionWorkflow } from './redemption';
export { webhookDeliveryWorkflow } from './webhook-delivery';
export { eventsMaintenanceWorkflow } from './events-maintenance';
export { userExportWorkflow } from './user-export';
export { userErasureWorkflow } from './user-erasure';
