import { describe, expect, it } from 'vitest';
import { analyse, detectLanguage, entities, keywords, sentiment, summary, tokenize } from '../../activities/text/analysis';
import { cosine, hashedEmbedding, HASHED_DIMENSIONS } from '../../activities/engines/embeddings';

describe('local text analysis', () => {
  it('guesses the language from stop-words, or says unknown', () => {
    expect(detectLanguage(tokenize('The delivery was late and the driver did not call me at all.')).language).toBe('en');
    expect(detectLanguage(tokenize('El pedido llegó tarde y el repartidor no me llamó para avisar.')).language).toBe('es');
    expect(detectLanguage(tokenize('Le colis est arrivé en retard et le livreur ne nous a pas appelé.')).language).toBe('fr');
    expect(detectLanguage(tokenize('XJ-9 42 qwerty')).language).toBe('unknown');
  });

  it('finds emails, urls, amounts, dates and phone numbers', () => {
    const e = entities('Write to ana.gomez@example.com or see https://shop.example.com/orders/77. Paid $1,250.50 and 300 MXN on 2026-03-05, due March 5, 2026; call +52 55 1234 5678.');
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
    const text = 'Loyalty points expire after a year. Customers asked why their loyalty points vanished. The weather was nice. Support explained the loyalty points policy.';
    expect(keywords(tokenize(text)).slice(0, 2)).toEqual([{ term: 'loyalty', count: 3 }, { term: 'points', count: 3 }]);
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
