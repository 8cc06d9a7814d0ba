/** The email component's surface: what the edge, the workflows and other components may use. */
export { EMAIL_TYPES } from './compose.ts';
export type { EmailRequest, SentEmail } from './email.ts';
export { composeEmail, sendEmail } from './email.ts';
export { purgeOutbox } from './outbox.ts';
export { checkRecipient } from './policy.ts';
export { mailOnce, periodDays, recipientOrOwner } from './reports.ts';
export { configureEmail, requestEmail, type RunSend } from './requests.ts';
export { emailTask } from './scheduled.ts';
export {
  listSuppressions,
  normalAddress,
  suppress,
  SUPPRESSION_REASONS,
  unsuppress,
  validLink,
} from './suppressions.ts';
export {
  createTemplate,
  deleteTemplate,
  getTemplate,
  listTemplates,
  MAX_TEMPLATES,
  previewTemplate,
  updateTemplate,
} from './templates.ts';
export { emailUserData } from './user-data.ts';
