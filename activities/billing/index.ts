/** The billing component's surface: what the edge, the workflows and other components may use. */
export {
  PaymentRequired,
  applyPaymentEvent,
  createPackage,
  listPackages,
  purchaseOwner,
  purchaseTokens,
  recordUsage,
  tokenUsage,
  usageTotals,
} from './billing.ts';
export type { PaymentEventInput } from './billing.ts';
export { billingTask } from './scheduled.ts';
export { billingUserData } from './user-data.ts';
