/** The billing component's surface: what the edge, the workflows and other components may use. */
export { PaymentRequired, applyPaymentEvent, createPackage, listPackages, purchaseOwner, purchaseTokens, recordUsage, tokenUsage, usageTotals } from './billing';
export type { PaymentEventInput } from './billing';
export { billingTask } from './scheduled';
export { billingUserData } from './user-data';
