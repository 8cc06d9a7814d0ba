import { describe, expect, it } from 'vitest';

import { basicUser, call, newTenant, type Tenant } from '../helpers/api.ts';

const ARTICLES = [
  {
    title: 'Refund policy',
    body: 'You can request a refund within 30 days of purchase. Open the order in the app and choose Request refund.\n\nRefunds reach your card in 5 to 10 business days.',
    tags: ['billing'],
  },
  {
    title: 'Resetting your password',
    body: 'If you forgot your password, tap Forgot password on the sign-in screen. We email you a reset link that is valid for one hour.',
    tags: ['account'],
  },
  {
    title: 'How loyalty points expire',
    body: 'Points expire 12 months after they are earned. Redeeming gifts uses the oldest points first.',
    tags: ['loyalty'],
  },
  {
    title: 'Scanning receipts',
    body: 'Take a photo of the whole receipt in good light. Receipts older than 30 days cannot be scanned. Points appear after validation.',
    tags: ['loyalty', 'receipts'],
  },
  {
    title: 'Shipping times',
    body: 'Orders ship within 2 business days. Delivery takes 3 to 5 days by courier.',
    tags: ['orders'],
  },
];

async function kb(): Promise<{ t: Tenant; ids: Record<string, string> }> {
  const t = await newTenant();
  const ids: Record<string, string> = {};
  for (const a of ARTICLES) {
    const res = await call('POST', '/support/knowledge', { key: t.adminKey, json: a });
    expect(res.status).toBe(201);
    ids[a.title] = res.body.article.id;
  }
  return { t, ids };
}

async function conversation(t: Tenant, key: string, user_id: string): Promise<string> {
  const res = await call('POST', '/initialize_session', { key, json: { user_id } });
  expect(res.status).toBe(200);
  return res.body.conversation_id;
}

describe('support Q&A', () => {
  it.each([
    ['How can I get my money back?', 'Refund policy', /refund within 30 days/],
    ['I cannot log in, I forgot my passcode', 'Resetting your password', /Forgot password/],
    ['When do my rewards lapse?', 'How loyalty points expire', /expire 12 months/],
    ['how do I upload a picture of my ticket', 'Scanning receipts', /photo of the whole receipt/],
    ['when will my parcel arrive', 'Shipping times', /3 to 5 days/],
  ])('answers the paraphrase %j from and citing %j', async (question, title, expected) => {
    const { t, ids } = await kb();
    const user = await basicUser(t);
    const conversation_id = await conversation(t, user.key, user.user_id);
    const res = await call('POST', '/support', {
      key: user.key,
      json: { prompt: question, user_id: user.user_id, conversation_id },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      message: 'Question answered',
      metadata: { source_agent: 'local_retrieval', escalate: false, processed_at: expect.any(String) },
    });
    expect(res.body.response).toMatch(expected);
    expect(res.body.response).toContain(`[1] ${title}`);
    expect(res.body.metadata.citations[0]).toMatchObject({ article_id: ids[title], title });
  });

  it('says it does not know and offers escalation for unrelated questions; stores each turn', async () => {
    const { t } = await kb();
    const user = await basicUser(t);
    const conversation_id = await conversation(t, user.key, user.user_id);
    for (const prompt of [
      'What is the weather in Paris tomorrow?',
      'Tell me a joke about cats',
      'Can I cancel my subscription?',
    ]) {
      const res = await call('POST', '/support', {
        key: user.key,
        json: { prompt, user_id: user.user_id, conversation_id },
      });
      expect(res.body, prompt).toMatchObject({ success: true, metadata: { escalate: true, citations: [] } });
      expect(res.body.response).toMatch(/don't know/);
    }
    await call('POST', '/support', {
      key: user.key,
      json: { prompt: 'how long do refunds take', user_id: user.user_id, conversation_id },
    });
    const stored = await call('GET', `/get_response/${conversation_id}?user_id=${user.user_id}`, { key: user.key });
    expect(stored.status).toBe(200);
    expect(stored.body.responses).toHaveLength(4);
    expect(stored.body.responses[0]).toMatchObject({
      source: 'support',
      metadata: { escalate: false, citations: [{ title: 'Refund policy' }] },
    });
    expect(stored.body.responses[0].message).toMatch(/5 to 10 business days/);
    expect(stored.body.responses.slice(1).every((r: any) => r.metadata.escalate === true)).toBe(true);
  });

  it('refuses a conversation that is not the user’s with 400, and empty prompts with 422', async () => {
    const { t } = await kb();
    const a = await basicUser(t);
    const b = await basicUser(t);
    const theirs = await conversation(t, b.key, b.user_id);
    const res = await call('POST', '/support', {
      key: a.key,
      json: { prompt: 'refund?', user_id: a.user_id, conversation_id: theirs },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ detail: `Invalid conversation ID: ${theirs}` });
    expect(
      (
        await call('POST', '/support', {
          key: a.key,
          json: { prompt: 'refund?', user_id: a.user_id, conversation_id: 'conv_nope' },
        })
      ).body,
    ).toEqual({ detail: 'Invalid conversation ID: conv_nope' });
    const empty = await call('POST', '/support', {
      key: a.key,
      json: { prompt: '  ', user_id: a.user_id, conversation_id: theirs },
    });
    expect(empty.status).toBe(422);
    expect(empty.body.detail).toMatch(/^prompt/);
  });

  it('lets admins manage the knowledge base, per organization; a deleted article is no longer cited', async () => {
    const { t, ids } = await kb();
    const user = await basicUser(t);
    const other = await newTenant();
    expect((await call('POST', '/support/knowledge', { key: user.key, json: ARTICLES[0] })).status).toBe(403);
    const listed = await call('GET', '/support/knowledge', { key: user.key });
    expect(listed.body).toMatchObject({ success: true, total: 5 });
    expect((await call('GET', '/support/knowledge', { key: other.adminKey })).body.total).toBe(0);
    expect((await call('DELETE', `/support/knowledge/${ids['Refund policy']}`, { key: other.adminKey })).status).toBe(
      404,
    );
    expect((await call('DELETE', `/support/knowledge/${ids['Refund policy']}`, { key: t.adminKey })).status).toBe(200);
    const conversation_id = await conversation(t, user.key, user.user_id);
    const res = await call('POST', '/support', {
      key: user.key,
      json: { prompt: 'How can I get my money back?', user_id: user.user_id, conversation_id },
    });
    expect(res.body.metadata.escalate).toBe(true);
    // another organization's knowledge is never used
    const otherUser = await basicUser(other);
    const conv = await conversation(other, otherUser.key, otherUser.user_id);
    expect(
      (
        await call('POST', '/support', {
          key: otherUser.key,
          json: { prompt: 'when will my parcel arrive', user_id: otherUser.user_id, conversation_id: conv },
        })
      ).body.metadata.escalate,
    ).toBe(true);
  });
});
