/**
 * Local text analysis (no model, no network): language guess from stop-words, counts, keywords
 * by term frequency, entities by pattern, lexicon sentiment with negation, extractive summary.
 * Deterministic, so tests can state exact expectations.
 */
import { NEGATIONS, NEGATIVE, POSITIVE, STOPWORDS } from './lexicon';

const ALL_STOPWORDS = new Set(Object.values(STOPWORDS).flat());
const WORD = /[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu;

export const tokenize = (text: string): string[] => (text.toLowerCase().match(WORD) ?? []).map((w) => w.replace(/’/g, "'"));

export function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?…])\s+|\n{2,}/)
    .map((s) => s.trim())
    .filter((s) => /[\p{L}\p{N}]/u.test(s));
}

export function detectLanguage(tokens: string[]): { language: string; confidence: number } {
  let best = 'unknown';
  let bestHits = 0;
  let total = 0;
  for (const [lang, words] of Object.entries(STOPWORDS)) {
    const set = new Set(words);
    const hits = tokens.filter((t) => set.has(t)).length;
    total += hits;
    if (hits > bestHits) {
      best = lang;
      bestHits = hits;
    }
  }
  if (bestHits < 2 || bestHits / Math.max(1, tokens.length) < 0.05) return { language: 'unknown', confidence: 0 };
  return { language: best, confidence: Math.round((bestHits / total) * 100) / 100 };
}

export function keywords(tokens: string[], limit = 10): { term: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const t of tokens) {
    if (t.length < 3 || ALL_STOPWORDS.has(t) || /^\d+([.,]\d+)?$/.test(t)) continue;
    counts.set(t, (counts.get(t) ?? 0) + 1);
  }
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, limit)
    .map(([term, count]) => ({ term, count }));
}

const MONTHS = 'january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre';
const PATTERNS: Record<string, RegExp> = {
  emails: /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g,
  urls: /\bhttps?:\/\/[^\s<>"')]+/g,
  amounts: /(?:[$€£¥]\s?\d[\d,]*(?:\.\d+)?|\b\d[\d,]*(?:\.\d+)?\s?(?:USD|EUR|MXN|GBP|COP|BRL|€|\$)|\b(?:USD|EUR|MXN|GBP|COP|BRL)\s?\d[\d,]*(?:\.\d+)?)/g,
  dates: new RegExp(`\\b(?:\\d{4}-\\d{2}-\\d{2}|\\d{1,2}[/.]\\d{1,2}[/.]\\d{2,4}|(?:${MONTHS})\\.? \\d{1,2}(?:st|nd|rd|th)?,? \\d{4}|\\d{1,2} (?:de )?(?:${MONTHS})\\.?,? (?:de )?\\d{4})\\b`, 'gi'),
  phones: /(?<![\w.])\+?\d[\d\s().-]{7,}\d(?!\w)(?!\.\d)/g,
};

export function entities(text: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [kind, re] of Object.entries(PATTERNS)) {
    // A sentence's closing punctuation is not part of a URL.
    const found = [...new Set((text.match(re) ?? []).map((m) => (kind === 'urls' ? m.replace(/[.,;:!?]+$/, '') : m.trim())))];
    out[kind] = kind === 'phones' ? found.filter((p) => p.replace(/\D/g, '').length >= 8 && !/^\d{4}-\d{2}-\d{2}$/.test(p)) : found;
  }
  return out;
}

export function sentiment(tokens: string[]): { score: number; label: 'positive' | 'negative' | 'neutral'; positive: number; negative: number } {
  let pos = 0;
  let neg = 0;
  tokens.forEach((t, i) => {
    const negated = NEGATIONS.has(tokens[i - 1] ?? '') || NEGATIONS.has(tokens[i - 2] ?? '');
    if (POSITIVE.has(t)) negated ? (neg += 1) : (pos += 1);
    else if (NEGATIVE.has(t) && !NEGATIONS.has(t)) negated ? (pos += 1) : (neg += 1);
  });
  const score = pos + neg ? Math.round(((pos - neg) / (pos + neg)) * 100) / 100 : 0;
  return { score, label: score > 0.2 ? 'positive' : score < -0.2 ? 'negative' : 'neutral', positive: pos, negative: neg };
}

/** The one or two sentences that carry the most keywords, in their original order. */
export function summary(text: string, maxChars = 300): string {
  const all = sentences(text);
  if (all.length <= 2) return truncate(all.join(' '), maxChars);
  const weights = new Map(keywords(tokenize(text), 20).map((k) => [k.term, k.count]));
  const scored = all.map((s, i) => {
    const toks = tokenize(s);
    return { i, s, score: toks.reduce((sum, t) => sum + (weights.get(t) ?? 0), 0) / Math.sqrt(toks.length || 1) };
  });
  const top = [...scored].sort((a, b) => b.score - a.score || a.i - b.i).slice(0, 2).sort((a, b) => a.i - b.i);
  return truncate(top.map((x) => x.s).join(' '), maxChars);
}

const truncate = (s: string, n: number) => (s.length <= n ? s : `${s.slice(0, n - 1).trimEnd()}…`);

export function analyse(text: string) {
  const tokens = tokenize(text);
  return {
    ...detectLanguage(tokens),
    characters: text.length,
    word_count: tokens.length,
    sentence_count: sentences(text).length,
    keywords: keywords(tokens),
    entities: entities(text),
    sentiment: sentiment(tokens),
    summary: summary(text),
  };
}
