/**
 * Idempotency-Key on every upload that starts a workflow: the same key and request answer the
 * first result and start nothing new (counted in Temporal's visibility and in MinIO), another
 * request under the key is 422, concurrent duplicates share one run.
 */
import fs from 'node:fs';

import { Client, Connection } from '@temporalio/client';
import { Client as MinioClient } from 'minio';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

import { basicUser, call, fileForm, newTenant, type Res, type Tenant, unique } from '../helpers/api.ts';
import { pdfWithText } from '../helpers/documents.ts';
import { renderReceipt } from '../helpers/receipts.ts';
import { balance, groceries, type Shop, shop } from '../helpers/shop.ts';
import { speak } from '../helpers/speech.ts';

const fixture = (name: string) => fs.readFileSync(new URL(`../fixtures/${name}`, import.meta.url));
const env = () => inject('platformEnv');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let temporal: Client;
let minio: MinioClient;
let t: Tenant;
let s: Shop;

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
  t = await newTenant();
  s = await shop();
});
afterAll(async () => temporal?.connection.close());

type User = { key: string; user_id: string; idp_id: string };

/** Runs of a workflow type started for the user, once visibility has caught up with `atLeast`. */
async function runs(type: string, user_id: string, atLeast: number): Promise<number> {
  const count = async () => {
    let n = 0;
    for await (const _ of temporal.workflow.list({ query: `WorkflowType = '${type}' AND UserId = '${user_id}'` }))
      n += 1;
    return n;
  };
  for (let i = 0; i < 40 && (await count()) < atLeast; i += 1) await sleep(250);
  await sleep(500); // a run started late would show by now
  return count();
}

async function originals(org: string, user_id: string): Promise<number> {
  let n = 0;
  for await (const _ of minio.listObjectsV2(env().MINIO_BUCKET, `${org}/${user_id}/originals/`, true)) n += 1;
  return n;
}

const withKey = (key: string | undefined): Record<string, string> =>
  key === undefined ? {} : { 'Idempotency-Key': key };

interface Route {
  name: string;
  workflow: string;
  org: () => string;
  user: () => Promise<User>;
  /** variant 0 and 1 are two different requests */
  send: (u: User, key: string | undefined, variant: 0 | 1) => Promise<Res>;
  /** the media or scan id the answer names */
  id: (r: Res) => string;
}

const receiptImage = (variant: number, day: number) =>
  renderReceipt(groceries(`2026-10-${String(day + variant).padStart(2, '0')}`));
const conversation = async (u: User) =>
  (await call('POST', '/initialize_session', { key: u.key, json: { user_id: u.user_id } })).body
    .conversation_id as string;
const conversations = new Map<string, string>();
/** Made once per variant: a PDF carries its creation time, so a retry must send the same bytes. */
const cached = <T>(make: (v: 0 | 1) => T | Promise<T>) => {
  const made = new Map<number, Promise<T>>();
  return (v: 0 | 1) => {
    if (!made.has(v)) made.set(v, Promise.resolve(make(v)));
    return made.get(v)!;
  };
};
const invoice = cached((v) => pdfWithText([`INVOICE ${v}`, 'Amount due: $120.00']));
const question = cached((v) => speak(v ? 'when do my reward points expire' : 'i forgot my password'));

const ROUTES: Route[] = [
  {
    name: '/process_image',
    workflow: 'processImageWorkflow',
    org: () => t.organization_id,
    user: () => basicUser(t),
    send: (u, key, v) =>
      call('POST', '/process_image', {
        key: u.key,
        headers: withKey(key),
        form: fileForm(
          { user_id: u.user_id, session_id: 's1', conversation_id: 'c1' },
          { data: fixture(v ? 'photo.png' : 'photo.jpg'), name: 'photo' },
        ),
      }),
    id: (r) => r.body.metadata.media_id,
  },
  {
    name: '/process_document',
    workflow: 'processDocumentWorkflow',
    org: () => t.organization_id,
    user: () => basicUser(t),
    send: async (u, key, v) =>
      call('POST', '/process_document', {
        key: u.key,
        headers: withKey(key),
        form: fileForm(
          { user_id: u.user_id, session_id: 's1', conversation_id: 'c1' },
          { data: await invoice(v), name: 'invoice.pdf' },
        ),
      }),
    id: (r) => r.body.metadata.media_id,
  },
  {
    name: '/generate_thumbnail',
    workflow: 'generateThumbnailWorkflow',
    org: () => t.organization_id,
    user: () => basicUser(t),
    send: (u, key, v) =>
      call('POST', '/generate_thumbnail', {
        key: u.key,
        headers: withKey(key),
        form: fileForm({}, { data: fixture(v ? 'photo.png' : 'photo.jpg'), name: 'photo' }),
      }),
    id: (r) => r.headers.get('x-thumbnail-path')!,
  },
  {
    name: '/support/transcribe',
    workflow: 'audioQaWorkflow',
    org: () => t.organization_id,
    user: async () => {
      const u = await basicUser(t);
      conversations.set(u.user_id, await conversation(u));
      return u;
    },
    send: async (u, key, v) =>
      call('POST', '/support/transcribe', {
        key: u.key,
        headers: withKey(key),
        form: fileForm(
          { user_id: u.user_id, conversation_id: conversations.get(u.user_id)! },
          { data: await question(v), name: 'q.wav' },
        ),
      }),
    id: (r) => r.body.file_path,
  },
  {
    name: '/retail/receipts',
    workflow: 'ticketScanWorkflow',
    org: () => s.t.organization_id,
    user: () => basicUser(s.t),
    send: async (u, key, v) =>
      call('POST', `/retail/receipts?venue_id=${s.venue.id}`, {
        key: u.key,
        headers: withKey(key),
        form: fileForm({}, { data: await receiptImage(v, 1), name: 'receipt.png', type: 'image/png' }),
      }),
    id: (r) => r.body.id,
  },
  {
    name: 'POST /api/ticket-scan/loyalty/ticket-scan',
    workflow: 'ticketScanWorkflow',
    org: () => s.t.organization_id,
    user: () => basicUser(s.t),
    send: async (u, key, v) =>
      call('POST', '/api/ticket-scan/loyalty/ticket-scan', {
        key: u.key,
        headers: withKey(key),
        json: {
          user_id: u.user_id,
          venue_id: String(s.venue.id),
          image: (await receiptImage(v, 11)).toString('base64'),
        },
      }),
    id: (r) => r.body.id,
  },
];

describe('Idempotency-Key on uploads', () => {
  it.each(ROUTES.map((r) => [r.name, r] as const))(
    '%s: the same key and request answer the first result and start one run; another request under the key is 422',
    async (_, route) => {
      const user = await route.user();
      const key = unique('upload');
      const first = await route.send(user, key, 0);
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      const again = await route.send(user, key, 0);
      expect(again.status, JSON.stringify(again.body)).toBe(200);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(route.id(again)).toBe(route.id(first));
      if (first.headers.get('content-type')?.includes('json')) expect(again.body).toEqual(first.body);
      else expect(again.raw.equals(first.raw)).toBe(true);

      const other = await route.send(user, key, 1);
      expect(other.status, JSON.stringify(other.body)).toBe(422);
      expect(other.body.detail).toMatch(/^Idempotency-Key: was already used with another request/);
      expect(await runs(route.workflow, user.user_id, 1)).toBe(1);
      expect(await originals(route.org(), user.user_id)).toBe(1);

      // Five at once under a new key: one run, one stored object, one answer.
      const key2 = unique('upload');
      const burst = await Promise.all(Array.from({ length: 5 }, () => route.send(user, key2, 1)));
      for (const r of burst) expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(new Set(burst.map(route.id)).size).toBe(1);
      expect(route.id(burst[0])).not.toBe(route.id(first));
      expect(await runs(route.workflow, user.user_id, 2)).toBe(2);
      expect(await originals(route.org(), user.user_id)).toBe(2);
    },
  );

  it('retrying a receipt with its key returns the scan that earned, not a rejected duplicate; points are credited once', async () => {
    const user = await basicUser(s.t);
    const key = unique('receipt');
    const image = await receiptImage(0, 21);
    const send = () =>
      call('POST', `/retail/receipts?venue_id=${s.venue.id}`, {
        key: user.key,
        headers: withKey(key),
        form: fileForm({}, { data: image, name: 'receipt.png', type: 'image/png' }),
      });
    const first = await send();
    expect(first.body).toMatchObject({ status: 'completed', total_points: 50, points_processed: true });
    const again = await send();
    expect(again.body).toMatchObject({ id: first.body.id, status: 'completed', duplicate_of: null });
    expect(await balance(s.t, user.user_id)).toBe(50);
  });

  it('answers a refused upload again with the same refusal and starts no second run', async () => {
    const user = await basicUser(t);
    const key = unique('refused');
    const send = (data: Buffer) =>
      call('POST', '/process_image', {
        key: user.key,
        headers: withKey(key),
        form: fileForm({ user_id: user.user_id, session_id: 's1', conversation_id: 'c1' }, { data, name: 'notes.txt' }),
      });
    const first = await send(Buffer.from('plain text, not an image'));
    expect(first.status).toBe(400);
    expect(first.body.detail).toMatch(/Unsupported file type/);
    const again = await send(Buffer.from('plain text, not an image'));
    expect(again.status).toBe(400);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await send(Buffer.from('other text'))).status).toBe(422);
    expect(await runs('processImageWorkflow', user.user_id, 1)).toBe(1);
  });

  it('scopes keys per user and per route', async () => {
    const [ana, ben] = [await basicUser(t), await basicUser(t)];
    const key = unique('shared');
    const image = (u: User) => ROUTES[0].send(u, key, 0);
    const a = await image(ana);
    const b = await image(ben);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.body.metadata.media_id).not.toBe(a.body.metadata.media_id);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    const aAgain = await image(ana);
    expect(aAgain.headers.get('idempotent-replayed')).toBe('true');
    expect(aAgain.body.metadata.media_id).toBe(a.body.metadata.media_id);
    const thumb = await ROUTES[2].send(ana, key, 1);
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get('idempotent-replayed')).toBeNull();
  });

  it('refuses a malformed key with 422 before storing anything', async () => {
    const user = await basicUser(t);
    for (const key of ['', '   ', 'k'.repeat(201), 'clé\u00e9', 'tab\there']) {
      const res = await ROUTES[0].send(user, key, 0);
      expect(res.status, JSON.stringify(key)).toBe(422);
      expect(res.body.detail).toBe('Idempotency-Key: must be 1 to 200 printable ASCII characters');
    }
    expect((await ROUTES[0].send(user, 'k'.repeat(200), 0)).status).toBe(200);
    expect(await originals(t.organization_id, user.user_id)).toBe(1);
  });
});
