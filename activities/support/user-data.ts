/**
 * support's part of a user's export and erasure (docs/privacy-components/support.md): the user's
 * turns (each question, typed or transcribed from audio, and its answer) and, for an admin, the
 * knowledge articles and curated answers they wrote; the handoffs of the user's conversations
 * (the question handed over and the replies sent), and for an admin the handoffs they took. A spoken question's recording is an upload (`audio-qa:<media
 * id>`, turn `turn_audio_<media id>`) in the user's folder: the images part, which owns the upload
 * store, exports and erases it. The normalized responses of the turns are the responses part's.
 */
import type { ErasureScope, UserData } from '../core/user-data.ts';
import {
  articlesBy,
  curatedBy,
  deleteUserHandoffs,
  deleteUserTurns,
  handoffsClaimedBy,
  tombstoneArticleAuthor,
  tombstoneCuratedAuthor,
  tombstoneHandoffAgent,
  userHandoffs,
  userTurns,
} from './store.ts';

const AUDIO_TURN = /^turn_audio_(.+)$/;

export const supportUserData: UserData = {
  async export(scope) {
    const [turns, articles, curated, handoffs, claimed] = await Promise.all([
      userTurns(scope.organization_id, scope.user_id),
      articlesBy(scope.organization_id, scope.user_id),
      curatedBy(scope.organization_id, scope.user_id),
      userHandoffs(scope.organization_id, scope.user_id),
      handoffsClaimedBy(scope.organization_id, scope.user_id),
    ]);
    const iso = (d: Date | undefined) => (d ? new Date(d).toISOString() : null);
    return {
      data: {
        turns: turns.map((t) => ({
          turn_id: t._id,
          conversation_id: t.conversation_id,
          session_id: t.session_id ?? null,
          question: t.question,
          spoken: AUDIO_TURN.test(t._id),
          audio_media_id: AUDIO_TURN.exec(t._id)?.[1] ?? null,
          answer: t.answer,
          citations: t.citations,
          source_agent: t.source_agent,
          escalate: t.escalate,
          created_at: new Date(t.created_at).toISOString(),
        })),
        articles_written: articles.map((a) => ({
          article_id: a._id,
          title: a.title,
          tags: a.tags ?? [],
          created_at: new Date(a.created_at).toISOString(),
          updated_at: new Date(a.updated_at).toISOString(),
        })),
        curated_written: curated.map((c) => ({
          curated_id: c._id,
          question: c.question,
          created_at: new Date(c.created_at).toISOString(),
        })),
        handoffs: handoffs.map((h) => ({
          handoff_id: h._id,
          conversation_id: h.conversation_id,
          turn_id: h.turn_id,
          reason: h.reason,
          question: h.question,
          status: h.status,
          replies: (h.replies ?? []).map((r) => ({ reply_id: r.reply_id, text: r.text, at: iso(r.at) })),
          created_at: iso(h.created_at),
          closed_at: iso(h.closed_at),
        })),
        handoffs_taken: claimed.map((h) => ({
          handoff_id: h._id,
          status: h.status,
          claimed_at: iso(h.claimed_at),
          replies_sent: (h.replies ?? []).filter((r) => r.by === scope.user_id).length,
        })),
      },
      files: [],
    };
  },
  /**
   * Deletes the turns and the handoffs of the user's conversations (deleteMany: a second call
   * deletes none); the articles and curated answers an admin wrote are the organization's
   * knowledge base and stay, as do the handoffs an admin took, their author replaced by the tombstone. An audio
   * question still being answered stores its turn afterwards: the privacy run's final erase drops it.
   */
  async erase(scope: ErasureScope) {
    const turns_deleted = await deleteUserTurns(scope.organization_id, scope.user_id);
    const articles_tombstoned = await tombstoneArticleAuthor(scope.organization_id, scope.user_id, scope.tombstone);
    const handoffs_deleted = await deleteUserHandoffs(scope.organization_id, scope.user_id);
    const curated_tombstoned = await tombstoneCuratedAuthor(scope.organization_id, scope.user_id, scope.tombstone);
    const handoffs_tombstoned = await tombstoneHandoffAgent(scope.organization_id, scope.user_id, scope.tombstone);
    return { turns_deleted, articles_tombstoned, handoffs_deleted, curated_tombstoned, handoffs_tombstoned };
  },
};
