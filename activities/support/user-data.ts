/**
 * support's part of a user's export and erasure (docs/privacy-components/support.md): the user's
 * turns (each question, typed or transcribed from audio, and its answer) and, for an admin, the
 * knowledge articles they wrote. A spoken question's recording is an upload (`audio-qa:<media
 * id>`, turn `turn_audio_<media id>`) in the user's folder: the images part, which owns the upload
 * store, exports and erases it. The normalized responses of the turns are the responses part's.
 */
import type { ErasureScope, UserData } from '../core/user-data.ts';
import { articlesBy, deleteUserTurns, tombstoneArticleAuthor, userTurns } from './store.ts';

const AUDIO_TURN = /^turn_audio_(.+)$/;

export const supportUserData: UserData = {
  async export(scope) {
    const [turns, articles] = await Promise.all([
      userTurns(scope.organization_id, scope.user_id),
      articlesBy(scope.organization_id, scope.user_id),
    ]);
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
      },
      files: [],
    };
  },
  /**
   * Deletes the turns (one deleteMany: a second call deletes none); the articles an admin wrote are
   * the organization's knowledge base and stay, their author replaced by the tombstone. An audio
   * question still being answered stores its turn afterwards: the privacy run's final erase drops it.
   */
  async erase(scope: ErasureScope) {
    const turns_deleted = await deleteUserTurns(scope.organization_id, scope.user_id);
    const articles_tombstoned = await tombstoneArticleAuthor(scope.organization_id, scope.user_id, scope.tombstone);
    return { turns_deleted, articles_tombstoned };
  },
};
