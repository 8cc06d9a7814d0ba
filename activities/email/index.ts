/** The email component's surface: what the edge, the workflows and other components may use. */
export { EMAIL_TYPES, notificationContent } from './compose';
export { composeEmail, sendEmail } from './email';
export type { EmailRequest, SentEmail } from './email';
export { checkFreeText, checkRecipient, reserveSend } from './policy';
export { mailOnce, periodDays, recipientOrOwner } from './reports';
export type { Mail } from './reports';
export { emailTask } from './scheduled';
export { emailUserData } from './user-data';
