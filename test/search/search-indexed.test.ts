/**
 * The reads of a search (the organization's gifts, the user's texts and documents, the history),
 * of a conversation's responses and of feedback statistics, recorded and explained: each one is
 * answered from an index the schemas declare, none reads its collection.
 */
import { describe, expect, it } from 'vitest';

import { newId } from '../../activities/core/ids.ts';
import { analyseFeedback, feedbackStats, storeFeedback } from '../../activities/feedback/feedback.ts';
import { removeFeedback } from '../../activities/feedback/store.ts';
import { createOrganization } from '../../activities/identity/organizations.ts';
import {
  listNormalizedResponses,
  purgeNormalizedResponses,
  storeNormalizedResponse,
} from '../../activities/responses/normalized.ts';
import {
  clearSearchHistory,
  deleteSearchRecord,
  searchAndRecord,
  searchHistory,
} from '../../activities/search/search.ts';
import { embeddingsOf, insertEmbedding } from '../../activities/text/store.ts';
import { queriesOf, type Query, scans } from '../helpers/queries.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();

const OWN = ['search_history', 'gifts', 'text_embeddings', 'normalized_responses', 'feedback'];
const own = (qs: Query[]) => qs.filter((q) => OWN.includes(q.collection));

describe('search, text, responses and feedback reads', () => {
  it('are answered from indexes', async () => {
    const { organization_id } = await createOrganization({ name: 'Indexed reads', tier: 'free' });
    const user_id = newId('usr');
    const conversation_id = newId('conv');
    await insertEmbedding({
      _id: newId('txt'),
      organization_id,
      user_id,
      engine: 'local',
      dimensions: 2,
      vector: [1, 0],
      file_path: 'texts/x.txt',
      excerpt: 'a receipt from the bakery',
    });
    const qs = await queriesOf(async () => {
      const first = await searchAndRecord({ organization_id, user_id, idp_id: 'idp', query: 'bakery receipt' });
      await searchAndRecord({ organization_id, user_id, idp_id: 'idp', query: 'coffee' });
      expect((await searchHistory({ organization_id, user_id, from: new Date(Date.now() - 60_000) })).length).toBe(2);
      await deleteSearchRecord(organization_id, user_id, first.id);
      expect(await clearSearchHistory(organization_id, user_id)).toBe(1);
      expect(await embeddingsOf({ organization_id, engine: 'local', user_id })).toHaveLength(1);

      await storeNormalizedResponse({
        response_id: `t:${conversation_id}`,
        conversation_id,
        user_id,
        organization_id,
        source: 'support',
        message: 'hello',
        metadata: {},
      });
      await storeNormalizedResponse({
        response_id: `t:${conversation_id}`,
        conversation_id,
        user_id,
        organization_id,
        source: 'support',
        message: 'hello',
        metadata: {},
      });
      expect(await listNormalizedResponses(organization_id, conversation_id, user_id)).toHaveLength(1);
      await purgeNormalizedResponses({ retention_days: 3650 });

      const feedback_id = await storeFeedback({
        organization_id,
        user_id,
        feedback_type: 'praise',
        rating: 5,
        title: 'Great',
        comment: 'Fast and easy',
      });
      await analyseFeedback(feedback_id);
      expect((await feedbackStats({ organization_id, from: new Date(Date.now() - 60_000) })).analysed).toBe(1);
      await removeFeedback(feedback_id);
    });
    expect(new Set(own(qs).map((q) => q.collection))).toEqual(new Set(OWN));
    expect(await scans(own(qs))).toEqual([]);
  });
});
