/**
 * Feedback: stored at once, analysed asynchronously by the workflow `feedback-analysis:<id>`
 * (sentiment −1..1 with a label, and categories for praise and complaints alike), counted in
 * stats computed from the stored records.
 */
import { newId } from '../core/ids.ts';
import { handedIn } from '../core/wiring.ts';
import { gatewayChat } from '../llm/index.ts';
import { judgedTarget } from '../support/index.ts';
import { sentences, sentiment, tokenize } from '../text/index.ts';
import type { FeedbackType } from './constants.ts';
import {
  feedbackById,
  type FeedbackDoc,
  insertFeedback,
  removeFeedback,
  type StatsRow,
  statsRows,
  writeAnalysis,
} from './store.ts';

/** Topic words per category; a sentence mentioning one files the feedback under it. */
const CATEGORIES: Record<string, string[]> = {
  app_performance: [
    'slow',
    'fast',
    'crash',
    'crashes',
    'crashed',
    'freeze',
    'freezes',
    'lag',
    'laggy',
    'loading',
    'loads',
    'speed',
    'quick',
    'battery',
    'performance',
  ],
  usability: [
    'easy',
    'confusing',
    'intuitive',
    'design',
    'interface',
    'navigate',
    'navigation',
    'menu',
    'button',
    'screen',
    'layout',
    'simple',
    'complicated',
    'ui',
  ],
  customer_service: [
    'support',
    'agent',
    'staff',
    'service',
    'helpful',
    'rude',
    'response',
    'answered',
    'help',
    'team',
    'chat',
  ],
  pricing: [
    'price',
    'prices',
    'expensive',
    'cheap',
    'cost',
    'costs',
    'fee',
    'fees',
    'value',
    'money',
    'charged',
    'refund',
  ],
  rewards: [
    'points',
    'rewards',
    'reward',
    'gift',
    'gifts',
    'redeem',
    'redeemed',
    'redemption',
    'loyalty',
    'bonus',
    'referral',
  ],
  scanning: ['scan', 'scanning', 'scanned', 'receipt', 'receipts', 'ticket', 'tickets', 'photo', 'camera'],
  account: ['login', 'password', 'account', 'sign', 'profile', 'email', 'verification'],
  bugs: ['bug', 'bugs', 'error', 'errors', 'broken', 'glitch', 'fails', 'failed', 'wrong', 'issue'],
  features: [
    'feature',
    'features',
    'option',
    'add',
    'wish',
    'would',
    'suggest',
    'suggestion',
    'missing',
    'integration',
  ],
  delivery: ['delivery', 'shipping', 'shipped', 'late', 'arrived', 'courier', 'package'],
};

export interface FeedbackInput {
  organization_id: string;
  user_id: string;
  feedback_type: FeedbackType;
  rating: number;
  title?: string;
  comment?: string;
  /** what it judges: a support conversation of the user's, and one answer of it */
  conversation_id?: string;
  response_id?: string;
}

export async function storeFeedback(input: FeedbackInput): Promise<string> {
  const feedback_id = newId('fb');
  await insertFeedback({ _id: feedback_id, ...input, title: input.title ?? '', comment: input.comment ?? '' });
  return feedback_id;
}

/**
 * Starts the analysis of a stored feedback (the workflow `feedback-analysis:<id>`). The component
 * holds no Temporal client: the composition root hands the start in (workers/root.ts).
 */
export type StartAnalysis = (feedback: {
  feedback_id: string;
  organization_id: string;
  user_id: string;
}) => Promise<void>;
const startAnalysis = handedIn<StartAnalysis>("feedback's analysis start");

export function configureFeedback(deps: { startAnalysis: StartAnalysis }): void {
  startAnalysis.set(deps.startAnalysis);
}

/**
 * Stores a feedback and starts its analysis. When the start fails the feedback is dropped: it is
 * not acknowledged (the client sees the error and retries), and nothing is kept that will never be
 * analysed.
 */
export async function submitFeedback(input: FeedbackInput): Promise<string> {
  const start = startAnalysis.get();
  // What it judges must be the user's (404 otherwise, nothing stored); a response names its conversation.
  const target =
    input.conversation_id || input.response_id
      ? await judgedTarget(input.organization_id, input.user_id, {
          conversation_id: input.conversation_id,
          response_id: input.response_id,
        })
      : {};
  const feedback_id = await storeFeedback({ ...input, ...target });
  try {
    await start({ feedback_id, organization_id: input.organization_id, user_id: input.user_id });
  } catch (err) {
    await removeFeedback(feedback_id);
    throw err;
  }
  return feedback_id;
}

export interface FeedbackAnalysis {
  sentiment_score: number;
  sentiment_label: 'positive' | 'neutral' | 'negative';
  categories: Array<{ category: string; polarity: 'praise' | 'complaint' | 'neutral' }>;
  engine: string;
}

/** Lexicon sentiment of the whole text, and each category with the sentiment of its sentences. */
function analyseLocally(text: string): FeedbackAnalysis {
  const overall = sentiment(tokenize(text));
  const found = new Map<string, number>();
  for (const s of sentences(text)) {
    const tokens = tokenize(s);
    const score = sentiment(tokens).score;
    for (const [category, words] of Object.entries(CATEGORIES)) {
      if (tokens.some((t) => words.includes(t))) found.set(category, (found.get(category) ?? 0) + score);
    }
  }
  const categories = [...found].map(([category, score]) => ({
    category,
    polarity: score > 0 ? ('praise' as const) : score < 0 ? ('complaint' as const) : ('neutral' as const),
  }));
  return {
    sentiment_score: overall.score,
    sentiment_label: overall.label,
    categories: categories.length
      ? categories
      : [
          {
            category: 'other',
            polarity: overall.label === 'positive' ? 'praise' : overall.label === 'negative' ? 'complaint' : 'neutral',
          },
        ],
    engine: 'local-lexicon',
  };
}

async function analyseWithModel(doc: FeedbackDoc, text: string): Promise<FeedbackAnalysis | null> {
  const out = await gatewayChat({
    organization_id: doc.organization_id,
    user_id: doc.user_id,
    agent: 'feedback',
    system: `Classify customer feedback. Reply with JSON only: {"sentiment_score": number from -1 to 1, "categories": [{"category": one of ${JSON.stringify([...Object.keys(CATEGORIES), 'other'])}, "polarity": "praise"|"complaint"|"neutral"}]}`,
    user: text,
    max_tokens: 300,
  });
  if (!out) return null;
  // The model's words: every field is checked before it is used.
  const parsed = JSON.parse(out.text.replace(/^```(json)?|```$/g, '').trim()) as {
    sentiment_score?: unknown;
    categories?: unknown;
  } | null;
  const score = Math.max(-1, Math.min(1, Number(parsed?.sentiment_score) || 0));
  const allowed = new Set([...Object.keys(CATEGORIES), 'other']);
  const given = (Array.isArray(parsed?.categories) ? parsed.categories : []) as Array<{
    category?: unknown;
    polarity?: unknown;
  } | null>;
  const categories = given
    .filter((c) => typeof c?.category === 'string' && allowed.has(c.category))
    .map((c) => ({
      category: String(c!.category),
      polarity:
        c!.polarity === 'praise' || c!.polarity === 'complaint'
          ? (c!.polarity as 'praise' | 'complaint')
          : ('neutral' as const),
    }));
  return {
    sentiment_score: Math.round(score * 100) / 100,
    sentiment_label: score > 0.2 ? 'positive' : score < -0.2 ? 'negative' : 'neutral',
    categories: categories.length ? categories : [{ category: 'other', polarity: 'neutral' }],
    engine: `llm:${out.model}`,
  };
}

/** The activity of feedback-analysis:<id>; writing the result again is harmless. */
export async function analyseFeedback(feedback_id: string): Promise<FeedbackAnalysis | null> {
  const doc = await feedbackById(feedback_id);
  if (!doc) return null; // dropped because its workflow could not start
  const text = [doc.title, doc.comment].filter(Boolean).join('. ');
  const analysis = (await analyseWithModel(doc, text)) ?? analyseLocally(text);
  await writeAnalysis(feedback_id, analysis);
  return analysis;
}

export interface StatsFilter {
  organization_id: string;
  from?: Date;
  to?: Date;
  feedback_type?: FeedbackType;
  /** also count per conversation or per answer judged (feedback naming none is left out of the groups) */
  group_by?: 'conversation_id' | 'response_id';
  /** groups answered, most feedback first (default 50) */
  groups_limit?: number;
}

interface Group {
  id: string;
  total_feedback: number;
  ratingSum: number;
  analysed: number;
  sentimentSum: number;
  sentiment_distribution: Record<string, number>;
}

/** Per conversation or answer: the count, the exact mean rating and the sentiment of the analysed ones; most feedback first. */
function groupsOf(docs: StatsRow[], by: 'conversation_id' | 'response_id', limit: number) {
  const groups = new Map<string, Group>();
  for (const d of docs) {
    const id = d[by];
    if (!id) continue;
    let g = groups.get(id);
    if (!g) {
      g = {
        id,
        total_feedback: 0,
        ratingSum: 0,
        analysed: 0,
        sentimentSum: 0,
        sentiment_distribution: { positive: 0, neutral: 0, negative: 0 },
      };
      groups.set(id, g);
    }
    g.total_feedback += 1;
    g.ratingSum += d.rating;
    if (d.analysis_status !== 'done') continue;
    g.analysed += 1;
    g.sentimentSum += d.sentiment_score ?? 0;
    g.sentiment_distribution[d.sentiment_label ?? 'neutral'] += 1;
  }
  const sorted = [...groups.values()].sort((a, b) => b.total_feedback - a.total_feedback || a.id.localeCompare(b.id));
  return {
    groups_total: sorted.length,
    groups: sorted.slice(0, limit).map((g) => ({
      [by]: g.id,
      total_feedback: g.total_feedback,
      average_rating: g.ratingSum / g.total_feedback,
      analysed: g.analysed,
      sentiment_distribution: g.sentiment_distribution,
      average_sentiment: g.analysed ? Math.round((g.sentimentSum / g.analysed) * 1000) / 1000 : 0,
    })),
  };
}

/** Sums and counts in code (no aggregation pipeline: both servers answer it alike); average_rating is the exact mean, not rounded. */
export async function feedbackStats(f: StatsFilter) {
  const docs = await statsRows(f);
  const sentiment_distribution: Record<string, number> = { positive: 0, neutral: 0, negative: 0 };
  const category_distribution: Record<string, number> = {};
  const praise_distribution: Record<string, number> = {};
  const complaint_distribution: Record<string, number> = {};
  const type_distribution: Record<string, number> = {};
  const rating_distribution: Record<string, number> = { 1: 0, 2: 0, 3: 0, 4: 0, 5: 0 };
  let ratingSum = 0;
  let sentimentSum = 0;
  let analysed = 0;
  for (const d of docs) {
    ratingSum += d.rating;
    rating_distribution[d.rating] = (rating_distribution[d.rating] ?? 0) + 1;
    type_distribution[d.feedback_type] = (type_distribution[d.feedback_type] ?? 0) + 1;
    if (d.analysis_status !== 'done') continue;
    analysed += 1;
    sentimentSum += d.sentiment_score ?? 0;
    sentiment_distribution[d.sentiment_label ?? 'neutral'] += 1;
    for (const c of d.categories) {
      category_distribution[c.category] = (category_distribution[c.category] ?? 0) + 1;
      if (c.polarity === 'praise') praise_distribution[c.category] = (praise_distribution[c.category] ?? 0) + 1;
      if (c.polarity === 'complaint')
        complaint_distribution[c.category] = (complaint_distribution[c.category] ?? 0) + 1;
    }
  }
  return {
    total_feedback: docs.length,
    analysed,
    pending_analysis: docs.length - analysed,
    sentiment_distribution,
    category_distribution,
    praise_distribution,
    complaint_distribution,
    type_distribution,
    rating_distribution,
    average_rating: docs.length ? ratingSum / docs.length : 0,
    average_sentiment: analysed ? Math.round((sentimentSum / analysed) * 1000) / 1000 : 0,
    ...(f.group_by ? { group_by: f.group_by, ...groupsOf(docs, f.group_by, f.groups_limit ?? 50) } : {}),
  };
}
