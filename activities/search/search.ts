/**
 * Catalogue search with history (`/carina`): one query over the organization's brands,
 * products, venues and gifts and the user's own processed texts and documents, recorded per user. History is
 * newest first; searching the same words again moves that entry to the top (one entry per
 * normalized query, its primary key); at most HISTORY_LIMIT entries per user are kept.
 */
import { createHash } from 'node:crypto';
import mongoose, { Schema } from 'mongoose';
import { notFound } from '../errors';
import { newId } from '../ids';
import { Gift, type GiftDoc } from '../gifts/models';
import { Brand, Product, type BrandDoc, type ProductDoc } from '../retail/models';
import { organizationVenues } from '../retail/venues';
import { TextEmbedding } from '../text/text';
import { NormalizedResponse, type NormalizedDoc } from '../responses/normalized';

export const HISTORY_LIMIT = 100;
const PER_TYPE = 10;

const searchRecordSchema = new Schema(
  {
    /** `<organization_id>|<user_id>|<sha256 of the normalized query>` */
    _id: { type: String, required: true },
    id: { type: String, required: true, unique: true },
    organization_id: { type: String, required: true },
    user_id: { type: String, required: true },
    idp_id: { type: String, required: true },
    query: { type: String, required: true },
    /** JSON text of the results (FerretDB-safe) */
    search_data_json: { type: String, required: true },
    created_at: { type: Date, required: true },
  },
  { versionKey: false },
);
searchRecordSchema.index({ organization_id: 1, user_id: 1, created_at: -1 });

interface SearchRecordDoc {
  _id: string;
  id: string;
  organization_id: string;
  user_id: string;
  idp_id: string;
  query: string;
  search_data_json: string;
  created_at: Date;
}

const SearchRecord = mongoose.model<SearchRecordDoc>('SearchRecord', searchRecordSchema, 'search_history');

export const normalizeQuery = (q: string) => q.toLowerCase().normalize('NFKD').replace(/[\u0300-\u036f]/g, '').replace(/[^a-z0-9]+/g, ' ').trim();

/** Share of the query's words found in the text (whole words or prefixes of 3+ letters). */
function score(terms: string[], ...texts: Array<string | undefined>): number {
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

export interface SearchData {
  query: string;
  brands: unknown[];
  products: unknown[];
  venues: unknown[];
  gifts: unknown[];
  texts: unknown[];
  documents: unknown[];
  total: number;
}

export async function runSearch(organization_id: string, user_id: string, query: string): Promise<SearchData> {
  const terms = [...new Set(normalizeQuery(query).split(' ').filter((t) => t.length >= 2))];
  if (!terms.length) return { query, brands: [], products: [], venues: [], gifts: [], texts: [], documents: [], total: 0 };
  const [brands, products, venues, gifts, texts, documents] = await Promise.all([
    Brand.find({ organization_id }).lean<BrandDoc[]>(),
    Product.find({ organization_id }).lean<ProductDoc[]>(),
    organizationVenues(organization_id),
    Gift.find({ organization_id }).lean<GiftDoc[]>(),
    TextEmbedding.find({ organization_id, user_id }, { excerpt: 1, file_path: 1, created_at: 1 }).lean<Array<{ _id: string; excerpt: string; file_path: string; created_at: Date }>>(),
    NormalizedResponse.find({ organization_id, user_id, source: 'document' }).lean<NormalizedDoc[]>(),
  ]);
  const docs = documents.map((d) => {
    const m = JSON.parse(d.metadata_json) as { source_filename?: string; text_excerpt?: string; thumbnail_path?: string; original_path?: string; data?: { folder_structure?: { folder_name?: string; category?: string } } };
    return { response_id: d.response_id, filename: m.source_filename ?? '', folder: m.data?.folder_structure?.folder_name ?? null, category: m.data?.folder_structure?.category ?? null, thumbnail_path: m.thumbnail_path ?? null, excerpt: (m.text_excerpt ?? '').slice(0, 200), conversation_id: d.conversation_id };
  });
  const digits = query.replace(/\D/g, '');
  const data: SearchData = {
    query,
    brands: top(brands.map((b) => ({ id: b._id, name: b.name, description: b.description })), (b) => score(terms, b.name, b.description)),
    products: top(products.map((p) => ({ id: p._id, name: p.name, brand_id: p.brand_id, barcode: p.barcode })), (p) => (digits.length >= 8 && p.barcode === digits ? 1 : score(terms, p.name))),
    venues: top(venues.map((v) => ({ id: v.id, name: v.name, address: v.address })), (v) => score(terms, v.name, v.address)),
    gifts: top(gifts.map((g) => ({ id: g.gift_id, gift_name: g.gift_name, gift_type: g.gift_type, points_value: g.points_value ?? null })), (g) => score(terms, g.gift_name, g.gift_type.replace(/_/g, ' '))),
    texts: top(texts.map((t) => ({ embedding_id: t._id, file_path: t.file_path, excerpt: t.excerpt })), (t) => score(terms, t.excerpt)),
    documents: top(docs, (d) => score(terms, d.filename.replace(/[._-]+/g, ' '), d.folder ?? '', d.excerpt)),
    total: 0,
  };
  data.total = data.brands.length + data.products.length + data.venues.length + data.gifts.length + data.texts.length + data.documents.length;
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

const view = (r: SearchRecordDoc): SearchRecordView => ({
  id: r.id,
  idp_id: r.idp_id,
  organization_id: r.organization_id,
  query: r.query,
  results: { search_data: JSON.parse(r.search_data_json) },
  created_at: new Date(r.created_at).toISOString(),
});

/** Searches and records the query; the same query again replaces its entry at the top. */
export async function searchAndRecord(input: { organization_id: string; user_id: string; idp_id: string; query: string }): Promise<SearchRecordView> {
  const data = await runSearch(input.organization_id, input.user_id, input.query);
  const key = `${input.organization_id}|${input.user_id}|${createHash('sha256').update(normalizeQuery(input.query)).digest('hex').slice(0, 32)}`;
  const doc: SearchRecordDoc = {
    _id: key,
    id: newId('srch', 12),
    organization_id: input.organization_id,
    user_id: input.user_id,
    idp_id: input.idp_id,
    query: input.query,
    search_data_json: JSON.stringify(data),
    created_at: new Date(),
  };
  await SearchRecord.replaceOne({ _id: key }, doc, { upsert: true });
  const extra = await SearchRecord.find({ organization_id: input.organization_id, user_id: input.user_id }, { _id: 1 }).sort({ created_at: -1 }).skip(HISTORY_LIMIT).lean<Array<{ _id: string }>>();
  if (extra.length) await SearchRecord.deleteMany({ _id: { $in: extra.map((e) => e._id) } });
  return view(doc);
}

export async function searchHistory(input: { organization_id: string; user_id: string; from?: Date; to?: Date }): Promise<SearchRecordView[]> {
  const created_at = input.from || input.to ? { ...(input.from ? { $gte: input.from } : {}), ...(input.to ? { $lte: input.to } : {}) } : undefined;
  const docs = await SearchRecord.find({ organization_id: input.organization_id, user_id: input.user_id, ...(created_at ? { created_at } : {}) })
    .sort({ created_at: -1 })
    .limit(HISTORY_LIMIT)
    .lean<SearchRecordDoc[]>();
  return docs.map(view);
}

export async function deleteSearchRecord(organization_id: string, user_id: string, id: string): Promise<void> {
  const res = await SearchRecord.deleteOne({ organization_id, user_id, id });
  if (!res.deletedCount) throw notFound('Search record not found');
}

export async function clearSearchHistory(organization_id: string, user_id: string): Promise<number> {
  const res = await SearchRecord.deleteMany({ organization_id, user_id });
  return res.deletedCount ?? 0;
}
