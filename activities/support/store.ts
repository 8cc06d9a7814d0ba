/**
 * The support store: the one file that reads and writes the knowledge base (`support_articles`)
 * and the turns (`support_turns`). Retrieval reads an organization's articles for a question by
 * the organization_id index (answered from it on both servers). The `support_kb_entries`
 * collection written by earlier versions beside each article is no longer read or written: the
 * articles themselves always carried organization_id, so older databases need nothing.
 */
import { insertOnce, jsonText } from '../core/db/index.ts';
import { type ArticleDoc, KnowledgeArticle, SupportTurn, type SupportTurnDoc } from './models.ts';

export type { ArticleDoc };

export interface KbArticle {
  id: string;
  title: string;
  body: string;
  tags: string[];
}

/** Every article of the organization, as retrieval indexes it, oldest first. */
export async function knowledgeBase(organization_id: string): Promise<KbArticle[]> {
  const docs = await KnowledgeArticle.find({ organization_id }, { title: 1, body: 1, tags: 1 })
    .sort({ created_at: 1, _id: 1 })
    .lean<ArticleDoc[]>();
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
export async function pageArticles(
  organization_id: string,
  page: number,
  limit: number,
): Promise<{ docs: ArticleDoc[]; total: number }> {
  const [docs, total] = await Promise.all([
    KnowledgeArticle.find({ organization_id })
      .sort({ created_at: -1, _id: 1 })
      .skip((page - 1) * limit)
      .limit(limit)
      .lean<ArticleDoc[]>(),
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
export async function insertTurn(turn: {
  _id: string;
  organization_id: string;
  user_id: string;
  conversation_id: string;
  session_id?: string;
  question: string;
  answer: string;
  citations: TurnCitation[];
  source_agent: string;
  escalate: boolean;
}): Promise<void> {
  const { citations, ...rest } = turn;
  await insertOnce(SupportTurn, { ...rest, citations_json: citationsText.encode(citations) });
}

// ---- a user's export and erasure (user-data.ts)

export interface UserTurn {
  _id: string;
  conversation_id: string;
  session_id?: string;
  question: string;
  answer: string;
  citations: TurnCitation[];
  source_agent: string;
  escalate: boolean;
  created_at: Date;
}

/**
 * The user's turns, oldest first. `support_turns` has no index on user_id: this reads the
 * organization's turns on the `{organization_id, conversation_id}` prefix and filters the user's.
 */
export async function userTurns(organization_id: string, user_id: string): Promise<UserTurn[]> {
  const docs = await SupportTurn.find({ organization_id, user_id })
    .sort({ created_at: 1, _id: 1 })
    .lean<SupportTurnDoc[]>();
  return docs.map(({ citations_json, organization_id: _o, user_id: _u, ...d }) => ({
    ...d,
    citations: citationsText.decode(citations_json),
  }));
}

/** Deletes the user's turns (same read as `userTurns`); how many. */
export async function deleteUserTurns(organization_id: string, user_id: string): Promise<number> {
  return (await SupportTurn.deleteMany({ organization_id, user_id })).deletedCount ?? 0;
}

/** The articles the user wrote (an admin's): the organization's knowledge base, by its index. */
export async function articlesBy(organization_id: string, user_id: string): Promise<ArticleDoc[]> {
  return KnowledgeArticle.find(
    { organization_id, created_by: user_id },
    { title: 1, tags: 1, created_at: 1, updated_at: 1 },
  ).lean<ArticleDoc[]>();
}

/** The articles stay (the organization's); their author becomes the tombstone. How many changed. */
export async function tombstoneArticleAuthor(
  organization_id: string,
  user_id: string,
  tombstone: string,
): Promise<number> {
  return (
    (
      await KnowledgeArticle.updateMany(
        { organization_id, created_by: user_id },
        { $set: { created_by: tombstone } },
        { timestamps: false },
      )
    ).modifiedCount ?? 0
  );
}
