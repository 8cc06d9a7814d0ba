/**
 * Curated question→answer pairs (issue 40, item 4): an admin's pair answers a question that
 * matches it well enough, word for word and saying so, before an answer composed from the
 * knowledge base; a question that does not match is answered as before. Admin only, per
 * organization; bad input changes nothing.
 */
import { describe, expect, it } from 'vitest';

import { matchCurated } from '../../activities/support/retrieval.ts';
import { basicUser, call, newTenant, type Tenant } from '../helpers/api.ts';

const C = '/api/support/curated';
const PAIR = {
  question: 'How do I change my delivery address?',
  answer: 'Open Orders, pick the order and tap Change address before it ships.',
};

async function setup(): Promise<{ t: Tenant; user: { key: string; user_id: string }; conv: string; id: string }> {
  const t = await newTenant();
  // An article that also speaks of delivery: the curated pair must win where it matches.
  await call('POST', '/support/knowledge', {
    key: t.adminKey,
    json: {
      title: 'Shipping times',
      body: 'Orders ship within 2 business days. Delivery takes 3 to 5 days by courier.',
    },
  });
  const created = await call('POST', C, { key: t.adminKey, json: PAIR });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  expect(created.body.curated).toMatchObject({ ...PAIR, curated_id: expect.stringMatching(/^cur_/) });
  const user = await basicUser(t);
  const session = await call('POST', '/initialize_session', { key: user.key, json: { user_id: user.user_id } });
  return { t, user, conv: session.body.conversation_id, id: created.body.curated.curated_id };
}

const ask = async (s: { user: { key: string; user_id: string }; conv: string }, prompt: string) => {
  const res = await call('POST', '/support', {
    key: s.user.key,
    json: { prompt, user_id: s.user.user_id, conversation_id: s.conv },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

describe('curated answers', () => {
  it('answers a matching paraphrase with the curated answer, saying its source, before the knowledge base', async () => {
    const s = await setup();
    const a = await ask(s, 'Can I change the delivery address of my order?');
    expect(a.response).toBe(PAIR.answer);
    expect(a.metadata).toMatchObject({ source: 'curated', source_agent: 'curated', curated_id: s.id, escalate: false });
    // Not matching it: the knowledge base answers as before.
    const kb = await ask(s, 'How long does delivery take?');
    expect(kb.metadata).toMatchObject({ source: 'knowledge_base', escalate: false });
    expect(kb.response).toMatch(/3 to 5 days/);
  });

  it('an edited pair answers with its new words at once; a deleted one no longer answers', async () => {
    const s = await setup();
    const edited = await call('PUT', `${C}/${s.id}`, {
      key: s.t.adminKey,
      json: { question: PAIR.question, answer: 'Write to us before the order ships.' },
    });
    expect(edited.status).toBe(200);
    expect(edited.body.curated).toMatchObject({
      question: PAIR.question,
      answer: 'Write to us before the order ships.',
    });
    expect((await ask(s, 'how do I change my delivery address')).response).toBe('Write to us before the order ships.');
    const listed = await call('GET', C, { key: s.t.adminKey });
    expect(listed.body).toMatchObject({ total: 1, has_more: false, curated: [{ curated_id: s.id }] });
    expect((await call('DELETE', `${C}/${s.id}`, { key: s.t.adminKey })).status).toBe(200);
    expect((await ask(s, 'how do I change my delivery address')).metadata.source).not.toBe('curated');
    expect((await call('DELETE', `${C}/${s.id}`, { key: s.t.adminKey })).status).toBe(404);
  });

  it("a basic key cannot manage pairs; another organization's admin neither sees nor changes them; its users do not get them", async () => {
    const s = await setup();
    expect((await call('GET', C, { key: s.user.key })).status).toBe(403);
    expect((await call('POST', C, { key: s.user.key, json: PAIR })).status).toBe(403);
    const pwned = { question: 'pwned?', answer: 'pwned' };
    expect((await call('PUT', `${C}/${s.id}`, { key: s.user.key, json: pwned })).status).toBe(403);
    expect((await call('DELETE', `${C}/${s.id}`, { key: s.user.key })).status).toBe(403);

    const other = await newTenant();
    expect((await call('GET', C, { key: other.adminKey })).body.curated).toEqual([]);
    expect((await call('PUT', `${C}/${s.id}`, { key: other.adminKey, json: pwned })).status).toBe(404);
    expect((await call('DELETE', `${C}/${s.id}`, { key: other.adminKey })).status).toBe(404);
    const theirs = await basicUser(other);
    const session = await call('POST', '/initialize_session', { key: theirs.key, json: { user_id: theirs.user_id } });
    const answer = await ask({ user: theirs, conv: session.body.conversation_id }, PAIR.question);
    expect(answer.metadata.source).not.toBe('curated');

    const [kept] = (await call('GET', C, { key: s.t.adminKey })).body.curated;
    expect(kept).toMatchObject(PAIR);
  });

  it('refuses bad input with a 422 naming the field and stores nothing', async () => {
    const s = await setup();
    const empty = await call('POST', C, { key: s.t.adminKey, json: { question: '  ', answer: 'x' } });
    expect(empty.status).toBe(422);
    expect(empty.body.detail).toMatch(/^question/);
    const long = await call('POST', C, { key: s.t.adminKey, json: { question: 'q', answer: 'a'.repeat(4001) } });
    expect(long.status).toBe(422);
    expect(long.body.detail).toMatch(/^answer/);
    const half = await call('PUT', `${C}/${s.id}`, { key: s.t.adminKey, json: { question: 'Only a question?' } });
    expect(half.status).toBe(422);
    expect(half.body.detail).toMatch(/^answer/);
    expect((await call('GET', C, { key: s.t.adminKey })).body.curated[0]).toMatchObject(PAIR);
    expect((await call('GET', C, { key: s.t.adminKey })).body.total).toBe(1);
  });
});

describe('matchCurated', () => {
  const pairs = [
    { id: 'a', ...PAIR },
    { id: 'b', question: 'How do I delete my account?', answer: 'Settings, then Delete account.' },
  ];
  it.each([
    ['Can I change the delivery address of my order?', 'a'],
    ['change delivery address', 'a'],
    ['how can I remove my profile', 'b'],
  ])('%j matches %j', (q, id) => {
    expect(matchCurated(pairs, q)?.pair.id).toBe(id);
  });
  it.each(['How long does delivery take?', 'address', 'What is my account balance and points history this year?', ''])(
    '%j matches none',
    (q) => {
      expect(matchCurated(pairs, q)).toBeUndefined();
    },
  );
});
