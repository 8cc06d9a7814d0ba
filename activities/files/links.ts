/**
 * Signed, expiring links to stored files, as imgproxy signs its URLs: HMAC-SHA256 under the
 * organization's own key over the expiry and the object's path, so a mobile app shows an image
 * without its API key. A link is checked in constant time; a wrong path, expiry or signature, an
 * expired link and one signed with a key rotated since all get the same 403, and only a link
 * that checks out learns whether the file is still stored (404 after an erasure).
 * docs/components/files.md says why each choice.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Readable } from 'node:stream';

import { decryptSecret, encryptSecret } from '../core/encryption.ts';
import { forbidden, invalid, notFound } from '../core/errors.ts';
import { LINK_MAX_SECONDS, LINK_MIN_SECONDS } from './constants.ts';
import { insertLinkKey, linkKeyOf, objectHead, objectSize, objectStream, replaceLinkKey } from './store.ts';

/**
 * What a link may name: an upload or what was made from it, in the images component's layout
 * (`uploadPaths`): `<organization>/<user>/<originals|thumbnails|converted>/<file>`. A user's
 * `texts/` and anything else of the bucket are never linkable.
 */
const SEGMENT = '[A-Za-z0-9_][A-Za-z0-9._-]{0,99}';
const LINKABLE = new RegExp(
  `^(${SEGMENT})/(${SEGMENT})/(originals|thumbnails|converted)/([A-Za-z0-9][A-Za-z0-9._-]{0,199})$`,
);

/**
 * The types a link serves inline, each known by its first bytes: the type is read from the file,
 * never taken from the uploader's word (a "photo" sent as text/html). Anything else is a
 * download (application/octet-stream), so no HTML or SVG ever runs as a page of the API's origin.
 */
const MAGIC: Array<[string, (b: Buffer) => boolean]> = [
  ['image/jpeg', (b) => b.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff]))],
  ['image/png', (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))],
  ['image/gif', (b) => /^GIF8[79]a/.test(b.subarray(0, 6).toString('latin1'))],
  [
    'image/webp',
    (b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP',
  ],
  [
    'image/heic',
    (b) =>
      b.subarray(4, 8).toString('latin1') === 'ftyp' &&
      /^(heic|heix|heim|heis|mif1|msf1)$/.test(b.subarray(8, 12).toString('latin1')),
  ],
  ['application/pdf', (b) => b.subarray(0, 5).toString('latin1') === '%PDF-'],
];
const HEAD_BYTES = 16;

const typeOf = (head: Buffer) => MAGIC.find(([, is]) => is(head))?.[0] ?? null;

const refused = () => forbidden('Link invalid or expired');
const notStored = () => notFound('File not found');

const newSecret = () => randomBytes(32).toString('base64url');

/** The organization's key (made on its first link). */
async function signingKey(organization_id: string): Promise<Buffer> {
  let doc = await linkKeyOf(organization_id);
  if (!doc) {
    await insertLinkKey(organization_id, encryptSecret(newSecret()));
    doc = await linkKeyOf(organization_id); // ours, or the one a concurrent first link made
  }
  if (!doc) throw new Error('the link-signing key was not stored');
  return Buffer.from(decryptSecret(doc.secret), 'base64url');
}

const signature = (key: Buffer, path: string, expires: number) =>
  createHmac('sha256', key).update(`${expires}/${path}`).digest();

export interface FileLink {
  /** `/files/<path>?expires=<unix seconds>&sig=<base64url>`: the edge puts its public address before it */
  href: string;
  expires_at: string;
}

/**
 * A link to a stored file the caller may read: of its organization (another organization's
 * path is 404, as an unknown one is), and with `only_user` (a basic key) only that user's.
 */
export async function createFileLink(
  organization_id: string,
  path: string,
  expires_in: number,
  only_user?: string,
): Promise<FileLink> {
  if (!Number.isInteger(expires_in) || expires_in < LINK_MIN_SECONDS || expires_in > LINK_MAX_SECONDS)
    throw invalid('expires_in', `must be a whole number of seconds from ${LINK_MIN_SECONDS} to ${LINK_MAX_SECONDS}`);
  const parts = LINKABLE.exec(path);
  if (!parts)
    throw invalid(
      'path',
      'must be a stored file as an upload answered it: <organization>/<user>/<originals|thumbnails|converted>/<file>',
    );
  if (parts[1] !== organization_id || (only_user !== undefined && parts[2] !== only_user)) throw notStored();
  if ((await objectSize(path)) === null) throw notStored();
  const expires = Math.floor(Date.now() / 1000) + expires_in;
  const sig = signature(await signingKey(organization_id), path, expires).toString('base64url');
  return { href: `/files/${path}?expires=${expires}&sig=${sig}`, expires_at: new Date(expires * 1000).toISOString() };
}

export interface LinkedFile {
  stream: Readable;
  size: number;
  content_type: string;
  /** false: served as a download (`filename`) */
  inline: boolean;
  filename: string;
  /** seconds until the link expires: how long a private cache may keep it */
  max_age: number;
}

/** The file a link names, when its signature and expiry hold (403 otherwise) and it is still stored (404 otherwise). */
export async function openLinkedFile(path: string, expires: unknown, sig: unknown): Promise<LinkedFile> {
  const parts = LINKABLE.exec(path);
  if (!parts || typeof expires !== 'string' || !/^\d{1,12}$/.test(expires) || typeof sig !== 'string') throw refused();
  const at = Number(expires);
  const now = Math.floor(Date.now() / 1000);
  if (at < now) throw refused();
  const doc = await linkKeyOf(parts[1]);
  if (!doc) throw refused();
  const expected = signature(Buffer.from(decryptSecret(doc.secret), 'base64url'), path, at);
  const given = /^[A-Za-z0-9_-]{43}$/.test(sig) ? Buffer.from(sig, 'base64url') : Buffer.alloc(0);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw refused();
  const [size, head] = await Promise.all([objectSize(path), objectHead(path, HEAD_BYTES)]);
  const stream = size !== null && head && (await objectStream(path));
  if (size === null || !stream) throw notStored();
  const type = typeOf(head);
  return {
    stream,
    size,
    content_type: type ?? 'application/octet-stream',
    inline: type !== null,
    filename: parts[4],
    max_age: at - now,
  };
}

/** A new key for the organization: every link made before stops working at once, on every edge. */
export async function rotateLinkKey(organization_id: string): Promise<{ rotated_at: string }> {
  const doc = await replaceLinkKey(organization_id, encryptSecret(newSecret()));
  if (!doc) throw new Error('the link-signing key was not stored');
  return { rotated_at: new Date(doc.rotated_at).toISOString() };
}
