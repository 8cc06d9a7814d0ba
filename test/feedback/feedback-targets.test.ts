/**
 * Feedback tied to what it judges (issue 40, item 10): a support conversation and an answer of it
 * (`response_id`, an answer's `support:<turn_id>` or an agent's reply's), checked to be the user's
 * before anything is stored, and the statistics grouped by either.
 */
import { describe, expect, it } from 'vitest';

import { basicUser, call, newTenant, type Tenant } from '../helpers/api.ts';

async function answered(t: Tenant, user: { key: string; user_id: string }) {
  const session = await call('POST', '/initialize_session', { key: user.key, json: { user_id: user.user_id } });
  const conversation_id = session.body.conversation_id as string;
  const ask = async (prompt: string) =>
    (await call('POST', '/support', { key: user.key, json: { prompt, user_id: user.user_id, conversation_id } })).body
      .metadata.response_id as string;
  return { conversation_id, refund: await ask('How do I get a refund?'), weather: await ask('Will it rain today?') };
}

async function tenant(): Promise<Tenant> {
  const t = await newTenant();
  await call('POST', '/support/knowledge', {
    key: t.adminKey,
    json: { title: 'Refund policy', body: 'You can request a refund within 30 days of purchase.' },
  });
  return t;
}

const submit = (key: string, json: Record<string, unknown>) =>
  call('POST', '/api/feedback/submit', { key, json: { feedback_type: 'general', ...json } });

async function stats(t: Tenant, query: string) {
  const res = await call('GET', `/api/feedback/stats${query}`, { key: t.adminKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.stats;
}

describe('feedback targets', () => {
  it('stores feedback on an answer and on a conversation, and groups the statistics by either', async () => {
    const t = await tenant();
    const user = await basicUser(t);
    const a = await answered(t, user);
    expect(a.refund).toMatch(/^support:turn_/);
    const ok = async (json: Record<string, unknown>) => {
      const res = await submit(user.key, { user_id: user.user_id, ...json });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    };
    await ok({ rating: 5, comment: 'Clear answer', response_id: a.refund });
    await ok({ rating: 3, comment: 'Fine', response_id: a.refund, conversation_id: a.conversation_id });
    await ok({ rating: 1, comment: 'It did not know', response_id: a.weather });
    await ok({ rating: 4, comment: 'Nice chat overall', conversation_id: a.conversation_id });
    await ok({ rating: 2, comment: 'Not about any answer' });

    const byResponse = await stats(t, '?group_by=response_id');
    expect(byResponse).toMatchObject({ total_feedback: 5, group_by: 'response_id', groups_total: 2 });
    expect(byResponse.groups).toEqual([
      expect.objectContaining({ response_id: a.refund, total_feedback: 2, average_rating: 4 }),
      expect.objectContaining({ response_id: a.weather, total_feedback: 1, average_rating: 1 }),
    ]);
    // An answer's feedback counts in its conversation too.
    const byConversation = await stats(t, '?group_by=conversation_id&groups_limit=1');
    expect(byConversation).toMatchObject({ groups_total: 1 });
    expect(byConversation.groups).toEqual([
      expect.objectContaining({ conversation_id: a.conversation_id, total_feedback: 4, average_rating: 13 / 4 }),
    ]);
    expect((await stats(t, '')).groups).toBeUndefined();
  });

  it("a basic key cannot attach feedback to another user's conversation or answer: 404, nothing stored", async () => {
    const t = await tenant();
    const victim = await basicUser(t);
    const attacker = await basicUser(t);
    const v = await answered(t, victim);
    const mine = await answered(t, attacker);
    for (const target of [
      { response_id: v.refund },
      { conversation_id: v.conversation_id },
      { conversation_id: mine.conversation_id, response_id: v.refund },
      { response_id: 'support:turn_nope' },
      { response_id: 'text:abc' },
      { conversation_id: 'conv_nope' },
    ]) {
      const res = await submit(attacker.key, { user_id: attacker.user_id, rating: 1, comment: 'bad', ...target });
      expect(res.status, JSON.stringify(target)).toBe(404);
      expect(res.body.detail).toMatch(/^(Response|Conversation) not found: /);
    }
    // Naming the victim as the user is refused before anything else.
    const asVictim = await submit(attacker.key, {
      user_id: victim.user_id,
      rating: 1,
      comment: 'x',
      response_id: v.refund,
    });
    expect(asVictim.status).toBe(403);
    // Two answers of the user's own, of different conversations: 422 naming the field.
    const mismatch = await submit(attacker.key, {
      user_id: attacker.user_id,
      rating: 3,
      comment: 'x',
      conversation_id: 'conv_other',
      response_id: mine.refund,
    });
    expect(mismatch.status).toBe(422);
    expect(mismatch.body.detail).toMatch(/^response_id: /);
    expect((await stats(t, '')).total_feedback).toBe(0);

    // Another organization's admin sees none of it, and cannot name the answer either.
    const other = await newTenant();
    const foreign = await submit(other.adminKey, {
      user_id: other.admin.user_id,
      rating: 5,
      comment: 'x',
      response_id: v.refund,
    });
    expect(foreign.status).toBe(404);
    expect((await stats(other, '?group_by=response_id')).groups).toEqual([]);
    const named = await call('GET', `/api/feedback/stats?organization_id=${t.organization_id}`, {
      key: other.adminKey,
    });
    expect(named.status).toBe(403);
  });

  it('feedback on a support agent reply names it; bad group_by is 422', async () => {
    const t = await tenant();
    const user = await basicUser(t);
    const a = await answered(t, user);
    const [handoff] = (await call('GET', '/api/support/handoffs?status=open', { key: t.adminKey })).body.handoffs;
    await call('POST', `/api/support/handoffs/${handoff.handoff_id}/claim`, { key: t.adminKey });
    const reply = await call('POST', `/api/support/handoffs/${handoff.handoff_id}/reply`, {
      key: t.adminKey,
      json: { text: 'No rain today.' },
    });
    const res = await submit(user.key, {
      user_id: user.user_id,
      rating: 5,
      comment: 'A person answered!',
      response_id: reply.body.response_id,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const grouped = await stats(t, '?group_by=conversation_id');
    expect(grouped.groups).toEqual([
      expect.objectContaining({ conversation_id: a.conversation_id, total_feedback: 1 }),
    ]);
    const bad = await call('GET', '/api/feedback/stats?group_by=user_id', { key: t.adminKey });
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toMatch(/^group_by/);
  });
});
