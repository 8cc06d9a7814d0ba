/**
 * Local text analysis (no model, no network): language guess from stop-words, counts, keywords
 * by term frequency, entities by pattern, lexicon sentiment with negation, extractive summary.
 * Deterministic, so tests can state exact expectations.
 */
import { tokenize } from '../adapters/tokens.ts';
import { NEGATIONS, NEGATIVE, POSITIVE, STOPWORDS } from './lexicon.ts';

const ALL_STOPWORDS = new Set(Object.values(STOPWORDS).flat());

export { tokenize };

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

const MONTHS =
  'january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre';

// Every pattern below costs a bounded amount per start position, so a text is read in linear
// time: a text is hostile input of up to 500,000 characters. A pattern like /[a-z]+@…/ retried a
// run of letters from each of its positions (quadratic: 100,000 `a` took 20 s).
const PATTERNS = {
  urls: /\bhttps?:\/\/[^\s<>"')]+/g,
  // A run of digits and commas is tried from its first digit only (the lookbehind): the currency
  // must follow the whole run, so a later start in it could only reach the same end again.
  amounts:
    /(?:[$€£¥]\s?\d[\d,]*(?:\.\d+)?|\b(?<!\d,+)\d[\d,]*(?:\.\d+)?\s?(?:USD|EUR|MXN|GBP|COP|BRL|€|\$)|\b(?:USD|EUR|MXN|GBP|COP|BRL)\s?\d[\d,]*(?:\.\d+)?)/g,
  dates: new RegExp(
    `\\b(?:\\d{4}-\\d{2}-\\d{2}|\\d{1,2}[/.]\\d{1,2}[/.]\\d{2,4}|(?:${MONTHS})\\.? \\d{1,2}(?:st|nd|rd|th)?,? \\d{4}|\\d{1,2} (?:de )?(?:${MONTHS})\\.?,? (?:de )?\\d{4})\\b`,
    'gi',
  ),
  // At most 25 characters: the longest written phone numbers ("+44 (0) 20 7946 0958") fit, and
  // a start never reads further than that.
  phones: /(?<![\w.])\+?\d[\d\s().-]{7,22}\d(?!\w)(?!\.\d)/g,
};

/** A lookup table of the ASCII characters a regular-expression class lists. */
function asciiClass(re: RegExp): Uint8Array {
  const t = new Uint8Array(128);
  for (let c = 0; c < 128; c += 1) t[c] = re.test(String.fromCharCode(c)) ? 1 : 0;
  return t;
}
const LOCAL_PART = asciiClass(/[A-Za-z0-9._%+-]/);
const DOMAIN = asciiClass(/[A-Za-z0-9.-]/);
const LETTER = asciiClass(/[A-Za-z]/);
const isIn = (t: Uint8Array, text: string, i: number) => t[text.charCodeAt(i)] === 1;

/**
 * What /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g finds, read outward from each `@`: the
 * local part back to the previous `@` or match, the domain forward to its last `.` followed by two
 * letters. Every character is read at most twice.
 */
export function* emails(text: string): Generator<string> {
  let from = 0;
  for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
    let start = at;
    while (start > from && isIn(LOCAL_PART, text, start - 1)) start -= 1;
    if (start === at) continue;
    let domainEnd = at + 1;
    while (domainEnd < text.length && isIn(DOMAIN, text, domainEnd)) domainEnd += 1;
    let end = -1;
    for (let dot = domainEnd - 3; dot > at + 1 && end === -1; dot -= 1) {
      if (text[dot] !== '.' || !isIn(LETTER, text, dot + 1) || !isIn(LETTER, text, dot + 2)) continue;
      end = dot + 3;
      while (end < domainEnd && isIn(LETTER, text, end)) end += 1;
    }
    if (end === -1) continue;
    yield text.slice(start, end);
    from = end;
  }
}

/** A sentence's closing punctuation is not part of a URL (a loop: /[.,;:!?]+$/ is quadratic on a run of dots). */
function trimClosingPunctuation(url: string): string {
  let end = url.length;
  while (end > 0 && '.,;:!?'.includes(url[end - 1])) end -= 1;
  return url.slice(0, end);
}

function* matches(text: string, re: RegExp): Generator<string> {
  for (const m of text.matchAll(re)) yield m[0];
}

const FINDERS: Record<string, (text: string) => Iterable<string>> = {
  emails,
  urls: function* (text) {
    for (const m of matches(text, PATTERNS.urls)) yield trimClosingPunctuation(m);
  },
  amounts: function* (text) {
    for (const m of matches(text, PATTERNS.amounts)) yield m.trim();
  },
  dates: function* (text) {
    for (const m of matches(text, PATTERNS.dates)) yield m.trim();
  },
  phones: function* (text) {
    for (const m of matches(text, PATTERNS.phones)) {
      const p = m.trim();
      if (p.replace(/\D/g, '').length >= 8 && !/^\d{4}-\d{2}-\d{2}$/.test(p)) yield p;
    }
  },
};

/** Distinct values per kind, the first 100 of each: the answer and the stored response stay small. */
export const MAX_ENTITIES = 100;

export function entities(text: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [kind, find] of Object.entries(FINDERS)) {
    const found = new Set<string>();
    for (const m of find(text)) {
      found.add(m);
      if (found.size === MAX_ENTITIES) break;
    }
    out[kind] = [...found];
  }
  return out;
}

export function sentiment(tokens: string[]): {
  score: number;
  label: 'positive' | 'negative' | 'neutral';
  positive: number;
  negative: number;
} {
  let pos = 0;
  let neg = 0;
  tokens.forEach((t, i) => {
    const negated = NEGATIONS.has(tokens[i - 1] ?? '') || NEGATIONS.has(tokens[i - 2] ?? '');
    if (POSITIVE.has(t)) negated ? (neg += 1) : (pos += 1);
    else if (NEGATIVE.has(t) && !NEGATIONS.has(t)) negated ? (pos += 1) : (neg += 1);
  });
  const score = pos + neg ? Math.round(((pos - neg) / (pos + neg)) * 100) / 100 : 0;
  return {
    score,
    label: score > 0.2 ? 'positive' : score < -0.2 ? 'negative' : 'neutral',
    positive: pos,
    negative: neg,
  };
}

/** The one or two sentences that carry the most keywords, in their original order. */
export function summary(text: string, maxChars = 300): string {
  return summarise(sentences(text), tokenize(text), maxChars);
}

function summarise(all: string[], tokens: string[], maxChars: number): string {
  if (all.length <= 2) return truncate(all.join(' '), maxChars);
  const weights = new Map(keywords(tokens, 20).map((k) => [k.term, k.count]));
  // The best two in one pass (a tie goes to the earlier sentence): a text can have 100,000s.
  let first = { i: -1, score: -Infinity };
  let second = first;
  all.forEach((s, i) => {
    const toks = tokenize(s);
    const score = toks.reduce((sum, t) => sum + (weights.get(t) ?? 0), 0) / Math.sqrt(toks.length || 1);
    if (score > first.score) [first, second] = [{ i, score }, first];
    else if (score > second.score) second = { i, score };
  });
  return truncate(
    [first.i, second.i]
      .sort((a, b) => a - b)
      .map((i) => all[i])
      .join(' '),
    maxChars,
  );
}

const truncate = (s: string, n: number) => (s.length <= n ? s : `${s.slice(0, n - 1).trimEnd()}…`);

export function analyse(text: string) {
  const tokens = tokenize(text);
  const all = sentences(text);
  return {
    ...detectLanguage(tokens),
    characters: text.length,
    word_count: tokens.length,
    sentence_count: all.length,
    keywords: keywords(tokens),
    entities: entities(text),
    sentiment: sentiment(tokens),
    summary: summarise(all, tokens, 300),
  };
}
