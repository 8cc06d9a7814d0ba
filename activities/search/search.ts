/**
 * Catalogue search with history (`/carina`): one query over the organization's brands,
 * products, venues and gifts and the user's own processed texts and documents, recorded per user. History is
 * newest first; searching the same words again moves that entry to the top (one entry per
 * normalized query, its primary key); at most HISTORY_LIMIT entries per user are kept.
 */
import { createHash } from 'node:crypto';

import { jsonText } from '../core/db/index.ts';
import { notFound } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { handedIn } from '../core/wiring.ts';
import { deleteRecord, deleteUserRecords, saveRecord, type SearchRecordDoc, userRecords } from './store.ts';

/**
 * What a search reads, from the components that own it; the composition root hands them in
 * (workers/root.ts), so search imports none of them.
 */
export interface SearchSources {
  /** the organization's brands, products and venues */
  catalogue(organization_id: string): Promise<{
    brands: Array<{ id: unknown; name: string; description?: string | null }>;
    products: Array<{ id: unknown; name: string; brand_id?: unknown; barcode?: string | null }>;
    venues: Array<{ id: unknown; name: string; address?: string | null }>;
  }>;
  /** the organization's gift catalogue */
  gifts(
    organization_id: string,
  ): Promise<Array<{ id: unknown; gift_name: string; gift_type: string; points_value: number | null }>>;
  /** the user's processed texts */
  texts(organization_id: string, user_id: string): Promise<Array<{ _id: string; excerpt: string; file_path: string }>>;
  /** the user's processed documents (normalized responses of source `document`) */
  documents(
    organization_id: string,
    user_id: string,
  ): Promise<Array<{ response_id: string; conversation_id: string; metadata: unknown }>>;
}

const sources = handedIn<SearchSources>("search's sources");

export function configureSearch(s: SearchSources): void {
  sources.set(s);
}

const HISTORY_LIMIT = 100;
const PER_TYPE = 10;

const normalizeQuery = (q: string) =>
  q
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();

/** Share of the query's words found in the text (whole words or prefixes of 3+ letters). */
function score(terms: string[], ...texts: Array<string | null | undefined>): number {
  const words = normalizeQuery(texts.filter(Boolean).join(' ')).split(' ');
  const hits = terms.filter((t) => words.some((w) => w === t || (t.length >= 3 && w.startsWith(t)))).length;
  return hits / terms.length;
}

function top<T>(items: T[], scoreOf: (x: T) => number): Array<T & { score: number }> {
  return items
    .map((x) => ({ ...x, score: Math.round(scoreOf(x) * 1000) / 1000 }))
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score)
    .slice(0, PER_TYPE);
}

interface SearchData {
  query: string;
  brands: unknown[];
  products: unknown[];
  venues: unknown[];
  gifts: unknown[];
  texts: unknown[];
  documents: unknown[];
  total: number;
}

async function runSearch(organization_id: string, user_id: string, query: string): Promise<SearchData> {
  const terms = [
    ...new Set(
      normalizeQuery(query)
        .split(' ')
        .filter((t) => t.length >= 2),
    ),
  ];
  if (!terms.length)
    return { query, brands: [], products: [], venues: [], gifts: [], texts: [], documents: [], total: 0 };
  const from = sources.get();
  const [{ brands, products, venues }, gifts, texts, documents] = await Promise.all([
    from.catalogue(organization_id),
    from.gifts(organization_id),
    from.texts(organization_id, user_id),
    from.documents(organization_id, user_id),
  ]);
  const docs = documents.map((d) => {
    const m = d.metadata as {
      source_filename?: string;
      text_excerpt?: string;
      thumbnail_path?: string;
      original_path?: string;
      data?: { folder_structure?: { folder_name?: string; category?: string } };
    };
    return {
      response_id: d.response_id,
      filename: m.source_filename ?? '',
      folder: m.data?.folder_structure?.folder_name ?? null,
      category: m.data?.folder_structure?.category ?? null,
      thumbnail_path: m.thumbnail_path ?? null,
      excerpt: (m.text_excerpt ?? '').slice(0, 200),
      conversation_id: d.conversation_id,
    };
  });
  const digits = query.replace(/\D/g, '');
  const data: SearchData = {
    query,
    brands: top(
      brands.map((b) => ({ id: b.id, name: b.name, description: b.description })),
      (b) => score(terms, b.name, b.description),
    ),
    products: top(
      products.map((p) => ({ id: p.id, name: p.name, brand_id: p.brand_id, barcode: p.barcode })),
      (p) => (digits.length >= 8 && p.barcode === digits ? 1 : score(terms, p.name)),
    ),
    venues: top(
      venues.map((v) => ({ id: v.id, name: v.name, address: v.address })),
      (v) => score(terms, v.name, v.address),
    ),
    gifts: top(gifts, (g) => score(terms, g.gift_name, g.gift_type.replace(/_/g, ' '))),
    texts: top(
      texts.map((t) => ({ embedding_id: t._id, file_path: t.file_path, excerpt: t.excerpt })),
      (t) => score(terms, t.excerpt),
    ),
    documents: top(docs, (d) => score(terms, d.filename.replace(/[._-]+/g, ' '), d.folder ?? '', d.excerpt)),
    total: 0,
  };
  data.total =
    data.brands.length +
    data.products.length +
    data.venues.length +
    data.gifts.length +
    data.texts.length +
    data.documents.length;
  return data;
}

export interface SearchRecordView {
  id: string;
  idp_id: string;
  organization_id: string;
  query: string;
  results: { search_data: SearchData };
  created_at: string;
}

const searchData = jsonText<SearchData>(() => ({
  query: '',
  brands: [],
  products: [],
  venues: [],
  gifts: [],
  texts: [],
  documents: [],
  total: 0,
}));

const view = (r: SearchRecordDoc): SearchRecordView => ({
  id: r.id,
  idp_id: r.idp_id,
  organization_id: r.organization_id,
  query: r.query,
  results: { search_data: searchData.decode(r.search_data_json) },
  created_at: new Date(r.created_at).toISOString(),
});

/** Searches and records the query; the same query again replaces its entry at the top. */
export async function searchAndRecord(input: {
  organization_id: string;
  user_id: string;
  idp_id: string;
  query: string;
}): Promise<SearchRecordView> {
  const data = await runSearch(input.organization_id, input.user_id, input.query);
  const key = `${input.organization_id}|${input.user_id}|${createHash('sha256').update(normalizeQuery(input.query)).digest('hex').slice(0, 32)}`;
  const doc: SearchRecordDoc = {
    _id: key,
    id: newId('srch', 12),
    organization_id: input.organization_id,
    user_id: input.user_id,
    idp_id: input.idp_id,
    query: input.query,
    search_data_json: searchData.encode(data),
    created_at: new Date(),
  };
  await saveRecord(doc, HISTORY_LIMIT);
  return view(doc);
}

export async function searchHistory(input: {
  organization_id: string;
  user_id: string;
  from?: Date;
  to?: Date;
}): Promise<SearchRecordView[]> {
  return (
    await userRecords(input.organization_id, input.user_id, { from: input.from, to: input.to }, HISTORY_LIMIT)
  ).map(view);
}

export async function deleteSearchRecord(organization_id: string, user_id: string, id: string): Promise<void> {
  if (!(await deleteRecord(organization_id, user_id, id))) throw notFound('Search record not found');
}

export async function clearSearchHistory(organization_id: string, user_id: string): Promise<number> {
  return deleteUserRecords(organization_id, user_id);
}
