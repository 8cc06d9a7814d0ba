/**
 * The support store: the one file that reads and writes the knowledge base and the turns.
 *
 * Retrieval reads an organization's whole knowledge base for every question, so it is keyed:
 * beside each article (`support_articles`, `_id` its public id) the store writes an entry
 * `<organization_id>|<n>` in `support_kb_entries` with the text retrieval needs, n taken as a
 * slot (an insert under a unique key, exact when admins add articles at once). A question reads
 * the entries by `_id` in blocks of BLOCK (`$in` on the primary key: an index on both servers)
 * until a block ends short; it never filters articles by organization, which the embedded
 * FerretDB answers by reading every organization's articles. A deleted article's entries are
 * marked removed, so the numbering stays dense.
 *
 * Entries exist for articles written through this store. An organization whose articles were
 * written before entries existed is filled once (`<organization_id>|kb` records that it is);
 * until then its questions read the articles by organization.
 *
 * Each process keeps the knowledge base it last read (and retrieval the index built from it)
 * until the knowledge base changes. Its version is two counts, both dense and taken by insert:
 * entry slots (a create takes one) and removal slots `<organization_id>|rm-<n>` (a delete takes
 * one after marking its entries). A question checks both next slots with one `$in` read of two
 * `_id`s; either one taken means a change, and the entries are read again. A change is seen at
 * once by the process that made it and by the next read elsewhere (support.ts keeps a built index
 * INDEX_TTL_MS without asking, so at most that long). A delete interrupted between marking its
 * entries and taking its slot is seen within MAX_AGE_MS, after which a kept copy is read again.
 */
import mongoose, { Schema } from 'mongoose';
import { byId, byIds, Cache, firstFree, insertOnce, jsonText, readSlots, takeSlot } from '../db';
import { KnowledgeArticle, SupportTurn, type ArticleDoc } from './models';

export type { ArticleDoc };

const entrySchema = new Schema(
  {
    /** `<organization_id>|<n>`, `<organization_id>|rm-<n>` (the n-th removal), or `<organization_id>|kb` for the fill marker */
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    article_id: { type: String },
    title: { type: String },
    body: { type: String },
    tags: { type: [String], default: undefined },
    removed: { type: Boolean },
    /** the marker: 'filling' while the first reader copies old articles, then 'ready' */
    state: { type: String },
    at: { type: Date },
  },
  { versionKey: false },
);

interface EntryDoc {
  _id: string;
  organization_id: string;
  article_id?: string;
  title?: string;
  body?: string;
  tags?: string[];
  removed?: boolean;
  state?: 'filling' | 'ready';
  at?: Date;
}

const KbEntry = mongoose.model<EntryDoc>('KbEntry', entrySchema, 'support_kb_entries');

const BLOCK = 256;
const entryId = (organization_id: string, n: number) => `${organization_id}|${n}`;
const markerId = (organization_id: string) => `${organization_id}|kb`;
// `rm-<n>`, not a number after the last `|`: never another organization's entry slot
const removalId = (organization_id: string, n: number) => `${organization_id}|rm-${n}`;

export interface KbArticle {
  id: string;
  title: string;
  body: string;
  tags: string[];
}

/** The organization's entries in slot order (removed ones included) and the next free slot. */
/** The organization's entries in slot order; `next`: one past the last taken slot; `free`: the first slot not taken. */
async function readEntries(organization_id: string): Promise<{ entries: EntryDoc[]; next: number; free: number }> {
  const slots = await readSlots<EntryDoc>(KbEntry, (n) => entryId(organization_id, n), BLOCK);
  return { entries: slots.map((s) => s.doc), next: slots.length ? slots[slots.length - 1].n + 1 : 0, free: firstFree(slots) };
}

const fromDoc = (d: ArticleDoc): KbArticle => ({ id: d._id, title: d.title, body: d.body, tags: d.tags ?? [] });

async function addEntry(article: KbArticle, organization_id: string, from: number): Promise<void> {
  const taken = await takeSlot(KbEntry, {
    id: (n) => entryId(organization_id, n),
    from,
    to: from + 10_000,
    fields: () => ({ organization_id, article_id: article.id, title: article.title, body: article.body, tags: article.tags }),
  });
  if (!taken) throw new Error('no knowledge-base slot was free');
}

/** A fill that has not finished in this long was interrupted: the next reader fills again. */
const FILL_STALE_MS = 60_000;

/**
 * Whether the organization's entries are complete; the first caller copies the organization's
 * older articles into entries (once, guarded by inserting the marker; articles already copied
 * are skipped, so a fill run again after a crash adds only what is missing).
 */
async function entriesReady(organization_id: string): Promise<boolean> {
  const marker = await byId<EntryDoc>(KbEntry, markerId(organization_id));
  if (marker?.state === 'ready') return true;
  if (marker && Date.now() - new Date(marker.at ?? 0).getTime() < FILL_STALE_MS) return false;
  if (!marker && !(await insertOnce(KbEntry, { _id: markerId(organization_id), organization_id, state: 'filling', at: new Date() }))) return false;
  const old = await KnowledgeArticle.find({ organization_id }).sort({ created_at: 1, _id: 1 }).lean<ArticleDoc[]>();
  const { entries, next } = await readEntries(organization_id);
  const have = new Set(entries.map((e) => e.article_id));
  let from = next;
  for (const a of old) {
    if (have.has(a._id)) continue;
    await addEntry(fromDoc(a), organization_id, from);
    from += 1;
  }
  await KbEntry.updateOne({ _id: markerId(organization_id) }, { $set: { state: 'ready' } });
  return true;
}

/** The number of removal slots taken (they are taken in order, so the first free one). */
const removalCount = async (organization_id: string) => firstFree(await readSlots<EntryDoc>(KbEntry, (n) => removalId(organization_id, n), BLOCK));

interface Snapshot {
  articles: readonly KbArticle[];
  /** the first entry slot and the first removal slot that were free when it was read */
  next: number;
  removals: number;
}

const MAX_AGE_MS = 10 * 60_000;
const snapshots = new Cache<string, Snapshot>({ max: 1000, ttlMs: MAX_AGE_MS });
/** organizations whose entries are complete: the fill marker never leaves 'ready' */
const filled = new Set<string>();

/**
 * Every live article of the organization, as retrieval indexes it. The same (frozen) array while
 * the knowledge base is unchanged, so retrieval keeps the index built from it.
 */
export async function knowledgeBase(organization_id: string): Promise<readonly KbArticle[]> {
  if (!filled.has(organization_id)) {
    if (!(await entriesReady(organization_id))) return (await KnowledgeArticle.find({ organization_id }).lean<ArticleDoc[]>()).map(fromDoc);
    filled.add(organization_id);
  }
  const kept = snapshots.get(organization_id);
  if (kept && !(await byIds<EntryDoc>(KbEntry, [entryId(organization_id, kept.next), removalId(organization_id, kept.removals)])).size) return kept.articles;
  // Removals are counted before the entries are read: a delete whose slot is not counted here
  // takes it after this read, so the next check sees it.
  const removals = await removalCount(organization_id);
  // the first slot missing from the read (a gap left by a create in flight makes it the check)
  const { entries, free: next } = await readEntries(organization_id);
  const seen = new Set<string>();
  const out: KbArticle[] = [];
  for (const e of entries) {
    if (e.removed || !e.article_id || seen.has(e.article_id)) continue;
    seen.add(e.article_id);
    out.push({ id: e.article_id, title: e.title ?? '', body: e.body ?? '', tags: e.tags ?? [] });
  }
  const articles = Object.freeze(out);
  snapshots.set(organization_id, { articles, next, removals });
  return articles;
}

export async function insertArticle(doc: Omit<ArticleDoc, 'created_at' | 'updated_at'>): Promise<ArticleDoc> {
  await entriesReady(doc.organization_id);
  const created = (await KnowledgeArticle.create(doc)).toObject() as ArticleDoc;
  await addEntry(fromDoc(created), doc.organization_id, (await readEntries(doc.organization_id)).next);
  snapshots.delete(doc.organization_id);
  return created;
}

/** false: no such article in the organization. Its entries are marked removed, then a removal slot is taken. */
export async function removeArticle(organization_id: string, article_id: string): Promise<boolean> {
  const res = await KnowledgeArticle.deleteOne({ _id: article_id, organization_id });
  if (!res.deletedCount) return false;
  for (const e of (await readEntries(organization_id)).entries) {
    if (e.article_id === article_id && !e.removed) await KbEntry.updateOne({ _id: e._id }, { $set: { removed: true } });
  }
  const from = await removalCount(organization_id);
  await takeSlot(KbEntry, { id: (n) => removalId(organization_id, n), from, to: from + 10_000, fields: () => ({ organization_id, article_id, at: new Date() }) });
  snapshots.delete(organization_id);
  return true;
}

/** The admin listing, newest first (the organization_id index on MongoDB; a scan on FerretDB). */
export async function pageArticles(organization_id: string, page: number, limit: number): Promise<{ docs: ArticleDoc[]; total: number }> {
  const [docs, total] = await Promise.all([
    KnowledgeArticle.find({ organization_id }).sort({ created_at: -1, _id: 1 }).skip((page - 1) * limit).limit(limit).lean<ArticleDoc[]>(),
    KnowledgeArticle.countDocuments({ organization_id }),
  ]);
  return { docs, total };
}

export interface TurnCitation {
  article_id: string;
  title: string;
  passage: string;
  score: number;
}

const citationsText = jsonText<TurnCitation[]>(() => []);

/** One turn per id: a retried answer stores nothing twice. */
export async function insertTurn(turn: { _id: string; organization_id: string; user_id: string; conversation_id: string; session_id?: string; question: string; answer: string; citations: TurnCitation[]; source_agent: string; escalate: boolean }): Promise<void> {
  const { citations, ...rest } = turn;
  await insertOnce(SupportTurn, { ...rest, citations_json: citationsText.encode(citations) });
}
