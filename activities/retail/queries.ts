/** Query pieces the retail reads share: a case-insensitive name filter and the 404. */
import { notFound } from '../core/errors.ts';

/** Every unknown or other organization's retail item answers the same words, whatever its kind. */
export const missing = () => notFound('Resource not found');

export type { Page } from './store.ts';

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export const nameFilter = (q?: string) => (q ? { name: { $regex: escapeRegex(q), $options: 'i' } } : {});
