/** The gift catalogue of an organization (redemption: redemptions.ts). */
import { noteChange } from '../core/audit-note.ts';
import { notFound } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { GIFT_FIELDS, type GiftType, PROVIDER_GIFT_FIELDS } from './constants.ts';
import type { GiftDoc } from './models.ts';
import { findGift, insertGift, pageGifts, removeGift, updateGift } from './store.ts';

export type GiftInput = Partial<Omit<GiftDoc, '_id' | 'gift_id' | 'organization_id' | 'created_at' | 'updated_at'>> & {
  gift_name: string;
  gift_type: GiftType;
};

export interface GiftView extends Omit<GiftDoc, '_id' | 'gift_id' | 'created_at' | 'updated_at'> {
  id: string;
  created_at: string;
  updated_at: string;
}

function viewGift(g: GiftDoc): GiftView {
  const view: Record<string, unknown> = { id: g.gift_id, organization_id: g.organization_id };
  for (const f of [...GIFT_FIELDS, ...PROVIDER_GIFT_FIELDS]) if (g[f] !== undefined && g[f] !== null) view[f] = g[f];
  view.created_at = g.created_at.toISOString();
  view.updated_at = g.updated_at.toISOString();
  return view as unknown as GiftView;
}

export const giftNotFound = (id: string) => notFound(`Gift not found: ${id}`);

export async function createGift(organization_id: string, input: GiftInput): Promise<GiftView> {
  const gift_id = newId('gft');
  return viewGift(await insertGift({ _id: gift_id, gift_id, organization_id, ...input }));
}

export async function getGift(organization_id: string, gift_id: string): Promise<GiftView> {
  const doc = await findGift(organization_id, gift_id);
  if (!doc) throw giftNotFound(gift_id);
  return viewGift(doc);
}

/** PUT semantics: the gift becomes exactly the given fields (an omitted field is removed). */
export async function replaceGift(organization_id: string, gift_id: string, input: GiftInput): Promise<GiftView> {
  const current = await findGift(organization_id, gift_id);
  if (!current) throw giftNotFound(gift_id);
  const unset = GIFT_FIELDS.filter((f) => input[f] === undefined && current[f] !== undefined);
  const doc = await updateGift(organization_id, gift_id, input, unset);
  if (!doc) throw giftNotFound(gift_id);
  for (const f of GIFT_FIELDS)
    if (JSON.stringify(current[f] ?? null) !== JSON.stringify(doc[f] ?? null))
      noteChange(f, current[f] ?? null, doc[f] ?? null);
  return viewGift(doc);
}

export async function deleteGift(organization_id: string, gift_id: string): Promise<void> {
  if (!(await removeGift(organization_id, gift_id))) throw giftNotFound(gift_id);
}

export async function listGifts(
  organization_id: string,
  filter: { gift_type?: GiftType; country?: string },
  page: number,
  limit: number,
) {
  const { docs, total } = await pageGifts(organization_id, filter, page, limit);
  return { gifts: docs.map(viewGift), page, limit, total, has_more: page * limit < total };
}
