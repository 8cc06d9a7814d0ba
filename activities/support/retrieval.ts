/**
 * Retrieval over an organization's knowledge base (pure): articles are split into passages,
 * indexed with BM25 (title and tags weigh more than the body), and queries are expanded with a
 * small support-domain synonym table so a paraphrase ("get my money back") finds the article
 * that says "refund". Light suffix stemming folds "refunds/refunded/refunding".
 */
import { STOPWORDS } from '../text/index.ts';

const STOP = new Set([
  ...STOPWORDS.en,
  'can',
  'could',
  'would',
  'please',
  'help',
  'want',
  'need',
  'know',
  'tell',
  'get',
  'got',
  'how',
  'what',
  'why',
  'when',
  'where',
  'which',
  'who',
  'do',
  'does',
  'did',
  'my',
  'i',
  'me',
  'is',
  'are',
  'am',
  'there',
  'any',
  'way',
  'hi',
  'hello',
  'thanks',
  'long',
  'much',
  'many',
  'take',
  'takes',
  'possible',
  'able',
  'still',
  'also',
  'just',
  'really',
]);

/** Groups of words that mean the same thing in support questions (stems). */
const SYNONYMS: string[][] = [
  ['refund', 'money back', 'reimburse', 'reimbursement', 'repay', 'chargeback'],
  ['cancel', 'cancellation', 'terminate', 'unsubscribe', 'quit'],
  ['password', 'passcode', 'credentials', 'log in', 'login', 'sign in', 'signin'],
  ['account', 'profile'],
  ['points', 'reward', 'rewards', 'loyalty'],
  ['redeem', 'redemption', 'exchange', 'spend'],
  ['gift', 'present', 'voucher', 'top up', 'topup', 'recharge'],
  ['delivery', 'deliver', 'shipping', 'ship', 'arrive', 'courier', 'parcel', 'package'],
  ['receipt', 'ticket', 'invoice', 'bill'],
  ['scan', 'scanning', 'photo', 'picture', 'upload'],
  ['expire', 'expiry', 'expiration', 'lapse'],
  ['email', 'mail', 'newsletter'],
  ['delete', 'remove', 'erase', 'close'],
  ['pay', 'payment', 'charge', 'card'],
  ['price', 'cost', 'fee', 'expensive', 'cheap'],
  ['contact', 'reach', 'call', 'phone', 'speak'],
  ['referral', 'refer', 'invite', 'friend'],
  ['token', 'credit'],
  ['broken', 'crash', 'error', 'bug', 'fail', 'failure'],
];

/** Very light English stemming: enough to fold plurals and common verb endings. */
function stem(word: string): string {
  let w = word.toLowerCase();
  if (w.length > 5 && w.endsWith('ies')) w = `${w.slice(0, -3)}y`;
  for (const suffix of [
    'ational',
    'ations',
    'ation',
    'ments',
    'ment',
    'ingly',
    'edly',
    'ing',
    'ers',
    'ed',
    'es',
    'er',
    'ly',
    's',
  ]) {
    if (w.length - suffix.length >= 4 && w.endsWith(suffix)) {
      w = w.slice(0, -suffix.length);
      break;
    }
  }
  if (w.length > 4 && w.endsWith('e')) w = w.slice(0, -1);
  return w;
}

const WORDS = /[a-z0-9]+/g;

export function terms(text: string): string[] {
  return (text.toLowerCase().match(WORDS) ?? []).filter((w) => !STOP.has(w) && w.length > 1).map(stem);
}

const synonymGroups = SYNONYMS.map((g) => g.map((phrase) => terms(phrase).join(' ')));

/** The query's terms plus the terms of every synonym group one of its words or phrases belongs to. */
function expandQuery(text: string): { terms: string[]; expanded: Set<string> } {
  const base = terms(text);
  const joined = ` ${base.join(' ')} `;
  const expanded = new Set(base);
  for (const group of synonymGroups) {
    if (group.some((p) => p && (p.includes(' ') ? joined.includes(` ${p} `) : base.includes(p)))) {
      for (const p of group) for (const t of p.split(' ')) if (t) expanded.add(t);
    }
  }
  return { terms: base, expanded };
}

export interface Article {
  id: string;
  title: string;
  body: string;
  tags: string[];
}

interface Passage {
  article: Article;
  index: number;
  text: string;
  /** weighted term frequencies: title ×3, tags ×2, text ×1 */
  tf: Map<string, number>;
  length: number;
}

export interface KnowledgeIndex {
  passages: Passage[];
  df: Map<string, number>;
  avgLength: number;
}

/** Windows of about 80 words: sentences are kept whole, short paragraphs are joined. */
function passagesOf(body: string): string[] {
  const out: string[] = [];
  let chunk = '';
  for (const para of body
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s+/g, ' ').trim())
    .filter(Boolean)) {
    for (const s of para.match(/[^.!?]+[.!?]*/g) ?? [para]) {
      if (chunk && `${chunk} ${s}`.split(' ').length > 80) {
        out.push(chunk.trim());
        chunk = '';
      }
      chunk = chunk ? `${chunk.trimEnd()} ${s.trim()}` : s.trim();
    }
  }
  if (chunk.trim()) out.push(chunk.trim());
  return out.length ? out : [body.trim()];
}

export function buildIndex(articles: readonly Article[]): KnowledgeIndex {
  const passages: Passage[] = [];
  const df = new Map<string, number>();
  for (const article of articles) {
    const head = [
      ...terms(article.title),
      ...terms(article.title),
      ...terms(article.title),
      ...article.tags.flatMap((t) => [...terms(t), ...terms(t)]),
    ];
    passagesOf(article.body).forEach((text, index) => {
      const all = [...head, ...terms(text)];
      const tf = new Map<string, number>();
      for (const t of all) tf.set(t, (tf.get(t) ?? 0) + 1);
      for (const t of tf.keys()) df.set(t, (df.get(t) ?? 0) + 1);
      passages.push({ article, index, text, tf, length: all.length });
    });
  }
  const avgLength = passages.length ? passages.reduce((s, p) => s + p.length, 0) / passages.length : 1;
  return { passages, df, avgLength };
}

export interface Hit {
  passage: Passage;
  score: number;
  /** share of the question's own terms (or their synonyms) found in the passage */
  coverage: number;
}

const K1 = 1.2;
const B = 0.75;

/** Best passages, at most one per article, BM25 over the expanded query. */
export function search(index: KnowledgeIndex, question: string, limit = 3): Hit[] {
  const { terms: base, expanded } = expandQuery(question);
  if (!base.length || !index.passages.length) return [];
  const n = index.passages.length;
  const idf = (t: string) => {
    const d = index.df.get(t) ?? 0;
    return Math.log(1 + (n - d + 0.5) / (d + 0.5));
  };
  const groupsOf = (t: string) => synonymGroups.filter((g) => g.some((p) => p.split(' ').includes(t)));
  const hits: Hit[] = [];
  for (const p of index.passages) {
    let score = 0;
    for (const t of expanded) {
      const f = p.tf.get(t);
      if (!f) continue;
      const weight = base.includes(t) ? 1 : 0.7; // a synonym counts a little less than the word asked
      score += weight * idf(t) * ((f * (K1 + 1)) / (f + K1 * (1 - B + (B * p.length) / index.avgLength)));
    }
    if (score <= 0) continue;
    const covered = base.filter(
      (t) => p.tf.has(t) || groupsOf(t).some((g) => g.some((ph) => ph.split(' ').every((x) => p.tf.has(x)))),
    ).length;
    hits.push({ passage: p, score, coverage: covered / base.length });
  }
  hits.sort((a, b) => b.score - a.score);
  const best: Hit[] = [];
  const seen = new Set<string>();
  for (const h of hits) {
    if (seen.has(h.passage.article.id)) continue;
    seen.add(h.passage.article.id);
    best.push(h);
    if (best.length >= limit) break;
  }
  return best;
}

/**
 * A passage answers the question when it covers at least half of the question's own terms
 * (directly or through a synonym). Coverage, unlike the BM25 score, does not shrink when a
 * term is common in a small knowledge base; the score floor only drops accidental matches.
 */
export const isRelevant = (h: Hit | undefined): h is Hit => Boolean(h && h.coverage >= 0.5 && h.score >= 0.1);

export interface CuratedPair {
  id: string;
  question: string;
  answer: string;
}

/** How closely a question must match a curated question for its answer to be given (0..1). */
const CURATED_MIN_MATCH = 0.75;

/**
 * The curated pair whose question matches the asked one best, when it matches at least
 * CURATED_MIN_MATCH: the harmonic mean of the share of the curated question's terms the asked one
 * has (directly or by synonym) and the share of the asked one's terms the curated one has. Both
 * sides count, so a short question does not match every long curated one that contains its word,
 * nor a long question every short curated one.
 */
export function matchCurated(
  pairs: readonly CuratedPair[],
  question: string,
): { pair: CuratedPair; match: number } | undefined {
  const asked = expandQuery(question);
  if (!asked.terms.length) return undefined;
  let best: { pair: CuratedPair; match: number } | undefined;
  for (const pair of pairs) {
    const curated = expandQuery(pair.question);
    if (!curated.terms.length) continue;
    const coveredCurated = curated.terms.filter((t) => asked.expanded.has(t)).length / curated.terms.length;
    const coveredAsked = asked.terms.filter((t) => curated.expanded.has(t)).length / asked.terms.length;
    if (!coveredCurated || !coveredAsked) continue;
    const match = (2 * coveredCurated * coveredAsked) / (coveredCurated + coveredAsked);
    if (match >= CURATED_MIN_MATCH && (!best || match > best.match)) best = { pair, match };
  }
  return best;
}

/**
 * The user asks for a person: the answer hands the conversation over instead of answering. Whole
 * phrases only, so a question about "a person's points" is not one.
 */
const ASKS_FOR_PERSON =
  /\b(?:(?:speak|talk|chat)\s+(?:to|with)\s+(?:a|an|some|your)?\s*(?:real\s+|live\s+)?(?:human|person|agent|operator|someone|somebody|representative|rep)|(?:real|live|human)\s+(?:person|human|agent|support)|human\s+being|customer\s+service\s+(?:agent|representative)|(?:need|want|get)\s+(?:a|an)\s+(?:human|person|agent))\b/i;

export const asksForPerson = (question: string): boolean => ASKS_FOR_PERSON.test(question);
