import fs from 'node:fs';

import { Client, Connection } from '@temporalio/client';
import { Client as MinioClient } from 'minio';
import mongoose from 'mongoose';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

import { basicUser, call, fileForm, newTenant, type Tenant } from '../helpers/api.ts';

const fixture = (name: string) => fs.readFileSync(new URL(`../fixtures/${name}`, import.meta.url));
const env = () => inject('platformEnv');

let temporal: Client;
let minio: MinioClient;
let db: mongoose.Connection;
let t: Tenant;
let user: { key: string; user_id: string; idp_id: string };

beforeAll(async () => {
  const e = env();
  temporal = new Client({
    connection: await Connection.connect({ address: e.TEMPORAL_ADDRESS }),
    namespace: e.TEMPORAL_NAMESPACE,
  });
  const [host, port] = e.MINIO_ENDPOINT.split(':');
  minio = new MinioClient({
    endPoint: host,
    port: Number(port),
    useSSL: false,
    accessKey: e.MINIO_ACCESS_KEY,
    secretKey: e.MINIO_SECRET_KEY,
  });
  db = await mongoose.createConnection(e.MONGODB_URI).asPromise();
  t = await newTenant();
  user = await basicUser(t);
});

afterAll(async () => {
  await temporal?.connection.close();
  await db?.close();
});

async function objectBytes(key: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of await minio.getObject(env().MINIO_BUCKET, key)) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Colour of a pixel near the left and right edge of a JPEG: tells orientation from the pixels. */
async function sides(jpeg: Buffer) {
  const { data, info } = await sharp(jpeg).raw().toBuffer({ resolveWithObject: true });
  const at = (x: number) =>
    Array.from(
      data.subarray(
        (Math.floor(info.height / 2) * info.width + x) * info.channels,
        (Math.floor(info.height / 2) * info.width + x) * info.channels + 3,
      ),
    );
  const redish = (p: number[]) => p[0] > 150 && p[2] < 90;
  const blueish = (p: number[]) => p[2] > 150 && p[0] < 90;
  return { width: info.width, height: info.height, leftRed: redish(at(3)), rightBlue: blueish(at(info.width - 4)) };
}

const processImage = (name: string, data: Buffer, extra: Record<string, string> = {}, key = user.key) =>
  call('POST', '/process_image', {
    key,
    form: fileForm(
      { user_id: user.idp_id, session_id: 'ses_test', conversation_id: 'conv_img', ...extra },
      { data, name },
    ),
  });

describe('POST /process_image', () => {
  it.each([
    ['photo.jpg', 'jpeg', '320x240'],
    ['photo.png', 'png', '320x240'],
    ['photo.heic', 'heic', '640x480'],
  ])('stores %s, thumbnails it and reports its metadata', async (name, format, dimensions) => {
    const data = fixture(name);
    const res = await processImage(name, data);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const { body } = res;
    expect(body.success).toBe(true);
    expect(body.data.metadata).toMatchObject({ format, dimensions, size_bytes: data.length });
    expect(body.data.metadata.size).toMatch(/^\d+(\.\d)? (B|KB|MB)$/);
    expect(body.thumbnail_path).toBe(body.data.thumbnail_path);
    expect(body.thumbnail_path).toMatch(new RegExp(`^${t.organization_id}/${user.user_id}/thumbnails/[^/]+\\.jpg$`));
    expect(body.data.original_path).toMatch(new RegExp(`^${t.organization_id}/${user.user_id}/originals/`));
    expect(body.normalized_response).toContain(dimensions);
    expect(body.metadata).toMatchObject({
      organization_id: t.organization_id,
      user_id: user.user_id,
      idp_id: user.idp_id,
      conversation_id: 'conv_img',
    });

    expect((await objectBytes(body.data.original_path)).equals(data)).toBe(true);
    const thumb = await sides(await objectBytes(body.thumbnail_path));
    expect(Math.max(thumb.width, thumb.height)).toBe(256);
    expect(thumb.leftRed && thumb.rightBlue).toBe(true);
  });

  it.each([
    ['rotated.heic', '300x400'],
    ['rotated.jpg', '300x400'],
    ['iphone-grid.heic', '600x800'], // tiled grid + irot + EXIF orientation + thumbnail item, as iPhones write
  ])('turns %s upright (stored landscape, shown portrait %s)', async (name, dimensions) => {
    const res = await processImage(name, fixture(name));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.metadata.dimensions).toBe(dimensions);
    const thumb = await sides(await objectBytes(res.body.thumbnail_path));
    expect(thumb).toEqual({ width: 192, height: 256, leftRed: true, rightBlue: true });
  });

  it('runs as a workflow an operator finds by organization and user', async () => {
    const res = await processImage('photo.jpg', fixture('photo.jpg'));
    const workflowId = res.body.metadata.workflow_id as string;
    expect(workflowId).toMatch(/^image:/);
    const handle = temporal.workflow.getHandle(workflowId);
    const description = await handle.describe();
    expect(description.status.name).toBe('COMPLETED');
    expect(description.type).toBe('processImageWorkflow');
    expect(description.searchAttributes).toMatchObject({
      OrganizationId: [t.organization_id],
      UserId: [user.user_id],
      Component: ['images'],
    });
    // Visibility is eventually consistent: poll the operator's query until the run shows up.
    const query = `OrganizationId = "${t.organization_id}" AND UserId = "${user.user_id}" AND WorkflowType = "processImageWorkflow"`;
    let found: string[] = [];
    for (let i = 0; i < 50 && !found.includes(workflowId); i += 1) {
      found = [];
      for await (const wf of temporal.workflow.list({ query })) found.push(wf.workflowId);
      if (!found.includes(workflowId)) await new Promise((r) => setTimeout(r, 200));
    }
    expect(found).toContain(workflowId);
  });

  it('stores the normalized response for the conversation', async () => {
    const res = await processImage('photo.png', fixture('photo.png'), { conversation_id: 'conv_normalized' });
    const stored = await db.collection('normalized_responses').findOne({ response_id: res.body.metadata.workflow_id });
    expect(stored).toMatchObject({
      conversation_id: 'conv_normalized',
      organization_id: t.organization_id,
      user_id: user.user_id,
      source: 'image',
      message: res.body.normalized_response,
    });
  });

  it.each([
    {
      name: 'notes.txt',
      data: Buffer.from('just some text, not an image\n'),
      status: 400,
      message: /Unsupported file type: text\/plain/,
    },
    {
      name: 'fake.jpg',
      data: Buffer.from('%PDF-1.4\n%âãÏÓ\n1 0 obj\n'),
      status: 400,
      message: /Unsupported file type: application\/pdf/,
    },
    { name: 'empty.jpg', data: Buffer.alloc(0), status: 422, message: /empty/ },
    { name: 'truncated.jpg', data: fixture('truncated.jpg'), status: 422, message: /corrupt/ },
    { name: 'bomb.png', data: fixture('bomb.png'), status: 422, message: /20000x20000 pixels/ },
    {
      name: 'garbage.heic',
      data: Buffer.concat([
        Buffer.from('0000001c6674797068656963000000006d69663168656963', 'hex'),
        Buffer.alloc(200, 7),
      ]),
      status: 422,
      message: /corrupt/,
    },
  ])('refuses $name with a clear $status and keeps nothing', async ({ name, data, status, message }) => {
    const res = await processImage(name, data);
    expect(res.status).toBe(status);
    expect(res.body.detail).toMatch(message);
    const listed: string[] = [];
    for await (const o of minio.listObjectsV2(
      env().MINIO_BUCKET,
      `${t.organization_id}/${user.user_id}/originals/`,
      true,
    )) {
      if ((o as { name?: string }).name?.endsWith(`-${name}`)) listed.push((o as { name: string }).name);
    }
    expect(listed).toEqual([]);
  });

  it('answers 413 for an upload over the limit (5 MB in tests)', async () => {
    const res = await processImage('huge.jpg', Buffer.alloc(6 * 1024 * 1024, 1));
    expect(res.status).toBe(413);
    expect(res.body.detail).toMatch(/limit/);
  });

  it('answers 422 naming the missing field or file', async () => {
    const noFile = await call('POST', '/process_image', {
      key: user.key,
      form: fileForm({ user_id: user.idp_id, session_id: 's', conversation_id: 'c' }),
    });
    expect(noFile.status).toBe(422);
    expect(noFile.body.detail).toMatch(/^file/);
    const noConversation = await call('POST', '/process_image', {
      key: user.key,
      form: fileForm({ user_id: user.idp_id, session_id: 's' }, { data: fixture('photo.jpg'), name: 'a.jpg' }),
    });
    expect(noConversation.status).toBe(422);
    expect(noConversation.body.detail).toMatch(/^conversation_id/);
    const notMultipart = await call('POST', '/process_image', { key: user.key, json: { user_id: 'x' } });
    expect(notMultipart.status).toBe(415);
  });

  it("refuses another organization's or another user's upload target", async () => {
    const other = await newTenant();
    const cross = await processImage('photo.jpg', fixture('photo.jpg'), { organization_id: other.organization_id });
    expect(cross.status).toBe(403);
    const peer = await basicUser(t);
    const res = await call('POST', '/process_image', {
      key: user.key,
      form: fileForm(
        { user_id: peer.user_id, session_id: 's', conversation_id: 'c' },
        { data: fixture('photo.jpg'), name: 'a.jpg' },
      ),
    });
    expect(res.status).toBe(403);
  });
});

describe('POST /convert_heic', () => {
  it('returns an upright full-size JPEG of a HEIC photo', async () => {
    const res = await call('POST', '/convert_heic', {
      key: user.key,
      form: fileForm({}, { data: fixture('rotated.heic'), name: 'IMG_0001.HEIC' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    expect(await sides(res.raw)).toEqual({ width: 300, height: 400, leftRed: true, rightBlue: true });
  });

  it('refuses what is not HEIC', async () => {
    const res = await call('POST', '/convert_heic', {
      key: user.key,
      form: fileForm({}, { data: fixture('photo.jpg'), name: 'IMG.HEIC' }),
    });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/Unsupported file type: image\/jpeg/);
  });
});

describe('GET /get_response/{conversation_id}', () => {
  it('returns the normalized responses of the conversation, newest first', async () => {
    const conversation = `conv_resp_${Date.now()}`;
    const first = await processImage('photo.png', fixture('photo.png'), { conversation_id: conversation });
    const second = await processImage('photo.jpg', fixture('photo.jpg'), { conversation_id: conversation });
    const res = await call('GET', `/get_response/${conversation}?user_id=${user.idp_id}`, { key: user.key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, message: second.body.normalized_response });
    expect(res.body.metadata).toMatchObject({
      source: 'image',
      conversation_id: conversation,
      workflow_id: second.body.metadata.workflow_id,
    });
    expect(res.body.responses.map((r: any) => r.message)).toEqual([
      second.body.normalized_response,
      first.body.normalized_response,
    ]);
  });

  it('answers 404 "No normalized response found" and keeps users and organizations apart', async () => {
    const missing = await call('GET', `/get_response/conv_nothing?user_id=${user.user_id}`, { key: user.key });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ detail: 'No normalized response found' });
    await processImage('photo.png', fixture('photo.png'), { conversation_id: 'conv_private' });
    const peer = await basicUser(t);
    expect((await call('GET', `/get_response/conv_private?user_id=${user.user_id}`, { key: peer.key })).status).toBe(
      403,
    );
    expect((await call('GET', `/get_response/conv_private?user_id=${peer.user_id}`, { key: peer.key })).status).toBe(
      404,
    );
    const other = await newTenant();
    expect(
      (
        await call('GET', `/get_response/conv_private?user_id=${user.user_id}&organization_id=${t.organization_id}`, {
          key: other.adminKey,
        })
      ).status,
    ).toBe(403);
    expect((await call('GET', '/get_response/conv_private', { key: user.key })).status).toBe(422);
  });
});

describe('GET /thumbnail/{user_id}/{filename}', () => {
  it('serves the stored JPEG by user_id or idp_id, and 404 "Thumbnail not found" otherwise', async () => {
    const res = await processImage('photo.jpg', fixture('photo.jpg'));
    const name = res.body.thumbnail_path.split('/').pop();
    const stored = await objectBytes(res.body.thumbnail_path);
    for (const ref of [user.user_id, user.idp_id]) {
      const thumb = await call('GET', `/thumbnail/${ref}/${name}`, { key: user.key });
      expect(thumb.status).toBe(200);
      expect(thumb.headers.get('content-type')).toBe('image/jpeg');
      expect(thumb.raw.equals(stored)).toBe(true);
    }
    const missing = await call('GET', `/thumbnail/${user.user_id}/nope.jpg`, { key: user.key });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ detail: 'Thumbnail not found' });
    for (const hostile of ['..%2F..%2Foriginals%2Fx.jpg', '%2E%2E', '.hidden.jpg']) {
      const r = await call('GET', `/thumbnail/${user.user_id}/${hostile}`, { key: user.key });
      expect([404, 422], hostile).toContain(r.status);
    }
    const other = await newTenant();
    expect(
      (
        await call('GET', `/thumbnail/${user.user_id}/${name}?organization_id=${t.organization_id}`, {
          key: other.adminKey,
        })
      ).status,
    ).toBe(403);
    expect((await call('GET', `/thumbnail/${user.user_id}/${name}`, { key: other.adminKey })).status).toBe(404);
  });
});
