/**
 * Normalized responses stored per conversation by every processing component (images, documents,
 * text, support); the data lives in store.ts.
 */
import {
  conversationResponses,
  deleteConversation,
  deleteResponsesBefore,
  insertResponse,
  responseById,
  type StoredResponse,
} from './store.ts';

export type NormalizedInput = Omit<StoredResponse, 'created_at'>;

/** Idempotent on response_id: a retry answers with the first record's time. */
export async function storeNormalizedResponse(
  input: NormalizedInput,
): Promise<{ response_id: string; created: boolean; created_at: string }> {
  const created_at = await insertResponse(input);
  if (created_at) return { response_id: input.response_id, created: true, created_at: created_at.toISOString() };
  const first = await responseById(input.response_id);
  return {
    response_id: input.response_id,
    created: false,
    created_at: (first?.created_at ?? new Date()).toISOString(),
  };
}

export async function listNormalizedResponses(organization_id: string, conversation_id: string, user_id?: string) {
  const docs = await conversationResponses({ organization_id, conversation_id, ...(user_id ? { user_id } : {}) }, 100);
  return docs.map((d) => ({
    response_id: d.response_id,
    source: d.source,
    message: d.message,
    metadata: d.metadata,
    created_at: d.created_at.toISOString(),
  }));
}

/** Retention (run hourly by the Temporal Schedule `retention:normalized-responses:<task queue>`). */
export async function purgeNormalizedResponses(input: {
  retention_days: number;
}): Promise<{ deleted: number; cutoff: string | null }> {
  if (!input.retention_days) return { deleted: 0, cutoff: null };
  const cutoff = new Date(Date.now() - input.retention_days * 86_400_000);
  return { deleted: await deleteResponsesBefore(cutoff), cutoff: cutoff.toISOString() };
}

/** Deleting a conversation removes what was stored for it. */
export async function deleteConversationResponses(
  organization_id: string,
  conversation_id: string,
  user_id: string,
): Promise<number> {
  return deleteConversation(organization_id, conversation_id, user_id);
}
