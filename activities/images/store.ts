/**
 * The images component's store: the uploads in the platform's bucket. Every upload (images,
 * documents, ticket scans, spoken questions) is stored by `storeUpload` under its owner's folder,
 * and what is made from it beside it (`uploadPaths`): `<organization>/<user>/originals/`,
 * `…/thumbnails/`, `…/converted/`. The layout is the index: a user's objects are listed by those
 * prefixes (the user's `texts/` folder is the text component's, never listed here).
 */
import { runtime } from '../core/runtime.ts';

/** The folders of a user's uploads and what is made from them. */
const UPLOAD_FOLDERS = ['originals', 'thumbnails', 'converted'] as const;

export const userFolder = (organization_id: string, user_id: string) => `${organization_id}/${user_id}/`;

export interface StoredObject {
  key: string;
  size: number;
  last_modified: Date | null;
}

/** Every object under the prefix (recursive listing, in key order). */
async function listPrefix(prefix: string): Promise<StoredObject[]> {
  const { minio, minioSettings } = runtime();
  const out: StoredObject[] = [];
  const stream = minio.listObjectsV2(minioSettings.bucket, prefix, true);
  for await (const item of stream as AsyncIterable<{ name?: string; size?: number; lastModified?: Date }>) {
    if (item.name) out.push({ key: item.name, size: item.size ?? 0, last_modified: item.lastModified ?? null });
  }
  return out;
}

/** The user's uploads and their thumbnails and conversions. */
export async function userUploads(organization_id: string, user_id: string): Promise<StoredObject[]> {
  const folder = userFolder(organization_id, user_id);
  return (await Promise.all(UPLOAD_FOLDERS.map((f) => listPrefix(`${folder}${f}/`)))).flat();
}

/** Removes the objects (a missing one counts as removed), in batches of 1000 (S3's multi-delete limit). */
export async function removeObjects(keys: readonly string[]): Promise<void> {
  const { minio, minioSettings } = runtime();
  for (let i = 0; i < keys.length; i += 1000) {
    const out = await minio.removeObjects(minioSettings.bucket, keys.slice(i, i + 1000));
    const failed = out.find((r) => r?.Error && r.Error.Code !== 'NoSuchKey');
    if (failed?.Error)
      throw new Error(
        `removing ${failed.Error.Key ?? 'an object'} failed: ${failed.Error.Code ?? ''} ${failed.Error.Message ?? ''}`,
      );
  }
}

/** Which of these keys are stored (statObject; a missing object answers NotFound). */
export async function storedKeys(keys: readonly string[]): Promise<string[]> {
  const { minio, minioSettings } = runtime();
  const found = await Promise.all(
    keys.map((key) =>
      minio.statObject(minioSettings.bucket, key).then(
        () => key,
        (err: { code?: string }) => {
          if (err.code === 'NotFound' || err.code === 'NoSuchKey') return null;
          throw err;
        },
      ),
    ),
  );
  return found.filter((k): k is string => k !== null);
}
