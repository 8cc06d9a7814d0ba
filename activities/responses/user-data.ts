/**
 * responses' part of a user's export and erasure (docs/privacy.md): the normalized responses the
 * processing components stored for the user's conversations (images, documents, text, support).
 * Their messages and metadata describe what the user sent, so all of them leave. The objects
 * their metadata names (originals, thumbnails, texts) belong to the component that stored them,
 * which exports and erases them.
 */
import type { UserData } from '../core/user-data.ts';
import { allUserResponses, deleteUserResponses } from './store.ts';

export const responsesUserData: UserData = {
  async export({ organization_id, user_id }) {
    const responses = await allUserResponses(organization_id, user_id);
    return {
      data: {
        normalized_responses: responses.map((r) => ({
          response_id: r.response_id,
          conversation_id: r.conversation_id,
          source: r.source,
          message: r.message,
          metadata: r.metadata,
          created_at: new Date(r.created_at).toISOString(),
        })),
      },
      files: [],
    };
  },
  async erase({ organization_id, user_id }) {
    return { responses_deleted: await deleteUserResponses(organization_id, user_id) };
  },
};
