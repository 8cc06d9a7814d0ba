/** Query pieces the retail reads share: a case-insensitive name filter, id-ordered pages, the 404. */
import type { Model } from 'mongoose';
import { notFound } from '../errors';

/** Every unknown or other organization's retail item answers the same words, whatever its kind. */
export const missing = () => notFound('Resource not found');

export interface Page {
  page: number;
  limit: number;
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export const nameFilter = (q?: string) => (q ? { name: { $regex: escapeRegex(q), $options: 'i' } } : {});

export async function paged<D, V>(model: Model<D>, filter: Record<string, unknown>, page: Page, view: (d: D) => V, projection?: Record<string, 0>) {
  const [docs, total] = await Promise.all([
    model.find(filter, projection).sort({ _id: 1 }).skip((page.page - 1) * page.limit).limit(page.limit).lean<D[]>(),
    model.countDocuments(filter),
  ]);
  return { items: docs.map(view), page: page.page, limit: page.limit, total, has_more: page.page * page.limit < total };
}
