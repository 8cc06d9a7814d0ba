/**
 * feedback's part of a user's export and erasure (docs/privacy-components/feedback.md): the
 * user's feedback is exported whole, and on erasure kept for the organization's statistics with
 * the person taken out (store.ts `anonymizeUserFeedback`).
 */
import type { ErasureScope, UserData } from '../core/user-data.ts';
import { anonymizeUserFeedback, userFeedback } from './store.ts';

const iso = (d: Date | undefined | null) => (d ? new Date(d).toISOString() : null);

export const feedbackUserData: UserData = {
  async export(scope) {
    const docs = await userFeedback(scope.organization_id, scope.user_id);
    return {
      data: {
        feedback: docs.map((d) => ({
          feedback_id: d._id,
          feedback_type: d.feedback_type,
          rating: d.rating,
          title: d.title,
          comment: d.comment,
          conversation_id: d.conversation_id ?? null,
          response_id: d.response_id ?? null,
          analysis_status: d.analysis_status,
          sentiment_score: d.sentiment_score ?? null,
          sentiment_label: d.sentiment_label ?? null,
          categories: d.categories,
          analysis_engine: d.analysis_engine ?? null,
          analysed_at: iso(d.analysed_at),
          created_at: iso(d.created_at),
          updated_at: iso(d.updated_at),
        })),
      },
      files: [],
    };
  },
  /**
   * Anonymizes, never deletes: the ratings and categories still count in the statistics. An
   * analysis still pending when the text is emptied analyses the empty text (a neutral `other`).
   */
  async erase(scope: ErasureScope) {
    return { feedback_anonymized: await anonymizeUserFeedback(scope.organization_id, scope.user_id, scope.tombstone) };
  },
};
