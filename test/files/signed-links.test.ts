/**
 * Signed, expiring links to stored files (POST /api/files/links, GET /files/...): a key links a
 * file it may read, the link serves it without a key until it expires, the organization rotates
 * its signing key, or the file is erased.
 */
import { createHmac } from 'node:crypto';
import fs from 'node:fs';

import { beforeAll, describe, expect, it } from 'vitest';

import { putObject } from '../../activities/adapters/storage.ts';
import { decryptSecret } from '../../activities/core/encryption.ts';
import { LinkKey } from '../../activities/files/models.ts';
import { basicUser, call, fileForm, newTenant, type Tenant, until } from '../helpers/api.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();

const photo = fs.readFileSync(new URL('../fixtures/photo.jpg', import.meta.url));
type User = { key: string; user_id: string; idp_id: string };

let t: Tenant;
let ana: User;
let bob: User;
let anaFiles: { original_path: string; thumbnail_path: string };

async function upload(u: User, name = 'photo.jpg') {
  const res = await call('POST', '/process_image', {
    key: u.key,
    form: fileForm(
      { user_id: u.idp_id, session_id: 'ses_links', conversation_id: 'conv_links' },
      { data: photo, name },
    ),
  });
  if (res.status !== 200) throw new Error(`upload: ${res.status} ${JSON.stringify(res.body)}`);
  return { original_path: res.body.data.original_path as string, thumbnail_path: res.body.thumbnail_path as string };
}

const link = (key: string, json: unknown, q = '') => call('POST', `/api/files/links${q}`, { key, json });

/** The link's path and query, asked of the suite's edge without a key. */
const open = (url: string) => {
  const u = new URL(url);
  return call('GET', `${u.pathname}${u.search}`);
};

async function linkOf(key: string, path: string, expires_in?: number): Promise<string> {
  const res = await link(key, { path, ...(expires_in ? { expires_in } : {}) });
  if (res.status !== 200) throw new Error(`link: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.url;
}

const REFUSED = { detail: 'Link invalid or expired' };

beforeAll(async () => {
  t = await newTenant();
  ana = await basicUser(t);
  bob = await basicUser(t);
  anaFiles = await upload(ana);
}, 120_000);

describe('signed links to stored files', () => {
  it('a basic key links its own upload; the link serves it without a key, streamed with the type its bytes show, cached privately until it expires', async () => {
    const made = await link(ana.key, { path: anaFiles.original_path, expires_in: 120 });
    expect(made.status).toBe(200);
    expect(made.body.url).toMatch(/\/files\/.+\?expires=\d+&sig=[A-Za-z0-9_-]{43}$/);
    const expiresAt = Date.parse(made.body.expires_at);
    expect(expiresAt).toBeGreaterThan(Date.now() + 100_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 121_000);

    const got = await open(made.body.url);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('image/jpeg');
    expect(Buffer.compare(got.raw, photo)).toBe(0);
    expect(got.headers.get('content-length')).toBe(String(photo.length));
    const cache = got.headers.get('cache-control')!;
    expect(cache).toMatch(/^private, max-age=\d+$/);
    expect(Number(cache.split('=')[1])).toBeLessThanOrEqual(120);
    expect(got.headers.get('x-content-type-options')).toBe('nosniff');
    expect(got.headers.get('content-disposition')).toBeNull();

    // the thumbnail, linked by an admin of the organization (default lifetime: an hour)
    const byAdmin = await link(t.adminKey, { path: anaFiles.thumbnail_path });
    expect(Date.parse(byAdmin.body.expires_at)).toBeGreaterThan(Date.now() + 3500_000);
    const thumb = await open(byAdmin.body.url);
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get('content-type')).toBe('image/jpeg');
    expect(thumb.raw.subarray(0, 2).toString('hex')).toBe('ffd8');
  });

  it("refuses to link what the caller may not read: another user's or organization's file is 404, as a file not stored is", async () => {
    const other = await newTenant();
    for (const [who, key, q] of [
      ['another user of the organization', bob.key, ''],
      ["another organization's admin", other.adminKey, ''],
    ] as const) {
      const res = await link(key, { path: anaFiles.original_path }, q);
      expect(res.status, who).toBe(404);
      expect(res.body, who).toEqual({ detail: 'File not found' });
    }
    expect(
      (await link(other.adminKey, { path: anaFiles.original_path }, `?organization_id=${t.organization_id}`)).status,
    ).toBe(403);
    const notStored = await link(ana.key, { path: `${t.organization_id}/${ana.user_id}/originals/nothing-here.jpg` });
    expect(notStored.status).toBe(404);
    expect(notStored.body).toEqual({ detail: 'File not found' });
    expect((await call('POST', '/api/files/links', { json: { path: anaFiles.original_path } })).status).toBe(401);
  });

  it('refuses bad input with 422 naming the field', async () => {
    for (const path of [
      `${t.organization_id}/${ana.user_id}/texts/t1.txt`,
      `${t.organization_id}/${ana.user_id}/originals/../thumbnails/x.jpg`,
      `${t.organization_id}/${ana.user_id}/originals`,
      '',
    ]) {
      const res = await link(ana.key, { path });
      expect(res.status, path).toBe(422);
      expect(res.body.detail, path).toMatch(/^path/);
    }
    for (const expires_in of [59, 604_801, 90.5, '3600']) {
      const res = await link(ana.key, { path: anaFiles.original_path, expires_in });
      expect(res.status, String(expires_in)).toBe(422);
      expect(res.body.detail, String(expires_in)).toMatch(/^expires_in/);
    }
  });

  it('a changed path, expiry or signature, an expired link and a missing signature all get the same 403', async () => {
    const good = new URL(await linkOf(ana.key, anaFiles.original_path, 600));
    const expires = Number(good.searchParams.get('expires'));
    const sig = good.searchParams.get('sig')!;
    const flipped = `${sig[0] === 'A' ? 'B' : 'A'}${sig.slice(1)}`;
    const bobFiles = await upload(bob);
    const tampered = [
      `/files/${anaFiles.thumbnail_path}?expires=${expires}&sig=${sig}`,
      `/files/${bobFiles.original_path}?expires=${expires}&sig=${sig}`,
      `${good.pathname}?expires=${expires + 3600}&sig=${sig}`,
      `${good.pathname}?expires=${expires}&sig=${flipped}`,
      `${good.pathname}?expires=${expires}&sig=${sig.slice(0, 20)}`,
      `${good.pathname}?expires=${expires}`,
      `${good.pathname}?sig=${sig}`,
      `${good.pathname}?expires=soon&sig=${sig}`,
    ];
    // an expired link, signed with the organization's own key
    const doc = await LinkKey.findById(t.organization_id).lean();
    const key = Buffer.from(decryptSecret(doc!.secret), 'base64url');
    const past = Math.floor(Date.now() / 1000) - 5;
    const pastSig = createHmac('sha256', key).update(`${past}/${anaFiles.original_path}`).digest('base64url');
    tampered.push(`${good.pathname}?expires=${past}&sig=${pastSig}`);
    for (const url of tampered) {
      const res = await call('GET', url);
      expect(res.status, url).toBe(403);
      expect(res.body, url).toEqual(REFUSED);
    }
    // the untouched link still works: the refusals changed nothing
    expect((await call('GET', `${good.pathname}${good.search}`)).status).toBe(200);
  }, 120_000);

  it("rotating the organization's signing key (admin, audited) revokes every link made before; a basic key may not rotate", async () => {
    const before = await linkOf(ana.key, anaFiles.original_path);
    const other = await newTenant();
    const otherUser = await basicUser(other);
    const theirs = await upload(otherUser);
    const theirLink = await linkOf(otherUser.key, theirs.thumbnail_path);

    expect((await call('POST', '/api/files/signing-key/rotate', { key: ana.key })).status).toBe(403);
    expect((await open(before)).status).toBe(200);
    const rotated = await call('POST', '/api/files/signing-key/rotate', { key: t.adminKey });
    expect(rotated.status).toBe(200);
    expect(Date.parse(rotated.body.rotated_at)).toBeGreaterThan(Date.now() - 60_000);

    const refused = await open(before);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual(REFUSED);
    expect((await open(await linkOf(ana.key, anaFiles.original_path))).status).toBe(200);
    // another organization's links are its own key's
    expect((await open(theirLink)).status).toBe(200);

    const audit = await call('GET', `/api/audit?action=file_link_key.rotate`, { key: t.adminKey });
    expect(audit.body.records).toHaveLength(1);
    expect(audit.body.records[0].target).toEqual({ type: 'organization', id: t.organization_id });
  }, 120_000);

  it("two first links at once share the organization's one key; a link outlives the revoked key that made it, until it expires", async () => {
    const fresh = await newTenant();
    const dana = await basicUser(fresh);
    const files = await upload(dana);
    const [one, two] = await Promise.all([
      linkOf(dana.key, files.original_path),
      linkOf(fresh.adminKey, files.thumbnail_path),
    ]);
    expect((await open(one)).status).toBe(200);
    expect((await open(two)).status).toBe(200);
    const revoked = await call('POST', '/revoke_api_key', {
      key: fresh.adminKey,
      json: { user_id: dana.user_id, api_key: dana.key },
    });
    expect(revoked.status).toBe(200);
    expect((await link(dana.key, { path: files.original_path })).status).toBe(401);
    // documented: a link is a bearer URL; a rotation is what ends the organization's links early
    expect((await open(one)).status).toBe(200);
  }, 120_000);

  it('serves a file that is no image or PDF by its bytes as a download, whatever type it was stored with, never as a page of this origin', async () => {
    const path = `${t.organization_id}/${ana.user_id}/originals/page.html`;
    // a "photo" whose bytes are a page: its declared type is not believed
    await putObject(path, Buffer.from('<script>alert(1)</script>'), 'image/jpeg');
    const res = await open(await linkOf(ana.key, path));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="page.html"');
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
  });

  it("after the user's erasure the link answers 404", async () => {
    const cara = await basicUser(t);
    const files = await upload(cara);
    const url = await linkOf(cara.key, files.original_path, 3600);
    expect((await open(url)).status).toBe(200);
    const erase = await call('DELETE', `/api/users/${cara.idp_id}`, { key: t.adminKey, json: { reason: 'asked' } });
    expect(erase.status).toBe(202);
    await until(
      'the erasure completed',
      () => call('GET', `/api/users/${cara.user_id}/erasure`, { key: t.adminKey }),
      (r) => r.body.erasure?.status === 'completed',
      180_000,
      500,
    );
    const gone = await open(url);
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ detail: 'File not found' });
  }, 240_000);
});
