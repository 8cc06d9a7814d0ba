/**
 * search's part of a user's export and erasure (docs/privacy.md): the user's search history.
 * Entries are the user's own queries and what they found (the catalogue, the user's own texts
 * and documents), so all of them leave; nothing is kept for the organization's books.
 */
import { parseJsonText } from '../core/db/index.ts';
import type { UserData } from '../core/user-data.ts';
import { allUserRecords, deleteUserRecords } from './store.ts';

export const searchUserData: UserData = {
  async export({ organization_id, user_id }) {
    const records = await allUserRecords(organization_id, user_id);
    return {
      data: {
        search_history: records.map((r) => ({
          id: r.id,
          query: r.query,
          results: parseJsonText<unknown>(r.search_data_json, null),
          created_at: new Date(r.created_at).toISOString(),
        })),
      },
      files: [],
    };
  },
  async erase({ organization_id, user_id }) {
    // One deleteMany on the user's index: a second call finds nothing and deletes nothing.
    return { search_entries_deleted: await deleteUserRecords(organization_id, user_id) };
  },
};
