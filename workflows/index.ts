/** Every workflow the worker runs (this file is the worker's workflowsPath). */
export { audioQaWorkflow } from './audio-qa.ts';
export { generateThumbnailWorkflow, processDocumentWorkflow } from './documents.ts';
export { emailWorkflow } from './email.ts';
export { eventsMaintenanceWorkflow } from './events-maintenance.ts';
export { feedbackAnalysisWorkflow } from './feedback.ts';
export { convertHeicWorkflow, processImageWorkflow } from './images.ts';
export { loyaltyMaintenanceWorkflow } from './loyalty-maintenance.ts';
export { paymentEventWorkflow } from './payments.ts';
export { redemptionWorkflow } from './redemption.ts';
export { referralWorkflow } from './referrals.ts';
export { retentionWorkflow } from './retention.ts';
export { scheduledEventWorkflow } from './scheduler.ts';
export { processTextWorkflow } from './text.ts';
export { ticketScanWorkflow } from './ticket-scan.ts';
export { userErasureWorkflow } from './user-erasure.ts';
export { userExportWorkflow } from './user-export.ts';
export { webhookDeliveryWorkflow } from './webhook-delivery.ts';
export { webhookEndpointWorkflow } from './webhook-endpoint.ts';
