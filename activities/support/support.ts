/**
 * Support Q&A: the organization's knowledge base, retrieval of the best passages, and an answer
 * composed locally from them with citations, or written by the configured model with those
 * passages as its only context. Nothing relevant: it says it does not know and offers escalation.
 */
import { Cache, versionsOf } from '../core/db/index.ts';
import { invalid, notFound, PlatformError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { gatewayChat, usesModel } from '../llm/index.ts';
import { storeNormalizedResponse } from '../responses/index.ts';
import { verifySession } from '../sessions/index.ts';
import { type EscalationReason, openHandoff } from './handoffs.ts';
import {
  asksForPerson,
  buildIndex,
  type CuratedPair,
  type Hit,
  isRelevant,
  type KnowledgeIndex,
  matchCurated,
  search,
  terms,
} from './retrieval.ts';
import {
  type ArticleDoc,
  curatedPairs,
  handoffById,
  hasTurnIn,
  insertArticle,
  insertTurn,
  knowledgeBase,
  pageArticles,
  removeArticle,
  turnById,
} from './store.ts';

export interface ArticleView {
  id: string;
  organization_id: string;
  title: string;
  body: string;
  tags: string[];
  created_by: string;
  created_at: string;
  updated_at: string;
}

const view = (a: ArticleDoc): ArticleView => ({
  id: a._id,
  organization_id: a.organization_id,
  title: a.title,
  body: a.body,
  tags: a.tags ?? [],
  created_by: a.created_by,
  created_at: new Date(a.created_at).toISOString(),
  updated_at: new Date(a.updated_at).toISOString(),
});

/**
 * The built BM25 index of an organization, kept per process until the organization's knowledge
 * version moves (core/db/versions.ts), at most INDEX_KEPT_MS, for the 200 organizations asked
 * last: that bounds the memory. At 1,000 articles reading and indexing them takes ~100 ms against
 * ~15 ms for a question, so a version check never puts a rebuild on a question's path. This
 * process's own article writes drop it at once; another process's are seen once this process
 * reads the version again (at most once a second, in the background) and has built the new
 * index, questions meanwhile answered from the one before (docs/components/support.md).
 */
interface Knowledge {
  index: KnowledgeIndex;
  /** the curated question→answer pairs, matched before the index is searched */
  curated: CuratedPair[];
}
interface Kept {
  index: Promise<Knowledge>;
  version: number | undefined;
}
const INDEX_KEPT_MS = 10 * 60_000;
const indexes = new Cache<string, Kept>({ max: 200, ttlMs: INDEX_KEPT_MS });

/** Moved by another process: build the new index, then answer from it. */
const versions = versionsOf('support.knowledge', async (organization_id, version) => {
  const was = indexes.get(organization_id);
  if (!was || was.version === version) return;
  const next = build(organization_id, version);
  await next.index;
  if (indexes.get(organization_id) === was) indexes.set(organization_id, next);
});

/** Builds the index from the articles read after the version (`version`, or read first): a write after that read moves it again. */
function build(organization_id: string, version?: number): Kept {
  const kept: Kept = { index: Promise.resolve(undefined as never), version };
  kept.index = (version === undefined ? versions.current(organization_id) : Promise.resolve(version))
    .then((v) => {
      kept.version = v;
      return Promise.all([knowledgeBase(organization_id), curatedPairs(organization_id)]);
    })
    .then(([articles, curated]) => ({
      index: buildIndex(articles),
      curated: curated.map((c) => ({ id: c._id, question: c.question, answer: c.answer })),
    }));
  kept.index.catch(() => {
    if (indexes.get(organization_id) === kept) indexes.delete(organization_id);
  });
  return kept;
}

function knowledgeIndex(organization_id: string): Promise<Knowledge> {
  let kept = indexes.get(organization_id);
  if (!kept) {
    kept = build(organization_id);
    indexes.set(organization_id, kept);
    return kept.index;
  }
  void versions.heed(organization_id);
  return kept.index;
}

/** An article or curated pair of the organization was written or removed here: its index goes now, everyone else's within a second. */
export async function knowledgeChanged(organization_id: string): Promise<void> {
  indexes.delete(organization_id);
  await versions.move(organization_id);
  indexes.delete(organization_id); // an index begun between the two
}

export async function createArticle(
  organization_id: string,
  input: { title: string; body: string; tags?: string[] },
  created_by: string,
): Promise<ArticleView> {
  const doc = await insertArticle({
    _id: newId('kb'),
    organization_id,
    title: input.title,
    body: input.body,
    tags: input.tags ?? [],
    created_by,
  });
  await knowledgeChanged(organization_id);
  return view(doc);
}

export async function listArticles(organization_id: string, page: number, limit: number) {
  const { docs, total } = await pageArticles(organization_id, page, limit);
  return { articles: docs.map(view), page, limit, total, has_more: page * limit < total };
}

export async function deleteArticle(organization_id: string, id: string): Promise<void> {
  if (!(await removeArticle(organization_id, id))) throw notFound('Article not found');
  await knowledgeChanged(organization_id);
}

interface Citation {
  article_id: string;
  title: string;
  passage: string;
  score: number;
}

/** Where an answer came from: a curated pair, the knowledge base's passages, or nowhere (handed to a person). */
type AnswerSource = 'curated' | 'knowledge_base' | 'handoff';

export interface SupportAnswer {
  success: true;
  message: string;
  response: string;
  metadata: {
    processed_at: string;
    source_agent: string;
    agent: 'support';
    source: AnswerSource;
    escalate: boolean;
    citations: Citation[];
    turn_id: string;
    /** the answer's normalized response id: what feedback names to judge it */
    response_id: string;
    conversation_id: string;
    curated_id?: string;
    handoff_id?: string;
    escalation_reason?: EscalationReason;
  };
}

const DONT_KNOW =
  "I don't know the answer to that from our help articles. I have passed your question to a support agent, who will answer you in this conversation.";
const HANDED_OVER = 'I have passed your question to a support agent, who will answer you in this conversation.';

/** The passage's sentences that share most with the question, in their order (at most three). */
function bestSentences(passage: string, question: string): string {
  const q = new Set(terms(question));
  const sentences = passage
    .match(/[^.!?]+[.!?]*/g)
    ?.map((s) => s.trim())
    .filter(Boolean) ?? [passage];
  if (sentences.length <= 3) return sentences.join(' ');
  const scored = sentences.map((s, i) => ({ s, i, score: terms(s).filter((t) => q.has(t)).length }));
  const keep = new Set(
    scored
      .sort((a, b) => b.score - a.score || a.i - b.i)
      .slice(0, 3)
      .map((x) => x.i),
  );
  return sentences.filter((_, i) => keep.has(i)).join(' ');
}

function citationsOf(hits: Hit[]): Citation[] {
  const best = hits[0];
  return hits
    .filter((h, i) => i === 0 || (isRelevant(h) && h.score >= best.score * 0.5))
    .map((h) => ({
      article_id: h.passage.article.id,
      title: h.passage.article.title,
      passage: h.passage.text,
      score: Math.round(h.score * 1000) / 1000,
    }));
}

interface Composed {
  response: string;
  source_agent: string;
  source: AnswerSource;
  escalate: boolean;
  citations: Citation[];
  curated_id?: string;
  reason?: EscalationReason;
}

/**
 * The escalation rule: the user asks for a person (asked_for_person), no curated pair matches and
 * no passage covers the question (no_answer), or the model given the passages says it does not
 * know (model_unsure). A curated pair that matches wins over everything but a request for a person.
 */
async function compose(
  who: { organization_id: string; user_id: string },
  question: string,
  knowledge: Knowledge,
): Promise<Composed> {
  const localAgent = async () => ((await usesModel(who.organization_id, 'support')) ? 'llm' : 'local_retrieval');
  if (asksForPerson(question))
    return {
      response: HANDED_OVER,
      source_agent: await localAgent(),
      source: 'handoff',
      escalate: true,
      citations: [],
      reason: 'asked_for_person',
    };
  const curated = matchCurated(knowledge.curated, question);
  if (curated)
    return {
      response: curated.pair.answer,
      source_agent: 'curated',
      source: 'curated',
      escalate: false,
      citations: [],
      curated_id: curated.pair.id,
    };
  const hits = search(knowledge.index, question, 3);
  if (!isRelevant(hits[0]))
    return {
      response: DONT_KNOW,
      source_agent: await localAgent(),
      source: 'handoff',
      escalate: true,
      citations: [],
      reason: 'no_answer',
    };
  const citations = citationsOf(hits);
  const context = citations.map((c, i) => `[${i + 1}] ${c.title}\n${c.passage}`).join('\n\n');
  const out = await gatewayChat({
    ...who,
    agent: 'support',
    system:
      'You are a customer support assistant. Answer the question using only the numbered passages. Cite them like [1]. If the passages do not contain the answer, reply exactly: I_DONT_KNOW',
    user: `Passages:\n${context}\n\nQuestion: ${question}`,
  });
  if (out) {
    if (!out.text || out.text.includes('I_DONT_KNOW'))
      return {
        response: DONT_KNOW,
        source_agent: `llm:${out.model}`,
        source: 'handoff',
        escalate: true,
        citations: [],
        reason: 'model_unsure',
      };
    return {
      response: out.text,
      source_agent: `llm:${out.model}`,
      source: 'knowledge_base',
      escalate: false,
      citations,
    };
  }
  const sources = citations.map((c, i) => `[${i + 1}] ${c.title}`).join('\n');
  return {
    response: `${bestSentences(citations[0].passage, question)} [1]\n\nSources:\n${sources}`,
    source_agent: 'local_retrieval',
    source: 'knowledge_base',
    escalate: false,
    citations,
  };
}

/**
 * Answers one question of a verified conversation and stores the turn and its normalized
 * response; an answer that escalates opens (or joins) the conversation's handoff after the turn is
 * stored, so a retry of the same turn_id finds both.
 */
export async function answerQuestion(input: {
  organization_id: string;
  user_id: string;
  conversation_id: string;
  session_id?: string;
  prompt: string;
  turn_id?: string;
}): Promise<SupportAnswer> {
  const answer = await compose(input, input.prompt, await knowledgeIndex(input.organization_id));
  const turn_id = input.turn_id ?? newId('turn');
  const response_id = `support:${turn_id}`;
  await insertTurn({
    _id: turn_id,
    organization_id: input.organization_id,
    user_id: input.user_id,
    conversation_id: input.conversation_id,
    session_id: input.session_id,
    question: input.prompt,
    answer: answer.response,
    citations: answer.citations,
    source_agent: answer.source_agent,
    escalate: answer.escalate,
  });
  const handoff_id = answer.reason
    ? await openHandoff({
        organization_id: input.organization_id,
        user_id: input.user_id,
        conversation_id: input.conversation_id,
        session_id: input.session_id,
        turn_id,
        question: input.prompt,
        reason: answer.reason,
      })
    : undefined;
  const extra = {
    ...(answer.curated_id ? { curated_id: answer.curated_id } : {}),
    ...(handoff_id ? { handoff_id, escalation_reason: answer.reason } : {}),
  };
  const stored = await storeNormalizedResponse({
    response_id,
    conversation_id: input.conversation_id,
    user_id: input.user_id,
    organization_id: input.organization_id,
    source: 'support',
    message: answer.response,
    metadata: {
      question: input.prompt,
      source_agent: answer.source_agent,
      source: answer.source,
      escalate: answer.escalate,
      citations: answer.citations.map((c) => ({ article_id: c.article_id, title: c.title })),
      turn_id,
      ...extra,
    },
  });
  return {
    success: true,
    message: answer.escalate
      ? answer.reason === 'asked_for_person'
        ? 'Handed to a support agent'
        : 'No answer found in the knowledge base; handed to a support agent'
      : 'Question answered',
    response: answer.response,
    metadata: {
      processed_at: stored.created_at,
      source_agent: answer.source_agent,
      agent: 'support',
      source: answer.source,
      escalate: answer.escalate,
      citations: answer.citations,
      turn_id,
      response_id,
      conversation_id: input.conversation_id,
      ...extra,
    },
  };
}

/**
 * The answer or conversation a piece of feedback names, checked to be the user's: the conversation
 * of `response_id` (`support:<turn_id>`, an answer's or an agent's reply's), else `conversation_id`
 * when the user asked in it. 404 for anything else, whoever's it is, so a key learns nothing of
 * another user's conversations.
 */
export async function judgedTarget(
  organization_id: string,
  user_id: string,
  target: { conversation_id?: string; response_id?: string },
): Promise<{ conversation_id?: string; response_id?: string }> {
  let conversation_id = target.conversation_id;
  if (target.response_id) {
    const owner = await responseOwner(organization_id, target.response_id);
    if (!owner || owner.user_id !== user_id) throw notFound(`Response not found: ${target.response_id}`);
    if (conversation_id && conversation_id !== owner.conversation_id)
      throw invalid('response_id', `not an answer of the conversation ${conversation_id}`);
    conversation_id = owner.conversation_id;
  } else if (conversation_id && !(await hasTurnIn(organization_id, user_id, conversation_id)))
    throw notFound(`Conversation not found: ${conversation_id}`);
  return { conversation_id, response_id: target.response_id };
}

const REPLY_RESPONSE = /^support:reply:([^:]{1,100}):([^:]{1,100})$/;
const TURN_RESPONSE = /^support:([^:]{1,200})$/;

/** Whose answer a response id names: a turn's (`support:<turn_id>`) or an agent's reply's (`support:reply:<handoff_id>:<reply_id>`). */
async function responseOwner(
  organization_id: string,
  response_id: string,
): Promise<{ user_id: string; conversation_id: string } | null> {
  const reply = REPLY_RESPONSE.exec(response_id);
  if (reply) {
    const h = await handoffById(organization_id, reply[1]);
    return h?.replies.some((r) => r.reply_id === reply[2]) ? h : null;
  }
  const turn = TURN_RESPONSE.exec(response_id);
  return turn ? turnById(organization_id, turn[1]) : null;
}

/** 400 "Invalid conversation ID: <id>" unless the conversation is the user's and its session is open. */
export async function requireConversation(
  organization_id: string,
  user_id: string,
  conversation_id: string,
): Promise<{ session_id: string }> {
  const check = await verifySession({ organization_id, user_id, conversation_id });
  if (!check.valid || !check.session_id)
    throw new PlatformError('malformed', `Invalid conversation ID: ${conversation_id}`, 'conversation_id');
  return { session_id: check.session_id };
}
