/**
 * The knowledge index each process keeps (activities/support/support.ts): built once, kept until
 * the organization's knowledge version moves. An article written by another process (here: this
 * test process, writing to the store and moving the version) is answered from within seconds.
 */
import { describe, expect, it } from 'vitest';

import { versionsOf } from '../../activities/core/db/index.ts';
import { KnowledgeArticle } from '../../activities/support/models.ts';
import { basicUser, call, newTenant } from '../helpers/api.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();

describe('the knowledge index between article writes', () => {
  it("answers from an article another process wrote once it has moved the organization's version", async () => {
    const t = await newTenant();
    const first = await call('POST', '/support/knowledge', {
      key: t.adminKey,
      json: { title: 'Shipping times', body: 'Orders ship within 2 business days. Delivery takes 3 to 5 days.' },
    });
    expect(first.status).toBe(201);
    const user = await basicUser(t);
    const conversation_id = (
      await call('POST', '/initialize_session', { key: user.key, json: { user_id: user.user_id } })
    ).body.conversation_id;
    const ask = async () =>
      (
        await call('POST', '/support', {
          key: user.key,
          json: { prompt: 'How do I get a refund for my purchase?', user_id: user.user_id, conversation_id },
        })
      ).body;
    expect((await ask()).metadata.escalate).toBe(true);
    // Another process writes an article and moves the version.
    await KnowledgeArticle.create({
      _id: `kb_elsewhere_${Date.now()}`,
      organization_id: t.organization_id,
      title: 'Refund policy',
      body: 'You can request a refund within 30 days of purchase from the order page.',
      tags: [],
      created_by: 'usr_elsewhere',
    });
    await versionsOf('support.knowledge', () => undefined).move(t.organization_id);
    let answer = await ask();
    for (let i = 0; i < 40 && answer.metadata.escalate; i += 1) {
      await new Promise((r) => setTimeout(r, 100));
      answer = await ask();
    }
    expect(answer.metadata.escalate).toBe(false);
    expect(answer.response).toMatch(/refund within 30 days/);
  });
});
