/**
 * The support store: the one file that reads and writes the knowledge base (`support_articles`)
 * and the turns (`support_turns`). Retrieval reads an organization's articles for a question by
 * the organization_id index (answered from it on both servers). The `support_kb_entries`
 * collection written by earlier versions beside each article is no longer read or written: the
 * articles themselves always carried organization_id, so older databases need nothing.
 */
import { insertOnce, jsonText } from '../core/db';
import { KnowledgeArticle, SupportTurn, type ArticleDoc } from './models';

export type { ArticleDoc };

export interface KbArticle {
  id: string;
  title: string;
  body: string;
  tags: string[];
}

/** Every article of the organization, as retrieval indexes it, oldest first. */
export async function knowledgeBase(organization_id: string): Promise<KbArticle[]> {
  const docs = await KnowledgeArticle.find({ organization_id }, { title: 1, body: 1, tags: 1 }).sort({ created_at: 1, _id: 1 }).lean<ArticleDoc[]>();
  return docs.map((d) => ({ id: d._id, title: d.title, body: d.body, tags: d.tags ?? [] }));
}

export async function insertArticle(doc: Omit<ArticleDoc, 'created_at' | 'updated_at'>): Promise<ArticleDoc> {
  return (await KnowledgeArticle.create(doc)).toObject() as ArticleDoc;
}

/** false: no such article in the organization. */
export async function removeArticle(organization_id: string, article_id: string): Promise<boolean> {
  return ((await KnowledgeArticle.deleteOne({ _id: article_id, organization_id })).deletedCount ?? 0) > 0;
}

/** The admin listing, newest first (the organization_id index). */
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
