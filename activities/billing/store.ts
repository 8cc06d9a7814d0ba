/**
 * Billing's data: packages, purchases, credits, usage, refunds and provider events. The only
 * file that reads or writes billing's models; the LLM component reads usage through
 * `usageTotals` and `tokenUsage` (billing.ts), never the model. Whatever must count once has an
 * `_id` of its own; how purchases move and what is read how: docs/storage.md, "Billing".
 */
import { byId, insertOnce } from '../core/db/index.ts';
import {
  PaymentEvent,
  type PaymentEventDoc,
  Purchase,
  type PurchaseDoc,
  type PurchaseStatus,
  TokenCredit,
  type TokenCreditDoc,
  TokenPackage,
  type TokenPackageDoc,
  TokenRefund,
  type TokenRefundDoc,
  TokenUsage,
  type TokenUsageDoc,
} from './models.ts';

export type { PaymentEventDoc, PurchaseDoc, TokenCreditDoc, TokenPackageDoc, TokenRefundDoc, TokenUsageDoc };

// ---- packages

/** Throws the duplicate-key error when the id is taken. */
export async function insertPackage(doc: Omit<TokenPackageDoc, 'created_at' | 'updated_at'>): Promise<TokenPackageDoc> {
  return (await TokenPackage.create(doc)).toObject();
}

export async function packagesByPrice(): Promise<TokenPackageDoc[]> {
  return TokenPackage.find({}).sort({ price: 1, _id: 1 }).lean<TokenPackageDoc[]>();
}

export const packageDoc = (id: string) => byId<TokenPackageDoc>(TokenPackage, id);

// ---- purchases

/** Inserts the purchase; false when one with the same transaction id exists. */
export async function insertPurchase(doc: Omit<PurchaseDoc, 'created_at' | 'updated_at'>): Promise<boolean> {
  return insertOnce(Purchase, doc);
}

export const purchaseDoc = (id: string) => byId<PurchaseDoc>(Purchase, id);

/** The purchase a refund event names by its payment intent (an index on both servers; a rare event). */
export async function purchaseByPaymentIntent(payment_intent_id: string): Promise<PurchaseDoc | null> {
  return Purchase.findOne({ payment_intent_id }).lean<PurchaseDoc>();
}

/** Moves a purchase to `status` when it is in one of `from`. */
export async function movePurchase(
  id: string,
  from: string[],
  status: PurchaseStatus,
  extra: Partial<PurchaseDoc> = {},
): Promise<void> {
  await Purchase.updateOne({ _id: id, status: { $in: from } }, { $set: { status, ...extra } });
}

// ---- credits, usage, refunds

/** The credit, written once: a second writer gets the first one's. */
export async function insertCreditOnce(doc: Omit<TokenCreditDoc, 'created_at'>): Promise<TokenCreditDoc> {
  await insertOnce(TokenCredit, doc);
  return (await byId<TokenCreditDoc>(TokenCredit, doc._id))!;
}

export const creditDoc = (id: string) => byId<TokenCreditDoc>(TokenCredit, id);

/** Records a usage once per `_id` (the same call recorded twice counts once). */
export async function insertUsageOnce(doc: Omit<TokenUsageDoc, 'created_at'>): Promise<void> {
  await insertOnce(TokenUsage, doc);
}

export async function insertRefundOnce(doc: Omit<TokenRefundDoc, 'created_at'>): Promise<void> {
  await insertOnce(TokenRefund, doc);
}

/** A user's credits, usage and refunds (each through its (organization_id, user_id) index). */
export async function tokenLedgerOf(organization_id: string, user_id: string) {
  const [credits, usage, refunds] = await Promise.all([
    TokenCredit.find({ organization_id, user_id }).lean<TokenCreditDoc[]>(),
    TokenUsage.find({ organization_id, user_id }).lean<TokenUsageDoc[]>(),
    TokenRefund.find({ organization_id, user_id }).lean<TokenRefundDoc[]>(),
  ]);
  return { credits, usage, refunds };
}

/** Tokens used by every model call recorded, in all, per agent and per organization (the system overview). */
export async function usageTotals(): Promise<{
  total_tokens: number;
  calls: number;
  by_agent: Record<string, number>;
  by_organization: Record<string, number>;
}> {
  const usage = await TokenUsage.find({}, { agent: 1, organization_id: 1, tokens: 1 }).lean<
    Pick<TokenUsageDoc, 'agent' | 'organization_id' | 'tokens'>[]
  >();
  const by_agent: Record<string, number> = {};
  const by_organization: Record<string, number> = {};
  for (const u of usage) {
    by_agent[u.agent] = (by_agent[u.agent] ?? 0) + u.tokens;
    by_organization[u.organization_id] = (by_organization[u.organization_id] ?? 0) + u.tokens;
  }
  return { total_tokens: usage.reduce((s, u) => s + u.tokens, 0), calls: usage.length, by_agent, by_organization };
}

// ---- provider events

export const paymentEventDoc = (id: string) => byId<PaymentEventDoc>(PaymentEvent, id);

export async function insertPaymentEventOnce(doc: Omit<PaymentEventDoc, 'received_at'>): Promise<void> {
  await insertOnce(PaymentEvent, doc);
}

// ---- one person's data (user-data.ts)

/** The user's purchases (index {organization_id, user_id}). */
export const purchasesOfUser = (organization_id: string, user_id: string) =>
  Purchase.find({ organization_id, user_id }).sort({ created_at: 1 }).lean<PurchaseDoc[]>();

/**
 * Hands the user's purchases, credits, refunds and usage to the tombstone (each through its
 * {organization_id, user_id} index; the records' own dates are left as they were). Answers how
 * many of each changed: a second run changes nothing.
 */
export async function tombstoneTokenRecords(organization_id: string, user_id: string, tombstone: string) {
  const filter = { organization_id, user_id };
  const update = { $set: { user_id: tombstone } };
  const [purchases, credits, refunds, usage] = await Promise.all([
    Purchase.updateMany(filter, update, { timestamps: false }),
    TokenCredit.updateMany(filter, update, { timestamps: false }),
    TokenRefund.updateMany(filter, update, { timestamps: false }),
    TokenUsage.updateMany(filter, update, { timestamps: false }),
  ]);
  return {
    purchases: purchases.modifiedCount,
    credits: credits.modifiedCount,
    refunds: refunds.modifiedCount,
    usage: usage.modifiedCount,
  };
}
