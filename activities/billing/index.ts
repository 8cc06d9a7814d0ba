/** The billing component's surface: what the edge, the workflows and other components may use. */
export type { PaymentEventInput } from './billing.ts';
export {
  applyPaymentEvent,
  createPackage,
  listPackages,
  PaymentRequired,
  purchaseOwner,
  purchaseTokens,
  recordUsage,
  tokenUsage,
  usageTotals,
} from './billing.ts';
export { billingTask } from './scheduled.ts';
export { billingUserData } from './user-data.ts';
