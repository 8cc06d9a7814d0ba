/**
 * The support store: the one file that reads and writes the knowledge base (`support_articles`)
 * and the turns (`support_turns`). Retrieval reads an organization's articles for a question by
 * the organization_id index (answered from it on both servers). The `support_kb_entries`
 * collection written by earlier versions beside each article is no longer read or written: the
 * articles themselves always carried organization_id, so older databases need nothing.
 */
import { insertOnce, jsonText } from '../core/db/index.ts';
import {
  type ArticleDoc,
  CuratedAnswer,
  type CuratedDoc,
  Handoff,
  type HandoffDoc,
  HandoffSlot,
  type HandoffStatus,
  KnowledgeArticle,
  SupportTurn,
  type SupportTurnDoc,
} from './models.ts';

export type { ArticleDoc, CuratedDoc, HandoffDoc, HandoffStatus };

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

/** One turn of the organization by its id (feedback naming the answer it judges). */
export async function turnById(
  organization_id: string,
  turn_id: string,
): Promise<Pick<SupportTurnDoc, '_id' | 'user_id' | 'conversation_id'> | null> {
  return SupportTurn.findOne({ _id: turn_id, organization_id }, { user_id: 1, conversation_id: 1 }).lean();
}

/** Whether the user has a turn in the conversation (the `{organization_id, conversation_id}` index). */
export async function hasTurnIn(organization_id: string, user_id: string, conversation_id: string): Promise<boolean> {
  return (await SupportTurn.exists({ organization_id, conversation_id, user_id })) !== null;
}

// ---- curated question→answer pairs

/** Every curated pair of the organization, as retrieval matches them. */
export async function curatedPairs(organization_id: string): Promise<CuratedDoc[]> {
  return CuratedAnswer.find({ organization_id }).sort({ created_at: -1 }).lean<CuratedDoc[]>();
}

export async function countCurated(organization_id: string): Promise<number> {
  return CuratedAnswer.countDocuments({ organization_id });
}

export async function insertCurated(doc: Omit<CuratedDoc, 'created_at' | 'updated_at'>): Promise<CuratedDoc> {
  return (await CuratedAnswer.create(doc)).toObject() as CuratedDoc;
}

/** The pair after the change, or null: none of that id in the organization. */
export async function updateCurated(
  organization_id: string,
  curated_id: string,
  change: { question?: string; answer?: string },
): Promise<CuratedDoc | null> {
  return CuratedAnswer.findOneAndUpdate({ _id: curated_id, organization_id }, { $set: change }, { new: true }).lean();
}

export async function removeCurated(organization_id: string, curated_id: string): Promise<boolean> {
  return ((await CuratedAnswer.deleteOne({ _id: curated_id, organization_id })).deletedCount ?? 0) > 0;
}

export async function pageCurated(organization_id: string, page: number, limit: number) {
  const [docs, total] = await Promise.all([
    CuratedAnswer.find({ organization_id })
      .sort({ created_at: -1, _id: 1 })
      .skip((page - 1) * limit)
      .limit(limit)
      .lean<CuratedDoc[]>(),
    CuratedAnswer.countDocuments({ organization_id }),
  ]);
  return { docs, total };
}

// ---- handoffs

const slotId = (organization_id: string, conversation_id: string) => `${organization_id}\u0000${conversation_id}`;

/** The handoff a turn opened (a retried turn opens none again). */
export async function handoffOfTurn(organization_id: string, turn_id: string): Promise<HandoffDoc | null> {
  return Handoff.findOne({ organization_id, turn_id }).lean<HandoffDoc>();
}

export async function handoffById(organization_id: string, handoff_id: string): Promise<HandoffDoc | null> {
  return Handoff.findOne({ _id: handoff_id, organization_id }).lean<HandoffDoc>();
}

/**
 * Takes the conversation's slot for `handoff_id`, or answers the handoff already holding it. The
 * slot is inserted once, then taken by a conditional update of its `open`: of two callers at once,
 * one takes it and the other reads the winner's id.
 */
export async function takeSlot(
  who: { organization_id: string; user_id: string; conversation_id: string },
  handoff_id: string,
): Promise<string> {
  const _id = slotId(who.organization_id, who.conversation_id);
  await insertOnce(HandoffSlot, { _id, organization_id: who.organization_id, user_id: who.user_id, open: null });
  const taken = await HandoffSlot.findOneAndUpdate({ _id, open: null }, { $set: { open: handoff_id } }, { new: true });
  if (taken) return handoff_id;
  const slot = await HandoffSlot.findOne({ _id }).lean<{ open: string | null }>();
  return slot?.open ?? (await takeSlot(who, handoff_id));
}

/** Frees the slot if `handoff_id` still holds it (a closed handoff, or one a crash left behind). */
export async function freeSlot(organization_id: string, conversation_id: string, handoff_id: string): Promise<void> {
  await HandoffSlot.updateOne(
    { _id: slotId(organization_id, conversation_id), open: handoff_id },
    { $set: { open: null } },
  );
}

/** Writes the handoff once under its id (a retry, or the next escalation after a crash, writes nothing twice). */
export async function insertHandoff(
  doc: Omit<HandoffDoc, 'created_at' | 'updated_at' | 'replies'>,
): Promise<HandoffDoc> {
  await insertOnce(Handoff, { ...doc, replies: [] });
  return (await Handoff.findOne({ _id: doc._id }).lean<HandoffDoc>())!;
}

export async function pageHandoffs(
  organization_id: string,
  status: HandoffStatus | undefined,
  page: number,
  limit: number,
) {
  const filter = { organization_id, ...(status ? { status } : {}) };
  const [docs, total] = await Promise.all([
    Handoff.find(filter)
      .sort({ created_at: -1, _id: 1 })
      .skip((page - 1) * limit)
      .limit(limit)
      .lean<HandoffDoc[]>(),
    Handoff.countDocuments(filter),
  ]);
  return { docs, total };
}

/** open → claimed by `by`, atomically: of two claims at once one changes it, the other gets null. */
export async function claimHandoff(
  organization_id: string,
  handoff_id: string,
  by: string,
): Promise<HandoffDoc | null> {
  return Handoff.findOneAndUpdate(
    { _id: handoff_id, organization_id, status: 'open' },
    { $set: { status: 'claimed', claimed_by: by, claimed_at: new Date() } },
    { new: true },
  ).lean<HandoffDoc>();
}

/**
 * Appends a reply while the handoff is claimed by `by` and has no reply of that id, in one
 * conditional update: a reply never lands on a closed handoff, one claimed by another, or twice.
 */
export async function pushReply(
  organization_id: string,
  handoff_id: string,
  by: string,
  reply: { reply_id: string; text: string; at: Date },
  max: number,
): Promise<HandoffDoc | null> {
  return Handoff.findOneAndUpdate(
    {
      _id: handoff_id,
      organization_id,
      status: 'claimed',
      claimed_by: by,
      'replies.reply_id': { $ne: reply.reply_id },
      [`replies.${max - 1}`]: { $exists: false },
    },
    { $push: { replies: { ...reply, by } } },
    { new: true },
  ).lean<HandoffDoc>();
}

/** open or claimed → closed, atomically; null when it was already closed (or is not there). */
export async function closeHandoff(
  organization_id: string,
  handoff_id: string,
  by: string,
): Promise<HandoffDoc | null> {
  return Handoff.findOneAndUpdate(
    { _id: handoff_id, organization_id, status: { $in: ['open', 'claimed'] } },
    { $set: { status: 'closed', closed_by: by, closed_at: new Date() } },
    { new: true },
  ).lean<HandoffDoc>();
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

/** The handoffs of the user's conversations (their questions and the replies they were sent). */
export async function userHandoffs(organization_id: string, user_id: string): Promise<HandoffDoc[]> {
  return Handoff.find({ organization_id, user_id }).sort({ created_at: 1, _id: 1 }).lean<HandoffDoc[]>();
}

/** The handoffs an admin claimed (the organization's, read on its index and filtered). */
export async function handoffsClaimedBy(organization_id: string, user_id: string): Promise<HandoffDoc[]> {
  return Handoff.find({ organization_id, claimed_by: user_id }, { claimed_at: 1, replies: 1, status: 1 }).lean<
    HandoffDoc[]
  >();
}

/** Deletes the user's handoffs and their conversations' slots; how many handoffs. */
export async function deleteUserHandoffs(organization_id: string, user_id: string): Promise<number> {
  const n = (await Handoff.deleteMany({ organization_id, user_id })).deletedCount ?? 0;
  await HandoffSlot.deleteMany({ organization_id, user_id });
  return n;
}

/**
 * An admin's name leaves the handoffs they claimed, closed and answered: the tombstone takes its
 * place (the replies' words are the user's conversation's, erased with that user). How many changed.
 */
export async function tombstoneHandoffAgent(
  organization_id: string,
  user_id: string,
  tombstone: string,
): Promise<number> {
  let changed = 0;
  for (const field of ['claimed_by', 'closed_by'] as const)
    changed +=
      (
        await Handoff.updateMany(
          { organization_id, [field]: user_id },
          { $set: { [field]: tombstone } },
          { timestamps: false },
        )
      ).modifiedCount ?? 0;
  const withReplies = await Handoff.find({ organization_id, 'replies.by': user_id }, { replies: 1 }).lean<
    HandoffDoc[]
  >();
  for (const h of withReplies) {
    await Handoff.updateOne(
      { _id: h._id },
      { $set: { replies: h.replies.map((r) => (r.by === user_id ? { ...r, by: tombstone } : r)) } },
      { timestamps: false },
    );
    changed += 1;
  }
  return changed;
}

/** The curated pairs the user wrote (an admin's). */
export async function curatedBy(organization_id: string, user_id: string): Promise<CuratedDoc[]> {
  return CuratedAnswer.find({ organization_id, created_by: user_id }, { question: 1, created_at: 1 }).lean<
    CuratedDoc[]
  >();
}

/** The pairs stay (the organization's); their author becomes the tombstone. */
export async function tombstoneCuratedAuthor(
  organization_id: string,
  user_id: string,
  tombstone: string,
): Promise<number> {
  return (
    (
      await CuratedAnswer.updateMany(
        { organization_id, created_by: user_id },
        { $set: { created_by: tombstone } },
        { timestamps: false },
      )
    ).modifiedCount ?? 0
  );
}
