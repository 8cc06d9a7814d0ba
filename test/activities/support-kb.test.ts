/**
 * The knowledge base retrieval reads: entries keyed `<organization>|<n>`, read by primary key in
 * blocks. Articles added at the same time all get an entry, deleted ones drop out, and articles
 * written before entries existed are copied once, across more than one block.
 */
import { describe, expect, it } from 'vitest';
import { createArticle, deleteArticle } from '../../activities/support/support';
import { buildIndex, search } from '../../activities/support/retrieval';
import { knowledgeBase } from '../../activities/support/store';
import { KnowledgeArticle } from '../../activities/support/models';
import mongoose from 'mongoose';
import { queriesOf, show } from '../helpers/queries';
import { useSuiteRuntime } from '../helpers/runtime';

useSuiteRuntime();

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

  it('keeps the read knowledge base and its index until the knowledge base changes, checked by two _id reads', async () => {
    const org = `org_kb_keep_${run}`;
    const first = await createArticle(org, { title: 'Shipping times', body: 'Parcels arrive within five working days.' }, 'usr_admin');
    const kb = await knowledgeBase(org);
    const index = buildIndex(kb);
    const again = await queriesOf(async () => expect(await knowledgeBase(org)).toBe(kb));
    expect(show(again)).toEqual([`support_kb_entries.find(${JSON.stringify({ _id: { $in: [`${org}|1`, `${org}|rm-0`] } })})`]);
    expect(buildIndex(await knowledgeBase(org))).toBe(index);

    // this process's own writes are seen by the next read
    const added = await createArticle(org, { title: 'Refund policy', body: 'You can ask for a refund within 30 days of purchase.' }, 'usr_admin');
    const withAdded = await knowledgeBase(org);
    expect(withAdded.map((a) => a.id).sort()).toEqual([first.id, added.id].sort());
    expect(search(buildIndex(withAdded), 'How can I get my money back?')[0]?.passage.article.id).toBe(added.id);
    await deleteArticle(org, added.id);
    expect((await knowledgeBase(org)).map((a) => a.id)).toEqual([first.id]);

    // another process's writes (its entry slot, then its removal) are seen by the next check too
    const entries = mongoose.connection.collection('support_kb_entries');
    await entries.insertOne({ _id: `${org}|2` as never, organization_id: org, article_id: 'kb_elsewhere', title: 'Gift cards', body: 'Gift cards never expire.', tags: [] });
    expect((await knowledgeBase(org)).map((a) => a.id).sort()).toEqual([first.id, 'kb_elsewhere'].sort());
    await entries.updateOne({ _id: `${org}|2` as never }, { $set: { removed: true } });
    await entries.insertOne({ _id: `${org}|rm-1` as never, organization_id: org, article_id: 'kb_elsewhere' });
    expect((await knowledgeBase(org)).map((a) => a.id)).toEqual([first.id]);
  });
});
