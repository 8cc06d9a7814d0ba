/** The billing component's surface: what the edge, the workflows and other components may use. */
export type { PaymentEventInput, StartPaymentEvent } from './billing.ts';
export {
  applyPaymentEvent,
  configureBilling,
  createPackage,
  listPackages,
  PaymentRequired,
  purchaseTokens,
  receivePaymentEvent,
  recordUsage,
  tokenUsage,
  usageTotals,
} from './billing.ts';
export { billingTask } from './scheduled.ts';
export { billingUserData } from './user-data.ts';
