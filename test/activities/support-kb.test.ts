/**
 * The knowledge base retrieval reads: entries keyed `<organization>|<n>`, read by primary key in
 * blocks. Articles added at the same time all get an entry, deleted ones drop out, and articles
 * written before entries existed are copied once, across more than one block.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseEnv, setConfig } from '../../activities/config';
import { closeRuntime, initRuntime } from '../../activities/runtime';
import { createArticle, deleteArticle } from '../../activities/support/support';
import { buildIndex, search } from '../../activities/support/retrieval';
import { knowledgeBase } from '../../activities/support/store';
import { KnowledgeArticle } from '../../activities/support/models';

beforeAll(async () => {
  setConfig(parseEnv({ ...process.env, ...inject('platformEnv') }));
  await initRuntime();
});

afterAll(async () => {
  await closeRuntime();
});

const run = `${Date.now()}`;

describe('support knowledge base entries', () => {
  it('keeps every article added concurrently, and drops deleted ones', async () => {
    const org = `org_kb_conc_${run}`;
    const created = await Promise.all(Array.from({ length: 12 }, (_, i) => createArticle(org, { title: `Topic ${i}`, body: `Article number ${i} explains the zorblax${i} procedure in detail.` }, 'usr_admin')));
    const ids = created.map((a) => a.id).sort();
    expect((await knowledgeBase(org)).map((a) => a.id).sort()).toEqual(ids);
    for (const a of created.slice(0, 3)) await deleteArticle(org, a.id);
    expect((await knowledgeBase(org)).map((a) => a.id).sort()).toEqual(created.slice(3).map((a) => a.id).sort());
    // another organization's articles are not its own
    expect(await knowledgeBase(`org_kb_other_${run}`)).toEqual([]);
  });

  it('copies articles written before entries existed once, across blocks, and answers from them', async () => {
    const org = `org_kb_old_${run}`;
    const old = Array.from({ length: 300 }, (_, i) => ({ _id: `kb_old_${run}_${i}`, organization_id: org, title: `Old topic ${i}`, body: `Legacy article ${i} about the quuxion${i} setting.`, tags: [], created_by: 'usr_admin' }));
    await KnowledgeArticle.insertMany(old);
    const first = await knowledgeBase(org);
    expect(first).toHaveLength(300);
    const added = await createArticle(org, { title: 'Refund policy', body: 'You can ask for a refund within 30 days of purchase.' }, 'usr_admin');
    const after = await knowledgeBase(org);
    expect(after).toHaveLength(301);
    expect(new Set(after.map((a) => a.id))).toEqual(new Set([...old.map((a) => a._id), added.id]));
    expect(search(buildIndex(after), 'How can I get my money back?')[0]?.passage.article.id).toBe(added.id);
  });
});
