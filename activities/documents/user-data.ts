/**
 * documents's part of a user's export and erasure (docs/privacy-components/documents.md). The
 * component keeps no collection of its own: a processed document is recorded as the user's
 * normalized response of source `document` (the responses component's record, which that part
 * exports and erases), naming the stored original and its thumbnail. This part lists the user's
 * documents from those records and deletes their files; the files are exported once, by the images
 * part, which owns the upload store (a /generate_thumbnail answer has no record: it is found there).
 */
import type { ErasureScope, UserData, UserScope } from '../core/user-data.ts';
import { removeUploads, uploadExportName } from '../images/index.ts';
import { userResponses } from '../responses/index.ts';

interface DocumentMetadata {
  media_id?: string;
  source_filename?: string;
  conversation_id?: string;
  session_id?: string;
  original_path?: string;
  thumbnail_path?: string;
  classification?: unknown;
  text_excerpt?: string;
  data?: { folder_structure?: unknown; metadata?: unknown };
}

const keysOf = (m: DocumentMetadata) =>
  [m.original_path, m.thumbnail_path].filter((k): k is string => typeof k === 'string' && k.length > 0);
const fileOf = (scope: UserScope, key: string | undefined) =>
  key ? `files/images/${uploadExportName(scope, key)}` : null;

const documentsOf = async (scope: UserScope) =>
  (await userResponses(scope.organization_id, scope.user_id, 'document')).map((r) => ({
    r,
    m: r.metadata as DocumentMetadata,
  }));

export const documentsUserData: UserData = {
  async export(scope) {
    const docs = await documentsOf(scope);
    return {
      data: {
        documents: docs.map(({ r, m }) => ({
          media_id: m.media_id ?? null,
          filename: m.source_filename ?? null,
          conversation_id: m.conversation_id ?? r.conversation_id,
          session_id: m.session_id ?? null,
          folder_structure: m.data?.folder_structure ?? null,
          metadata: m.data?.metadata ?? null,
          classification: m.classification ?? null,
          text_excerpt: m.text_excerpt ?? null,
          summary: r.message,
          original_path: m.original_path ?? null,
          thumbnail_path: m.thumbnail_path ?? null,
          files: { original: fileOf(scope, m.original_path), thumbnail: fileOf(scope, m.thumbnail_path) },
          processed_at: new Date(r.created_at).toISOString(),
        })),
      },
      files: [],
    };
  },
  /**
   * Deletes the files its records name; the records themselves are the responses part's. Run
   * before or after that part, or again after a crash: a file already gone counts nothing, and the
   * images part removes whatever is left in the user's folders whatever the records say. A
   * document run still in flight writes its thumbnail and record later: the privacy run's final
   * erase finds them (here and in the images part).
   */
  async erase(scope: ErasureScope) {
    const docs = await documentsOf(scope);
    return { objects_deleted: await removeUploads(docs.flatMap(({ m }) => keysOf(m))) };
  },
};
