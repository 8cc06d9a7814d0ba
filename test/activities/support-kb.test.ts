/**
 * The knowledge base retrieval reads: an organization's articles, read by the organization_id
 * index. Articles added at the same time are all found, deleted ones drop out, articles written
 * by earlier versions (beside their `support_kb_entries`, no longer read) are found as they are,
 * and no query of a question or of an article's create or delete reads the collection.
 */
import mongoose from 'mongoose';
import { describe, expect, it } from 'vitest';

import { KnowledgeArticle } from '../../activities/support/models.ts';
import { buildIndex, search } from '../../activities/support/retrieval.ts';
import { knowledgeBase } from '../../activities/support/store.ts';
import { createArticle, deleteArticle, listArticles } from '../../activities/support/support.ts';
import { queriesOf, scans, show } from '../helpers/queries.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();

const run = `${Date.now()}`;

describe('support knowledge base', () => {
  it('keeps every article added concurrently, and drops deleted ones', async () => {
    const org = `org_kb_conc_${run}`;
    const created = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        createArticle(
          org,
          { title: `Topic ${i}`, body: `Article number ${i} explains the zorblax${i} procedure in detail.` },
          'usr_admin',
        ),
      ),
    );
    const ids = created.map((a) => a.id).sort();
    expect((await knowledgeBase(org)).map((a) => a.id).sort()).toEqual(ids);
    for (const a of created.slice(0, 3)) await deleteArticle(org, a.id);
    expect((await knowledgeBase(org)).map((a) => a.id).sort()).toEqual(
      created
        .slice(3)
        .map((a) => a.id)
        .sort(),
    );
    // another organization's articles are not its own
    expect(await knowledgeBase(`org_kb_other_${run}`)).toEqual([]);
  });

  it('finds the articles an earlier version wrote, and ignores the entries it kept beside them', async () => {
    const org = `org_kb_old_${run}`;
    const old = Array.from({ length: 300 }, (_, i) => ({
      _id: `kb_old_${run}_${i}`,
      organization_id: org,
      title: `Old topic ${i}`,
      body: `Legacy article ${i} about the quuxion${i} setting.`,
      tags: [],
      created_by: 'usr_admin',
    }));
    await KnowledgeArticle.insertMany(old);
    // what the earlier version wrote beside them: an entry per article, a removed one, the fill marker
    const entries = mongoose.connection.collection('support_kb_entries');
    await entries.insertMany([
      {
        _id: `${org}|0` as never,
        organization_id: org,
        article_id: old[0]._id,
        title: old[0].title,
        body: old[0].body,
        tags: [],
      },
      {
        _id: `${org}|1` as never,
        organization_id: org,
        article_id: 'kb_deleted_long_ago',
        title: 'Gone',
        body: 'Deleted before the upgrade.',
        tags: [],
        removed: true,
      },
      { _id: `${org}|kb` as never, organization_id: org, state: 'ready', at: new Date() },
    ]);
    expect(new Set((await knowledgeBase(org)).map((a) => a.id))).toEqual(new Set(old.map((a) => a._id)));
    const added = await createArticle(
      org,
      { title: 'Refund policy', body: 'You can ask for a refund within 30 days of purchase.' },
      'usr_admin',
    );
    const after = await knowledgeBase(org);
    expect(after).toHaveLength(301);
    expect(after.at(-1)?.id).toBe(added.id); // oldest first
    expect(search(buildIndex(after), 'How can I get my money back?')[0]?.passage.article.id).toBe(added.id);
    await deleteArticle(org, old[0]._id);
    expect((await knowledgeBase(org)).map((a) => a.id)).not.toContain(old[0]._id);
  });

  it('answers a question, a create, a delete and the admin listing from indexes', async () => {
    const org = `org_kb_hot_${run}`;
    const first = await createArticle(
      org,
      { title: 'Shipping times', body: 'Parcels arrive within five working days.' },
      'usr_admin',
    );
    let added = first;
    const qs = await queriesOf(async () => {
      added = await createArticle(
        org,
        { title: 'Refund policy', body: 'You can ask for a refund within 30 days of purchase.' },
        'usr_admin',
      );
      const kb = await knowledgeBase(org);
      expect(search(buildIndex(kb), 'How can I get my money back?')[0]?.passage.article.id).toBe(added.id);
      await deleteArticle(org, added.id);
      expect((await knowledgeBase(org)).map((a) => a.id)).toEqual([first.id]);
      expect((await listArticles(org, 1, 10)).total).toBe(1);
    });
    expect(show(qs).filter((q) => q.includes('support_kb_entries'))).toEqual([]);
    expect(qs.filter((q) => q.collection === 'support_articles' && q.method === 'find').length).toBeGreaterThanOrEqual(
      2,
    );
    expect(await scans(qs)).toEqual([]);
  });
});
