/**
 * The files store: the organizations' link-signing keys, and the stored objects a link serves,
 * streamed from the platform's bucket (the uploads' layout is the images component's:
 * `<organization>/<user>/<originals|thumbnails|converted>/<file>`).
 */
import type { Readable } from 'node:stream';

import { insertOnce } from '../core/db/index.ts';
import { runtime } from '../core/runtime.ts';
import { LinkKey, type LinkKeyDoc } from './models.ts';

export const linkKeyOf = (organization_id: string) => LinkKey.findById(organization_id).lean<LinkKeyDoc>();

/** The organization's first key; false when another request made one first. */
export const insertLinkKey = (organization_id: string, secret: string) =>
  insertOnce(LinkKey, { _id: organization_id, secret, rotated_at: new Date() });

/** Replaces the key (or makes the first one): every link signed with the previous one stops working. */
export const replaceLinkKey = (organization_id: string, secret: string) =>
  LinkKey.findOneAndUpdate(
    { _id: organization_id },
    { $set: { secret, rotated_at: new Date() } },
    { upsert: true, new: true },
  ).lean<LinkKeyDoc>();

const missingObject = (err: unknown) => {
  const code = (err as { code?: string }).code;
  return code === 'NotFound' || code === 'NoSuchKey';
};

/** The object's size; null when it is not stored. */
export async function objectSize(key: string): Promise<number | null> {
  const { minio, minioSettings } = runtime();
  try {
    return (await minio.statObject(minioSettings.bucket, key)).size;
  } catch (err) {
    if (missingObject(err)) return null;
    throw err;
  }
}

/** The object's first `bytes` bytes (fewer for a smaller one); null when it is not stored. */
export async function objectHead(key: string, bytes: number): Promise<Buffer | null> {
  const { minio, minioSettings } = runtime();
  try {
    const chunks: Buffer[] = [];
    for await (const c of await minio.getPartialObject(minioSettings.bucket, key, 0, bytes)) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  } catch (err) {
    if (missingObject(err)) return null;
    if ((err as { code?: string }).code === 'InvalidRange') return Buffer.alloc(0); // an empty object
    throw err;
  }
}

/** The object as a stream (never held whole in memory); null when it is not stored. */
export async function objectStream(key: string): Promise<Readable | null> {
  const { minio, minioSettings } = runtime();
  try {
    return await minio.getObject(minioSettings.bucket, key);
  } catch (err) {
    if (missingObject(err)) return null;
    throw err;
  }
}
