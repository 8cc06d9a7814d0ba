/**
 * images's part of a user's export and erasure (docs/privacy-components/images.md). The images
 * component owns the upload store (store.ts): every object any component keeps of a user's
 * uploads (images, documents, ticket-scan receipts, spoken questions) and what is made from them
 * (thumbnails, HEIC conversions) lives under the user's folder, whatever record names it or not
 * (a HEIC conversion or a /generate_thumbnail answer has no record; a record another part erased
 * first no longer names its objects). So this part exports each of them once, under
 * `files/images/<folder>/<file>`, and erases them all; the records of scanning, documents and
 * support name the same keys (`original_path`, `thumbnail_path`) and their parts delete them too.
 */
import type { ErasureScope, UserData, UserScope } from '../core/user-data.ts';
import { removeObjects, storedKeys, userFolder, userUploads } from './store.ts';

/** The object's path inside the export, under `files/images/`: the key without the user's folder. */
export function uploadExportName(scope: Pick<UserScope, 'organization_id' | 'user_id'>, key: string): string {
  const folder = userFolder(scope.organization_id, scope.user_id);
  return key.startsWith(folder) ? key.slice(folder.length) : key;
}

export const imagesUserData: UserData = {
  async export(scope) {
    const objects = await userUploads(scope.organization_id, scope.user_id);
    return {
      data: {
        uploads: objects.map((o) => ({
          key: o.key,
          file: uploadExportName(scope, o.key),
          size_bytes: o.size,
          stored_at: o.last_modified?.toISOString() ?? null,
        })),
      },
      files: objects.map((o) => ({ name: uploadExportName(scope, o.key), key: o.key })),
    };
  },
  /**
   * Lists the user's folders and removes what is there: a second call finds nothing left. A run
   * still in flight (a scan or document workflow) may write a thumbnail afterwards; the privacy
   * run calls erase again at its end and this listing finds it then.
   */
  async erase(scope: ErasureScope) {
    const objects = await userUploads(scope.organization_id, scope.user_id);
    await removeObjects(objects.map((o) => o.key));
    return { objects_deleted: objects.length };
  },
};

/**
 * Removes these uploads (keys another component's records name: a scan's receipt, a document and
 * its thumbnail); answers how many were still stored, so a repeated erasure counts nothing.
 */
export async function removeUploads(keys: readonly string[]): Promise<number> {
  const stored = await storedKeys([...new Set(keys)]);
  await removeObjects(stored);
  return stored.length;
}
