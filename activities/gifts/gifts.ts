/** The gift catalogue of an organization, and redemption of gifts with loyalty points. */
import { conflict, isDuplicateKey, notFound, PlatformError } from '../errors';
import { newId } from '../ids';
import { debitPoints } from '../loyalty/ledger';
import { Gift, GIFT_FIELDS, Redemption, type GiftDoc, type GiftType, type RedemptionDoc } from './models';

export type GiftInput = Partial<Omit<GiftDoc, '_id' | 'gift_id' | 'organization_id' | 'created_at' | 'updated_at'>> & { gift_name: string; gift_type: GiftType };

export interface GiftView extends Omit<GiftDoc, '_id' | 'gift_id' | 'created_at' | 'updated_at'> {
  id: string;
  created_at: string;
  updated_at: string;
}

export function viewGift(g: GiftDoc): GiftView {
  const view: Record<string, unknown> = { id: g.gift_id, organization_id: g.organization_id };
  for (const f of GIFT_FIELDS) if (g[f] !== undefined && g[f] !== null) view[f] = g[f];
  view.created_at = g.created_at.toISOString();
  view.updated_at = g.updated_at.toISOString();
  return view as unknown as GiftView;
}

const giftNotFound = (id: string) => notFound(`Gift not found: ${id}`);

export async function createGift(organization_id: string, input: GiftInput): Promise<GiftView> {
  const gift_id = newId('gft');
  const doc = await Gift.create({ _id: gift_id, gift_id, organization_id, ...input });
  return viewGift(doc.toObject());
}

export async function getGift(organization_id: string, gift_id: string): Promise<GiftView> {
  const doc = await Gift.findOne({ _id: gift_id, organization_id }).lean<GiftDoc>();
  if (!doc) throw giftNotFound(gift_id);
  return viewGift(doc);
}

/** PUT semantics: the gift becomes exactly the given fields (an omitted field is removed). */
export async function replaceGift(organization_id: string, gift_id: string, input: GiftInput): Promise<GiftView> {
  const current = await Gift.findOne({ _id: gift_id, organization_id }).lean<GiftDoc>();
  if (!current) throw giftNotFound(gift_id);
  const unset: Record<string, 1> = {};
  for (const f of GIFT_FIELDS) if (input[f] === undefined && current[f] !== undefined) unset[f] = 1;
  const doc = await Gift.findOneAndUpdate({ _id: gift_id, organization_id }, { $set: input, ...(Object.keys(unset).length ? { $unset: unset } : {}) }, { new: true }).lean<GiftDoc>();
  if (!doc) throw giftNotFound(gift_id);
  return viewGift(doc);
}

export async function deleteGift(organization_id: string, gift_id: string): Promise<void> {
  const res = await Gift.deleteOne({ _id: gift_id, organization_id });
  if (!res.deletedCount) throw giftNotFound(gift_id);
}

export async function listGifts(organization_id: string, filter: { gift_type?: GiftType; country?: string }, page: number, limit: number) {
  const query: Record<string, string> = { organization_id };
  if (filter.gift_type) query.gift_type = filter.gift_type;
  if (filter.country) query.country = filter.country;
  const [docs, total] = await Promise.all([
    Gift.find(query).sort({ created_at: -1, gift_id: 1 }).skip((page - 1) * limit).limit(limit).lean<GiftDoc[]>(),
    Gift.countDocuments(query),
  ]);
  return { gifts: docs.map(viewGift), page, limit, total, has_more: page * limit < total };
}

export interface RedemptionView {
  id: string;
  gift_id: string;
  gift_name: string;
  user_id: string;
  points_spent: number;
  balance_after: number;
  status: 'completed';
  created_at: string;
}

const viewRedemption = (r: RedemptionDoc): RedemptionView => ({
  id: r.redemption_id,
  gift_id: r.gift_id,
  gift_name: r.gift_name,
  user_id: r.user_id,
  points_spent: r.points_spent,
  balance_after: r.balance_after,
  status: r.status,
  created_at: r.created_at.toISOString(),
});

/**
 * Debits the gift's points_value through the ledger (never below zero: 409 and nothing changes),
 * then records the redemption. With an idempotency key a retried request is charged once and
 * answers with the first redemption.
 */
export async function redeemGift(input: { organization_id: string; user_id: string; gift_id: string; idempotency_key?: string }): Promise<{ redemption: RedemptionView; duplicate: boolean }> {
  const operation_id = `redemption:${input.idempotency_key ? `${input.user_id}:${input.idempotency_key}` : newId('op')}`;
  const _id = `${input.organization_id}|${operation_id}`;
  // Without an idempotency key the operation id is new: nothing to look up.
  const previous = input.idempotency_key ? await Redemption.findById(_id).lean<RedemptionDoc>() : null;
  if (previous) {
    if (previous.gift_id !== input.gift_id) throw conflict('This idempotency key was already used to redeem another gift');
    return { redemption: viewRedemption(previous), duplicate: true };
  }
  const gift = await Gift.findOne({ _id: input.gift_id, organization_id: input.organization_id }).lean<GiftDoc>();
  if (!gift) throw giftNotFound(input.gift_id);
  if (!gift.points_value) throw new PlatformError(409, `Gift ${gift.gift_id} has no points_value and cannot be redeemed with points`);
  const debit = await debitPoints({
    organization_id: input.organization_id,
    user_id: input.user_id,
    points: gift.points_value,
    reason: 'redemption',
    operation_id,
    new_operation: !input.idempotency_key,
    description: `gift ${gift.gift_id}: ${gift.gift_name}`,
  });
  try {
    const doc = await Redemption.create({
      _id,
      redemption_id: newId('rdm'),
      operation_id,
      organization_id: input.organization_id,
      user_id: input.user_id,
      gift_id: gift.gift_id,
      gift_name: gift.gift_name,
      points_spent: -debit.entry.amount,
      balance_after: debit.entry.balance_after,
      ledger_entry_id: debit.entry.entry_id,
      status: 'completed',
    });
    return { redemption: viewRedemption(doc.toObject()), duplicate: debit.duplicate };
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    const first = await Redemption.findById(_id).lean<RedemptionDoc>();
    if (!first) throw err;
    return { redemption: viewRedemption(first), duplicate: true };
  }
}
