import { Worker } from 'node:worker_threads';

import { afterAll, describe, expect, it } from 'vitest';

import { cosine, HASHED_DIMENSIONS, hashedEmbedding } from '../../activities/adapters/embeddings.ts';
import {
  analyse,
  detectLanguage,
  entities,
  keywords,
  MAX_ENTITIES,
  sentiment,
  summary,
  tokenize,
} from '../../activities/text/analysis.ts';
import { analyseOffThread, stopAnalysisThread } from '../../activities/text/analysis-runner.ts';

describe('local text analysis', () => {
  it('guesses the language from stop-words, or says unknown', () => {
    expect(detectLanguage(tokenize('The delivery was late and the driver did not call me at all.')).language).toBe(
      'en',
    );
    expect(detectLanguage(tokenize('El pedido llegó tarde y el repartidor no me llamó para avisar.')).language).toBe(
      'es',
    );
    expect(detectLanguage(tokenize('Le colis est arrivé en retard et le livreur ne nous a pas appelé.')).language).toBe(
      'fr',
    );
    expect(detectLanguage(tokenize('XJ-9 42 qwerty')).language).toBe('unknown');
  });

  it('finds emails, urls, amounts, dates and phone numbers', () => {
    const e = entities(
      'Write to ana.gomez@example.com or see https://shop.example.com/orders/77. Paid $1,250.50 and 300 MXN on 2026-03-05, due March 5, 2026; call +52 55 1234 5678.',
    );
    expect(e.emails).toEqual(['ana.gomez@example.com']);
    expect(e.urls).toEqual(['https://shop.example.com/orders/77']);
    expect(e.amounts).toEqual(['$1,250.50', '300 MXN']);
    expect(e.dates).toEqual(['2026-03-05', 'March 5, 2026']);
    expect(e.phones).toEqual(['+52 55 1234 5678']);
  });

  it('scores sentiment with negation', () => {
    expect(sentiment(tokenize('Great service, fast and friendly. I love it')).label).toBe('positive');
    expect(sentiment(tokenize('Terrible app, it crashes and support was rude')).label).toBe('negative');
    expect(sentiment(tokenize('The food was not good')).label).toBe('negative');
    expect(sentiment(tokenize('The package arrived on Tuesday')).label).toBe('neutral');
    expect(sentiment(tokenize('good bad')).score).toBe(0);
  });

  it('ranks keywords without stop-words and summarises with the sentences that carry them', () => {
    const text =
      'Loyalty points expire after a year. Customers asked why their loyalty points vanished. The weather was nice. Support explained the loyalty points policy.';
    expect(keywords(tokenize(text)).slice(0, 2)).toEqual([
      { term: 'loyalty', count: 3 },
      { term: 'points', count: 3 },
    ]);
    expect(summary(text)).not.toContain('weather');
    const a = analyse(text);
    expect(a).toMatchObject({ language: 'en', word_count: 23, sentence_count: 4 });
  });

  it('embeds into a normalized fixed-size vector where related texts are closer', () => {
    const a = hashedEmbedding('refund for a late pizza delivery');
    const b = hashedEmbedding('my pizza delivery was late, I want a refund');
    const c = hashedEmbedding('quarterly tax report for the accounting department');
    expect(a).toHaveLength(HASHED_DIMENSIONS);
    expect(cosine(a, a)).toBeCloseTo(1, 4);
    expect(cosine(a, b)).toBeGreaterThan(cosine(a, c) + 0.2);
    expect(hashedEmbedding('refund for a late pizza delivery')).toEqual(a);
  });
});

/**
 * Adversarial texts, each aimed at a pattern that used to backtrack. The analysis runs in a thread
 * so a pattern that regresses fails the test at the cap instead of hanging the run for minutes.
 */
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
import('tsx/esm/api').then(async ({ tsImport }) => {
  const mod = await tsImport(workerData.module, workerData.parent);
  parentPort.on('message', ({ fn, text }) => {
    const started = performance.now();
    mod[fn](text);
    parentPort.postMessage(performance.now() - started);
  });
  parentPort.postMessage('ready');
});`;

let thread: Promise<Worker> | undefined;
function analysisThread(): Promise<Worker> {
  thread ??= new Promise((resolve, reject) => {
    const w = new Worker(THREAD, {
      eval: true,
      workerData: {
        module: './analysis.ts',
        parent: new URL('../../activities/text/analysis.ts', import.meta.url).href,
      },
    });
    w.once('message', () => resolve(w));
    w.once('error', reject);
  });
  return thread;
}

/** Milliseconds the function took on the text, or a rejection once `capMs` has passed. */
async function timed(fn: string, text: string, capMs: number): Promise<number> {
  const w = await analysisThread();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      thread = undefined;
      void w.terminate();
      reject(new Error(`${fn} did not finish within ${capMs} ms`));
    }, capMs);
    w.once('message', (ms: number) => {
      clearTimeout(timer);
      resolve(ms);
    });
    w.postMessage({ fn, text });
  });
}

afterAll(async () => (await thread?.catch(() => undefined))?.terminate());

const N = 500_000;
const fill = (unit: string, prefix = '', suffix = '') =>
  prefix + unit.repeat(Math.floor((N - prefix.length - suffix.length) / unit.length)) + suffix;

// Each aimed at a pattern: a long run it retried from every start position.
const ADVERSARIAL: [string, string][] = [
  ['letters (email local part)', fill('a')],
  ['a@ (email around each @)', fill('a@')],
  ['@ then a domain without a dot', fill('a', 'x@')],
  ['@ then a domain of one-letter labels', fill('a.', 'x@')],
  ['dots (email, sentence split)', fill('.')],
  ['digits (phones, amounts)', fill('1')],
  ['digits and commas (amounts)', fill('1,')],
  ['digits and dots (amounts, dates)', fill('1.')],
  ['spaced digits (phones)', fill('1 ')],
  ['digits then a letter (phones)', fill('1', ' ', 'x')],
  ['parenthesised digits (phones)', fill('(1')],
  ['http:// (urls)', fill('http://')],
  ['a URL with a long run of trailing-looking dots', fill('.', 'http://a', 'b')],
  ['currency words (amounts)', fill('USD1')],
  ['month names (dates)', fill('may 1 ')],
  ['spaces after a dot (sentences)', fill(' ', '.')],
  ['blank lines (sentences)', fill('\n')],
  ['apostrophes and hyphens (words)', fill("a'-")],
];

describe('analysis of adversarial text', () => {
  it.each(ADVERSARIAL)(
    'analyses 500,000 characters of %s within 2 s',
    async (_name, text) => {
      expect(text.length).toBeGreaterThan(N - 10);
      expect(await timed('analyse', text, 2000)).toBeLessThan(2000);
    },
    20_000,
  );
});

// The patterns as they were before they were made linear: the reference on texts short enough for
// their backtracking not to matter.
const OLD_MONTHS =
  'january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre';
const OLD_PATTERNS: Record<string, RegExp> = {
  emails: /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g,
  urls: /\bhttps?:\/\/[^\s<>"')]+/g,
  amounts:
    /(?:[$€£¥]\s?\d[\d,]*(?:\.\d+)?|\b\d[\d,]*(?:\.\d+)?\s?(?:USD|EUR|MXN|GBP|COP|BRL|€|\$)|\b(?:USD|EUR|MXN|GBP|COP|BRL)\s?\d[\d,]*(?:\.\d+)?)/g,
  dates: new RegExp(
    `\\b(?:\\d{4}-\\d{2}-\\d{2}|\\d{1,2}[/.]\\d{1,2}[/.]\\d{2,4}|(?:${OLD_MONTHS})\\.? \\d{1,2}(?:st|nd|rd|th)?,? \\d{4}|\\d{1,2} (?:de )?(?:${OLD_MONTHS})\\.?,? (?:de )?\\d{4})\\b`,
    'gi',
  ),
  phones: /(?<![\w.])\+?\d[\d\s().-]{7,}\d(?!\w)(?!\.\d)/g,
};
function oldEntities(text: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [kind, re] of Object.entries(OLD_PATTERNS)) {
    const found = [
      ...new Set((text.match(re) ?? []).map((m) => (kind === 'urls' ? m.replace(/[.,;:!?]+$/, '') : m.trim()))),
    ];
    out[kind] =
      kind === 'phones'
        ? found.filter((p) => p.replace(/\D/g, '').length >= 8 && !/^\d{4}-\d{2}-\d{2}$/.test(p))
        : found;
  }
  return out;
}

/** Deterministic texts made of the pieces the patterns look for (mulberry32: the same run every time). */
const PIECES = [
  'a',
  'Zb',
  'x_',
  '1',
  '42',
  '2026',
  '9,5',
  '.',
  ',',
  '@',
  '.com',
  '.io',
  '-',
  ' ',
  '\n',
  '(',
  ')',
  '+',
  '$',
  '€',
  '/',
  ':',
  'http://',
  'https://',
  'USD',
  'mxn',
  'May',
  ' de ',
  '%',
  "'",
  '!',
  'st',
];
const NUMBER_PIECES = ['1', '42', '555', '2026', ' ', ' ', '(', ')', '-', '.', ',', '+', 'x', '$', 'USD', '€'];

function* texts(count: number, maxPieces: number, pieces = PIECES): Generator<string> {
  let seed = 13;
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = 0; i < count; i += 1) {
    let s = '';
    const n = 1 + Math.floor(random() * maxPieces);
    for (let j = 0; j < n; j += 1) s += pieces[Math.floor(random() * pieces.length)];
    yield s;
  }
}

describe('linear entity patterns', () => {
  it('find what the backtracking patterns found on ordinary texts', () => {
    const e = entities(
      'Mail ana.gomez@example.com, bo@mail.example.org. Site https://shop.example.com/a?b=1... Paid $1,250.50, 300 MXN, EUR 12 and 1,000,000 USD on 2026-03-05 or 5 de marzo de 2026; call +52 55 1234 5678 or (555) 123-4567.',
    );
    expect(e).toEqual(
      oldEntities(
        'Mail ana.gomez@example.com, bo@mail.example.org. Site https://shop.example.com/a?b=1... Paid $1,250.50, 300 MXN, EUR 12 and 1,000,000 USD on 2026-03-05 or 5 de marzo de 2026; call +52 55 1234 5678 or (555) 123-4567.',
      ),
    );
    expect(e.emails).toEqual(['ana.gomez@example.com', 'bo@mail.example.org']);
    expect(e.amounts).toEqual(['$1,250.50', '300 MXN', 'EUR 12', '1,000,000 USD']);
  });

  it('find exactly what the old emails, urls and dates patterns found, on 20,000 generated texts', () => {
    let found = 0;
    for (const s of texts(20_000, 14)) {
      const now = entities(s);
      const before = oldEntities(s);
      for (const kind of ['emails', 'urls', 'dates'])
        expect(now[kind], `${kind} in ${JSON.stringify(s)}`).toEqual(before[kind]);
      found += now.emails.length + now.urls.length;
    }
    expect(found).toBeGreaterThan(1000); // the generated texts do exercise the patterns
  });

  it('find the same phone numbers on texts within the 25-character bound, and the same amounts unless a number run starts inside a word', () => {
    let phones = 0;
    let amounts = 0;
    for (const s of texts(20_000, 12, NUMBER_PIECES)) {
      const now = entities(s);
      const before = oldEntities(s);
      if (s.length <= 25) {
        expect(now.phones, JSON.stringify(s)).toEqual(before.phones);
        phones += now.phones.length;
      }
      // The only difference: a run of digits and commas is read from its first digit only, also
      // when that digit follows a letter ("x1,2 USD" gave "2 USD") or was part of the previous
      // amount ("$1.5,2 USD" gave "$1.5" and "2 USD").
      if (!/[A-Za-z_]\d[\d,]*,\d|\.\d+,[\d,]*\d/.test(s)) {
        expect(now.amounts, JSON.stringify(s)).toEqual(before.amounts);
        amounts += now.amounts.length;
      }
    }
    expect(phones).toBeGreaterThan(500);
    expect(amounts).toBeGreaterThan(500);
  });

  it('keeps the first 100 distinct values of each kind', () => {
    const many = Array.from({ length: 150 }, (_, i) => `u${i}@example.com`).join(' ');
    expect(entities(many).emails).toHaveLength(MAX_ENTITIES);
    expect(entities(many).emails[99]).toBe('u99@example.com');
  });
});

describe('analysis off the event loop', () => {
  afterAll(() => stopAnalysisThread());

  it('answers the analysis and the local embedding from its thread', async () => {
    const text = 'Refund for a late pizza delivery. Write to ana@example.com!';
    expect(await analyseOffThread(text, { embed: true })).toEqual({
      analysis: analyse(text),
      vector: hashedEmbedding(text),
    });
  });

  it('stops an analysis over its budget with a 503 and analyses the next text in a fresh thread', async () => {
    await expect(analyseOffThread('word '.repeat(100_000), { embed: true, budgetMs: 1 })).rejects.toMatchObject({
      status: 503,
      message: expect.stringMatching(/^text: the analysis took longer than/),
    });
    expect((await analyseOffThread('Good service.', { embed: false })).analysis.sentiment.label).toBe('positive');
  });
});
