/**
 * Handing a conversation to a person (issue 40, item 4): an answer that escalates opens one
 * handoff per conversation and a `support.escalated` event; admins list, claim (one of two at
 * once), reply into the user's conversation and close; a basic key and another organization's
 * admin can do none of it and change nothing; the handoff's words are exported and erased.
 */
import { describe, expect, it } from 'vitest';

import { answerQuestion, supportUserData } from '../../activities/support/index.ts';
import { basicUser, call, newTenant, type Tenant, unique } from '../helpers/api.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();

const H = '/api/support/handoffs';

async function tenantWithKb(): Promise<Tenant> {
  const t = await newTenant();
  const res = await call('POST', '/support/knowledge', {
    key: t.adminKey,
    json: { title: 'Refund policy', body: 'You can request a refund within 30 days of purchase.', tags: ['billing'] },
  });
  expect(res.status).toBe(201);
  return t;
}

async function conversation(key: string, user_id: string): Promise<string> {
  const res = await call('POST', '/initialize_session', { key, json: { user_id } });
  expect(res.status).toBe(200);
  return res.body.conversation_id;
}

async function ask(key: string, user_id: string, conversation_id: string, prompt: string) {
  const res = await call('POST', '/support', { key, json: { prompt, user_id, conversation_id } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function secondAdmin(t: Tenant): Promise<string> {
  const res = await call('POST', '/generate_api_key', {
    key: t.adminKey,
    json: { user_id: unique('admin2'), permissions: ['admin'] },
  });
  expect(res.status).toBe(200);
  return res.body.api_key;
}

const handoffsOf = async (t: Tenant, status = '') =>
  (await call('GET', `${H}?limit=100${status ? `&status=${status}` : ''}`, { key: t.adminKey })).body.handoffs;

describe('support handoffs', () => {
  it('an answer that escalates opens one handoff per conversation, with a support.escalated event that carries no words', async () => {
    const t = await tenantWithKb();
    const user = await basicUser(t);
    const conv = await conversation(user.key, user.user_id);
    const first = await ask(user.key, user.user_id, conv, 'What is the weather in Paris tomorrow?');
    expect(first.metadata).toMatchObject({
      escalate: true,
      source: 'handoff',
      escalation_reason: 'no_answer',
      handoff_id: expect.stringMatching(/^ho_/),
    });
    expect(first.response).toMatch(/don't know/);
    // A second escalation of the same conversation joins the open handoff; concurrent ones too.
    const again = await Promise.all(
      ['Tell me a joke about cats', 'Who won the match?', 'Is the moon far?'].map((q) =>
        ask(user.key, user.user_id, conv, q),
      ),
    );
    for (const a of again) expect(a.metadata.handoff_id).toBe(first.metadata.handoff_id);
    // An answered question opens nothing.
    const answered = await ask(user.key, user.user_id, conv, 'How can I get my money back?');
    expect(answered.metadata).toMatchObject({ escalate: false, source: 'knowledge_base' });
    expect(answered.metadata.handoff_id).toBeUndefined();

    const open = await handoffsOf(t, 'open');
    expect(open).toHaveLength(1);
    expect(open[0]).toMatchObject({
      handoff_id: first.metadata.handoff_id,
      user_id: user.user_id,
      conversation_id: conv,
      reason: 'no_answer',
      question: 'What is the weather in Paris tomorrow?',
      status: 'open',
      claimed_by: null,
      replies: [],
    });

    const events = await call('GET', '/api/events?type=support.escalated', { key: t.adminKey });
    expect(events.status).toBe(200);
    expect(events.body.events).toHaveLength(1);
    expect(events.body.events[0].data).toEqual({
      handoff_id: first.metadata.handoff_id,
      conversation_id: conv,
      user_id: user.user_id,
      reason: 'no_answer',
      created_at: open[0].created_at,
    });
    expect(JSON.stringify(events.body.events[0])).not.toMatch(/Paris/);
  });

  it('a retried turn (same turn_id, as a scheduled run or an audio run retries) finds its handoff, even once closed', async () => {
    const t = await tenantWithKb();
    const user = await basicUser(t);
    const conv = await conversation(user.key, user.user_id);
    const turn = {
      organization_id: t.organization_id,
      user_id: user.user_id,
      conversation_id: conv,
      prompt: 'Do you sell umbrellas?',
      turn_id: unique('turn_retry'),
    };
    const first = await answerQuestion(turn);
    expect(first.metadata.escalation_reason).toBe('no_answer');
    expect((await call('POST', `${H}/${first.metadata.handoff_id}/close`, { key: t.adminKey })).status).toBe(200);
    const retried = await answerQuestion(turn);
    expect(retried.metadata.handoff_id).toBe(first.metadata.handoff_id);
    expect(await handoffsOf(t)).toHaveLength(1);
    const events = await call('GET', '/api/events?type=support.escalated', { key: t.adminKey });
    expect(events.body.events).toHaveLength(1);
  });

  it('a user asking for a person is handed over at once (reason asked_for_person), whatever the knowledge base says', async () => {
    const t = await tenantWithKb();
    const user = await basicUser(t);
    const conv = await conversation(user.key, user.user_id);
    const a = await ask(user.key, user.user_id, conv, 'I want to talk to a real person about my refund');
    expect(a).toMatchObject({
      message: 'Handed to a support agent',
      metadata: { escalate: true, source: 'handoff', escalation_reason: 'asked_for_person' },
    });
    expect((await handoffsOf(t))[0]).toMatchObject({ reason: 'asked_for_person', status: 'open' });
  });

  it('claim (one of two at once), reply into the conversation (a retry adds nothing), close; then a new handoff', async () => {
    const t = await tenantWithKb();
    const user = await basicUser(t);
    const conv = await conversation(user.key, user.user_id);
    const { handoff_id } = (await ask(user.key, user.user_id, conv, 'Can I bring my dog to the store?')).metadata;
    const other = await secondAdmin(t);

    const claims = await Promise.all(
      [t.adminKey, other].map((key) => call('POST', `${H}/${handoff_id}/claim`, { key })),
    );
    expect(claims.map((c) => c.status).sort()).toEqual([200, 409]);
    const winner = claims[0].status === 200 ? t.adminKey : other;
    const loser = winner === other ? t.adminKey : other;
    expect(claims.find((c) => c.status === 409)!.body.detail).toBe('Handoff is already claimed by another admin');
    // The winner claiming again (a retry) is answered; the loser still may not.
    expect((await call('POST', `${H}/${handoff_id}/claim`, { key: winner })).status).toBe(200);
    expect((await call('POST', `${H}/${handoff_id}/claim`, { key: loser })).status).toBe(409);

    const notMine = await call('POST', `${H}/${handoff_id}/reply`, { key: loser, json: { text: 'Hello from me' } });
    expect(notMine.status).toBe(409);
    expect(notMine.body.detail).toBe('Handoff is claimed by another admin');

    const headers = { 'Idempotency-Key': unique('reply') };
    const text = 'Yes, dogs on a lead are welcome in every store.';
    const replied = await call('POST', `${H}/${handoff_id}/reply`, { key: winner, json: { text }, headers });
    expect(replied.status, JSON.stringify(replied.body)).toBe(200);
    expect(replied.body.response_id).toBe(`support:reply:${handoff_id}:${replied.body.reply_id}`);
    const retried = await call('POST', `${H}/${handoff_id}/reply`, { key: winner, json: { text }, headers });
    expect(retried.status).toBe(200);
    expect(retried.body.reply_id).toBe(replied.body.reply_id);
    expect(retried.body.handoff.replies).toHaveLength(1);

    // The user reads the person's reply where they read the bot's answers.
    const seen = await call('GET', `/get_response/${conv}?user_id=${user.user_id}`, { key: user.key });
    expect(seen.status).toBe(200);
    expect(seen.body.responses.filter((r: any) => r.source === 'support_agent')).toEqual([
      expect.objectContaining({ response_id: replied.body.response_id, message: text }),
    ]);

    const closed = await call('POST', `${H}/${handoff_id}/close`, { key: winner });
    expect(closed.status).toBe(200);
    expect(closed.body.handoff).toMatchObject({ status: 'closed', closed_at: expect.any(String) });
    const late = await call('POST', `${H}/${handoff_id}/reply`, { key: winner, json: { text: 'One more thing' } });
    expect(late.status).toBe(409);
    expect(late.body.detail).toBe('Handoff is closed');
    expect((await call('POST', `${H}/${handoff_id}/close`, { key: winner })).status).toBe(409);
    expect((await call('POST', `${H}/${handoff_id}/claim`, { key: winner })).body.detail).toBe('Handoff is closed');
    expect((await handoffsOf(t, 'closed'))[0].replies).toHaveLength(1);

    // The conversation escalating again opens a new handoff.
    const next = await ask(user.key, user.user_id, conv, 'Can I bring my cat too?');
    expect(next.metadata.handoff_id).toMatch(/^ho_/);
    expect(next.metadata.handoff_id).not.toBe(handoff_id);
    expect(await handoffsOf(t, 'open')).toHaveLength(1);

    const audit = await call('GET', `/api/audit?target_id=${handoff_id}&limit=100`, { key: t.adminKey });
    expect(audit.status).toBe(200);
    const actions = audit.body.records.map((r: any) => r.action);
    expect(actions).toEqual(
      expect.arrayContaining(['support_handoff.claim', 'support_handoff.reply', 'support_handoff.close']),
    );
    expect(JSON.stringify(audit.body.records)).not.toContain('dogs on a lead');
  });

  it("a basic key and another organization's admin can neither list nor act on handoffs, and change nothing", async () => {
    const t = await tenantWithKb();
    const user = await basicUser(t);
    const conv = await conversation(user.key, user.user_id);
    const { handoff_id } = (await ask(user.key, user.user_id, conv, 'Where do penguins live?')).metadata;
    const stranger = await newTenant();

    expect((await call('GET', H, { key: user.key })).status).toBe(403);
    for (const action of ['claim', 'close'])
      expect((await call('POST', `${H}/${handoff_id}/${action}`, { key: user.key })).status).toBe(403);
    const basicReply = await call('POST', `${H}/${handoff_id}/reply`, { key: user.key, json: { text: 'self-served' } });
    expect(basicReply.status).toBe(403);

    expect((await call('GET', H, { key: stranger.adminKey })).body.handoffs).toEqual([]);
    for (const action of ['claim', 'close']) {
      const res = await call('POST', `${H}/${handoff_id}/${action}`, { key: stranger.adminKey });
      expect(res.status).toBe(404);
      expect(res.body.detail).toBe(`Handoff not found: ${handoff_id}`);
    }
    const strangerReply = await call('POST', `${H}/${handoff_id}/reply`, {
      key: stranger.adminKey,
      json: { text: 'hi' },
    });
    expect(strangerReply.status).toBe(404);
    const named = await call('GET', `${H}?organization_id=${t.organization_id}`, { key: stranger.adminKey });
    expect(named.status).toBe(403);

    // Bad input: a clear 422 naming the field, and nothing changed.
    const badStatus = await call('GET', `${H}?status=pending`, { key: t.adminKey });
    expect(badStatus.status).toBe(422);
    expect(badStatus.body.detail).toMatch(/^status/);
    await call('POST', `${H}/${handoff_id}/claim`, { key: t.adminKey });
    const empty = await call('POST', `${H}/${handoff_id}/reply`, { key: t.adminKey, json: { text: '   ' } });
    expect(empty.status).toBe(422);
    expect(empty.body.detail).toMatch(/^text/);
    const [h] = await handoffsOf(t);
    expect(h).toMatchObject({ handoff_id, status: 'claimed', replies: [] });
    const unknown = await call('POST', `${H}/ho_nope/reply`, { key: t.adminKey, json: { text: 'x' } });
    expect(unknown.status).toBe(404);
  });

  it("exports the handoff's question and replies to the user, and erases them with the user", async () => {
    const t = await tenantWithKb();
    const user = await basicUser(t);
    const bystander = await basicUser(t);
    const conv = await conversation(user.key, user.user_id);
    const theirConv = await conversation(bystander.key, bystander.user_id);
    const { handoff_id } = (await ask(user.key, user.user_id, conv, 'My neighbour Zed stole my voucher?!')).metadata;
    await ask(bystander.key, bystander.user_id, theirConv, 'Is there parking at the mall?');
    await call('POST', `${H}/${handoff_id}/claim`, { key: t.adminKey });
    const reply = await call('POST', `${H}/${handoff_id}/reply`, {
      key: t.adminKey,
      json: { text: 'We are looking into it.' },
    });
    expect(reply.status).toBe(200);

    const scope = { organization_id: t.organization_id, user_id: user.user_id, idp_id: user.idp_id };
    const exported = await supportUserData.export(scope);
    expect(exported.data.handoffs).toEqual([
      expect.objectContaining({
        handoff_id,
        question: 'My neighbour Zed stole my voucher?!',
        replies: [expect.objectContaining({ text: 'We are looking into it.' })],
      }),
    ]);
    const adminScope = { organization_id: t.organization_id, user_id: t.admin.user_id, idp_id: t.admin.idp_id };
    expect((await supportUserData.export(adminScope)).data.handoffs_taken).toEqual([
      expect.objectContaining({ handoff_id, replies_sent: 1 }),
    ]);

    const erased = await supportUserData.erase({ ...scope, tombstone: 'del_handoffs' });
    expect(erased).toMatchObject({ handoffs_deleted: 1 });
    expect((await supportUserData.export(scope)).data.handoffs).toEqual([]);
    const left = await handoffsOf(t);
    expect(left.map((h: any) => h.user_id)).toEqual([bystander.user_id]);
    expect(JSON.stringify(left)).not.toContain('Zed');
    expect((await supportUserData.erase({ ...scope, tombstone: 'del_handoffs' })).handoffs_deleted).toBe(0);

    // An erased admin's name leaves the handoffs they took.
    await call('POST', `${H}/${left[0].handoff_id}/claim`, { key: t.adminKey });
    await supportUserData.erase({ ...adminScope, tombstone: 'del_admin' });
    expect((await handoffsOf(t))[0].claimed_by).toBe('del_admin');
  });
});
