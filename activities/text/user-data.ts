/**
 * text's part of a user's export and erasure (docs/privacy.md): the user's stored texts (MinIO,
 * `<organization>/<user>/texts/<text id>.txt`) and their embeddings (excerpt, file path,
 * conversation). The normalized responses of the texts are the responses component's.
 *
 * The texts are found by their prefix, not only through the embeddings: a text whose workflow has
 * not finished (or never started) has its object but no embedding yet. Erasure removes the
 * objects first, then the embeddings, so a crash in between leaves the embeddings (and the
 * prefix) for the second call to finish with.
 */
import { basename } from 'node:path';

import { removeObject } from '../adapters/storage.ts';
import { runtime } from '../core/runtime.ts';
import type { ErasureReport, ExportFile, UserData } from '../core/user-data.ts';
import { deleteUserEmbeddings, userEmbeddings } from './store.ts';

const textsPrefix = (organization_id: string, user_id: string) => `${organization_id}/${user_id}/texts/`;

/** The keys of the objects under `prefix` (one listing, no object read). */
async function objectsUnder(prefix: string): Promise<string[]> {
  const { minio, minioSettings } = runtime();
  const keys: string[] = [];
  for await (const o of minio.listObjectsV2(minioSettings.bucket, prefix, true)) if (o.name) keys.push(o.name);
  return keys;
}

async function exists(key: string): Promise<boolean> {
  const { minio, minioSettings } = runtime();
  try {
    await minio.statObject(minioSettings.bucket, key);
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === 'NotFound' || (err as { code?: string }).code === 'NoSuchKey') return false;
    throw err;
  }
}

/** The user's text objects: those under the prefix, and any an embedding names elsewhere (still there). */
async function textObjects(organization_id: string, user_id: string, named: string[]): Promise<string[]> {
  const listed = await objectsUnder(textsPrefix(organization_id, user_id));
  const seen = new Set(listed);
  const others = [...new Set(named.filter((k) => !seen.has(k)))];
  const present = await Promise.all(others.map(async (k) => ((await exists(k)) ? k : null)));
  return [...listed, ...present.filter((k): k is string => k !== null)];
}

export const textUserData: UserData = {
  async export({ organization_id, user_id }) {
    const embeddings = await userEmbeddings(organization_id, user_id);
    const keys = await textObjects(
      organization_id,
      user_id,
      embeddings.map((e) => e.file_path),
    );
    const files: ExportFile[] = keys.map((key) => ({ name: `texts/${basename(key)}`, key }));
    return {
      data: {
        texts: embeddings.map((e) => ({
          embedding_id: e._id,
          file_path: e.file_path,
          excerpt: e.excerpt,
          conversation_id: e.conversation_id ?? null,
          engine: e.engine,
          dimensions: e.dimensions,
          created_at: new Date(e.created_at).toISOString(),
        })),
      },
      files,
    };
  },
  async erase({ organization_id, user_id }) {
    const embeddings = await userEmbeddings(organization_id, user_id);
    const keys = await textObjects(
      organization_id,
      user_id,
      embeddings.map((e) => e.file_path),
    );
    for (const key of keys) await removeObject(key);
    const report: ErasureReport = { objects_deleted: keys.length };
    report.embeddings_deleted = await deleteUserEmbeddings(organization_id, user_id);
    return report;
  },
};
