/**
 * A user's data handed back and erased, over HTTP against the running platform: a user with data
 * in every component is exported (a zip with every component's file and the user's files byte for
 * byte, nothing of another user, no secret) and erased (nothing of theirs readable through the
 * routes or left in MinIO or in Temporal's ended runs; the books kept under a tombstone; other users
 * untouched; the same idp_id joins again as a new user). Other users' keys can do neither.
 */
import { createHash } from 'node:crypto';

import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';

import { getObject } from '../../activities/adapters/storage.ts';
import { runtime } from '../../activities/core/runtime.ts';
import { takeExportQuota } from '../../activities/privacy/store.ts';
import { adminKey, basicUser, call, fileForm, newTenant, type Tenant, unique, until } from '../helpers/api.ts';
import { useSuiteClients, useSuiteRuntime } from '../helpers/runtime.ts';
import { unzip } from '../helpers/zip.ts';

useSuiteRuntime();
const clients = useSuiteClients();

const EVENTS = '/api/scheduler-service/events';
type User = Awaited<ReturnType<typeof basicUser>>;

const ok = <T extends { status: number; body: unknown }>(what: string, res: T, status = 200): T => {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(status);
  return res;
};

let t: Tenant;
let a: User;
let b: User;
let photoA: Buffer;
let giftId: string;

interface Seeded {
  conversation_id: string;
  image: { original_path: string; thumbnail_path: string };
  event_id: string;
  feedback_id: string;
  code: string;
}
const seeded = new Map<string, Seeded>();

async function seed(u: User, n: number): Promise<Seeded> {
  const conversation_id = ok(
    'session',
    await call('POST', '/initialize_session', { key: u.key, json: { user_id: u.user_id } }),
  ).body.conversation_id;
  const photo = await sharp({
    create: { width: 64, height: 48, channels: 3, background: { r: 200, g: 10 * n, b: 30 } },
  })
    .jpeg()
    .toBuffer();
  if (n === 1) photoA = photo;
  const image = ok(
    'image',
    await call('POST', '/process_image', {
      key: u.key,
      form: fileForm(
        { user_id: u.user_id, session_id: 's1', conversation_id },
        { data: photo, name: `photo-${n}.jpg`, type: 'image/jpeg' },
      ),
    }),
  ).body.data;
  ok(
    'document',
    await call('POST', '/process_document', {
      key: u.key,
      form: fileForm(
        { user_id: u.user_id, session_id: 's1', conversation_id },
        { data: Buffer.from(`# Notes ${n}\n\nPrivate notes of ${u.idp_id}.\n`), name: `notes-${n}.md` },
      ),
    }),
  );
  ok('search', await call('POST', '/carina/search', { key: u.key, json: { idp_id: u.idp_id, query: `pizza ${n}` } }));
  const feedback_id = ok(
    'feedback',
    await call('POST', '/api/feedback/submit', {
      key: u.key,
      json: {
        user_id: u.user_id,
        feedback_type: 'general',
        rating: 3 + n,
        title: `By ${u.idp_id}`,
        comment: `Call me at +1 555 010${n}`,
      },
    }),
  ).body.feedback_id;
  const event_id = ok(
    'event',
    await call('POST', EVENTS, {
      key: u.key,
      json: {
        idp_id: u.idp_id,
        type_of_event: 'loyalty',
        recurrency: 'daily',
        start_event: '2031-01-05T09:30:00Z',
        metadata: { action_type: 'daily_login' },
      },
    }),
  ).body.event.id;
  ok(
    'award',
    await call('POST', `/loyalty/award-points/${u.idp_id}`, {
      key: t.adminKey,
      json: { action_type: 'purchase' },
      headers: { 'idempotency-key': `order-${n}` },
    }),
  );
  const code = ok('qr', await call('POST', '/loyalty/generate-referral-qr', { key: u.key, json: { idp_id: u.idp_id } }))
    .body.referral_code;
  ok(
    'redeem',
    await call('POST', `/api/gifts/gifts/${giftId}/redeem`, {
      key: u.key,
      json: { user_id: u.idp_id, phone_number: `+52551234567${n}` },
    }),
  );
  return {
    conversation_id,
    image: { original_path: image.original_path, thumbnail_path: image.thumbnail_path },
    event_id,
    feedback_id,
    code,
  };
}

const balance = async (u: User) =>
  ok('balance', await call('GET', `/loyalty/points/${u.user_id}`, { key: t.adminKey })).body;

beforeAll(async () => {
  t = await newTenant('business');
  ok('rules', await call('PUT', '/loyalty/rules', { key: t.adminKey, json: { actions: { purchase: 100 } } }));
  giftId = ok(
    'gift',
    await call('POST', '/api/gifts/gifts', {
      key: t.adminKey,
      json: {
        gift_name: 'Telcel 10',
        gift_type: 'mobile_top-ups',
        country: 'MX',
        telco_supplier: 'Telcel',
        recharge_amount: 10,
        points_value: 30,
      },
    }),
    201,
  ).body.gift.id;
  a = await basicUser(t);
  b = await basicUser(t);
  ok(
    'email',
    await call('PATCH', `/api/users/${a.user_id}`, {
      key: t.adminKey,
      json: { email: `${a.idp_id}@example.com`, display_name: 'Ana A.' },
    }),
  );
  seeded.set(a.user_id, await seed(a, 1));
  seeded.set(b.user_id, await seed(b, 2));
}, 300_000);

const exportOf = (u: User, id: string, key = u.key) => call('GET', `/api/users/${u.user_id}/exports/${id}`, { key });

describe('privacy: export', () => {
  let zip: Map<string, Buffer>;

  it("exports a user's data as a zip: a JSON file per component, the user's files byte for byte, nothing of another user, no secret", async () => {
    const started = ok('export', await call('POST', `/api/users/${a.user_id}/export`, { key: a.key }), 202).body;
    expect(started).toMatchObject({ success: true, status: 'processing' });
    const ready = await until(
      'the export ready',
      () => exportOf(a, started.export_id),
      (r) => r.body.export?.status !== 'processing',
      120_000,
      500,
    );
    expect(ready.body.export.status, JSON.stringify(ready.body)).toBe('ready');
    expect(ready.body.export.expires_at).toBeTruthy();
    const download = ok(
      'download',
      await call('GET', `/api/users/${a.user_id}/exports/${started.export_id}/download`, { key: a.key }),
    );
    expect(download.headers.get('content-type')).toBe('application/zip');
    expect(download.raw.length).toBe(ready.body.export.bytes);
    zip = await unzip(download.raw);

    const manifest = JSON.parse(zip.get('manifest.json')!.toString());
    expect(manifest).toMatchObject({
      format: 'user-export/1',
      export_id: started.export_id,
      organization_id: t.organization_id,
      user_id: a.user_id,
    });
    const components = [
      'sessions',
      'scheduler',
      'support',
      'scanning',
      'documents',
      'text',
      'responses',
      'images',
      'search',
      'feedback',
      'email',
      'llm',
      'idempotency',
      'retail',
      'loyalty',
      'gifts',
      'billing',
      'events',
      'identity',
    ];
    for (const c of components) {
      expect(zip.has(`${c}.json`), c).toBe(true);
      expect(Object.keys(manifest.components)).toContain(c);
    }
    // The counts shown on the export are the files' own.
    expect(ready.body.export.counts.identity.user).toBe(1);

    const identity = JSON.parse(zip.get('identity.json')!.toString());
    expect(identity.user[0]).toMatchObject({ user_id: a.user_id, idp_id: a.idp_id, email: `${a.idp_id}@example.com` });
    const points = JSON.parse(zip.get('loyalty.json')!.toString());
    expect(JSON.stringify(points)).toContain(seeded.get(a.user_id)!.code);
    const feedback = JSON.parse(zip.get('feedback.json')!.toString());
    expect(JSON.stringify(feedback)).toContain(seeded.get(a.user_id)!.feedback_id);
    const scheduler = JSON.parse(zip.get('scheduler.json')!.toString());
    expect(JSON.stringify(scheduler)).toContain(seeded.get(a.user_id)!.event_id);

    // Files: every stored object of the user, byte for byte.
    const files = [...zip.keys()].filter((k) => k.startsWith('files/'));
    expect(files.length).toBeGreaterThanOrEqual(3);
    const original = seeded.get(a.user_id)!.image.original_path;
    const stored = await getObject(original);
    expect(stored).not.toBeNull();
    const same = files.filter((f) => zip.get(f)!.equals(stored!));
    expect(same.length, `no file of the zip equals ${original}`).toBeGreaterThanOrEqual(1);
    expect(stored!.equals(photoA)).toBe(true);

    // Nothing of B, no key, no key hash.
    const all = Buffer.concat([...zip.values()]).toString('latin1');
    for (const foreign of [b.user_id, b.idp_id, seeded.get(b.user_id)!.event_id, seeded.get(b.user_id)!.code])
      expect(all).not.toContain(foreign);
    expect(all).not.toContain(a.key);
    expect(all).not.toContain(createHash('sha256').update(a.key).digest('hex'));
  }, 180_000);

  it("refuses another user's basic key, another organization's admin, and asks again answer the running export", async () => {
    expect((await call('POST', `/api/users/${a.user_id}/export`, { key: b.key })).status).toBe(403);
    const other = await newTenant();
    expect([403, 404]).toContain(
      (await call('POST', `/api/users/${a.user_id}/export`, { key: other.adminKey })).status,
    );
    expect([403, 404]).toContain(
      (
        await call('POST', `/api/users/${a.user_id}/export?organization_id=${t.organization_id}`, {
          key: other.adminKey,
        })
      ).status,
    );
    const byAdmin = ok(
      'admin export',
      await call('POST', `/api/users/${b.user_id}/export`, { key: t.adminKey }),
      202,
    ).body;
    expect((await exportOf(a, byAdmin.export_id, a.key)).status).toBe(404); // B's export is not A's
    expect((await exportOf(b, byAdmin.export_id, a.key)).status).toBe(403);
    const again = ok('again', await call('POST', `/api/users/${b.user_id}/export`, { key: b.key }), 202).body;
    if (again.status === 'processing') expect(again.export_id).toBe(byAdmin.export_id);
    await until(
      'B export ready',
      () => exportOf(b, byAdmin.export_id),
      (r) => r.body.export?.status === 'ready',
      120_000,
      500,
    );
  }, 180_000);
});

describe('privacy: erasure', () => {
  it('erases the user: nothing readable, nothing in MinIO or in ended runs, books kept under a tombstone, B untouched', async () => {
    const bBefore = await balance(b);
    const sA = seeded.get(a.user_id)!;
    expect((await call('DELETE', `/api/users/${a.user_id}`, { key: b.key, json: {} })).status).toBe(403);
    const started = ok(
      'erase',
      await call('DELETE', `/api/users/${a.idp_id}`, { key: t.adminKey, json: { reason: 'asked by the user' } }),
      202,
    ).body;
    expect(started).toMatchObject({ success: true, user_id: a.user_id, status: 'processing' });
    const done = await until(
      'the erasure completed',
      () => call('GET', `/api/users/${a.user_id}/erasure`, { key: t.adminKey }),
      (r) => r.body.erasure?.status === 'completed',
      180_000,
      500,
    );
    const steps = done.body.erasure.steps;
    for (const [name, step] of Object.entries<any>(steps)) expect(step.status, name).toBe('done');
    expect(steps.identity.report.keys_revoked).toBe(1);
    expect(steps.identity.report.user_deleted).toBe(1);

    // Asking again answers the same erasure.
    const again = ok('again', await call('DELETE', `/api/users/${a.user_id}`, { key: t.adminKey, json: {} }), 202).body;
    expect(again.erasure_id).toBe(started.erasure_id);

    // Every id of the user answers 404; the key is refused.
    expect((await call('GET', `/api/users/${a.user_id}`, { key: t.adminKey })).status).toBe(404);
    expect((await call('GET', `/api/users/${a.idp_id}`, { key: t.adminKey })).status).toBe(404);
    expect((await call('GET', `/loyalty/points/${a.user_id}`, { key: t.adminKey })).status).toBe(404);
    expect((await call('GET', `${EVENTS}/${sA.event_id}`, { key: t.adminKey })).status).toBe(404);
    expect((await call('GET', `/referral/${sA.code}`)).status).toBe(404);
    expect((await call('POST', `/api/users/${a.user_id}/export`, { key: t.adminKey })).status).toBe(404);
    await until(
      'the key refused',
      () => call('GET', `/api/users/${a.user_id}`, { key: a.key }),
      (r) => r.status === 401,
      5_000,
    );

    // Nothing of theirs left in MinIO.
    const { minio, minioSettings } = runtime();
    const left: string[] = [];
    for await (const o of minio.listObjectsV2(minioSettings.bucket, `${t.organization_id}/${a.user_id}/`, true))
      if (o.name) left.push(o.name);
    expect(left).toEqual([]);
    for (const key of [sA.image.original_path, sA.image.thumbnail_path]) expect(await getObject(key)).toBeNull();

    // No ended run of theirs left in Temporal (their inputs held the user's data).
    expect(steps.runs.report.runs_deleted, JSON.stringify(steps.runs)).toBeGreaterThanOrEqual(4);
    const runsOf = async () => {
      const runs: string[] = [];
      for await (const r of clients.temporal.workflow.list({
        query: `OrganizationId = '${t.organization_id}' AND UserId = '${a.user_id}' AND Component != 'privacy'`,
      }))
        runs.push(r.workflowId);
      return runs;
    };
    // Temporal deletes a run in the background: its listing goes a moment later.
    expect(await until('the ended runs deleted', runsOf, (runs) => runs.length === 0, 90_000, 500)).toEqual([]);

    // The event for the organization's systems.
    const events = ok('events', await call('GET', `/api/events?type=user.erased`, { key: t.adminKey })).body.events;
    expect(events.map((e: any) => e.data)).toContainEqual(
      expect.objectContaining({ user_id: a.user_id, erasure_id: started.erasure_id }),
    );

    // B untouched; B's export still works.
    expect(await balance(b)).toEqual(bBefore);
    expect((await call('GET', `${EVENTS}/${seeded.get(b.user_id)!.event_id}`, { key: b.key })).status).toBe(200);

    // The same idp_id joins again as a new user, with nothing of the old one.
    const back = await basicUser(t, a.idp_id);
    expect(back.user_id).not.toBe(a.user_id);
    expect((await call('GET', `/loyalty/points/${back.user_id}`, { key: t.adminKey })).status).toBe(404); // no points of the old one
    expect((await call('GET', `${EVENTS}?idp_id=${a.idp_id}`, { key: back.key })).body.events ?? []).toEqual([]);
    const user = ok('user', await call('GET', `/api/users/${back.user_id}`, { key: back.key })).body.user;
    expect(user.email).toBeNull();
  }, 300_000);

  it("an admin cannot erase a user holding more rights; another organization's admin cannot erase", async () => {
    const other = await newTenant();
    const u = await basicUser(t);
    expect([403, 404]).toContain(
      (
        await call('DELETE', `/api/users/${u.user_id}?organization_id=${t.organization_id}`, {
          key: other.adminKey,
          json: {},
        })
      ).status,
    );
    expect((await call('DELETE', `/api/users/${u.user_id}`, { key: other.adminKey, json: {} })).status).toBe(404);
    // the system admin's own user is above an organization's admin
    const sys = await call('POST', '/generate_api_key', {
      key: adminKey(),
      json: { user_id: unique('sys'), organization_id: t.organization_id, permissions: ['system_admin'] },
    });
    expect(sys.status).toBe(200);
    expect(
      (await call('DELETE', `/api/users/${sys.body.metadata.user_id}`, { key: t.adminKey, json: {} })).status,
    ).toBe(403);
    expect((await call('GET', `/api/users/${u.user_id}/erasure`, { key: t.adminKey })).status).toBe(404);
  }, 60_000);
});

describe('privacy: the export allowance', () => {
  it('gives at most USER_EXPORTS_PER_DAY exports a day to concurrent requests, and a new window after 24 hours', async () => {
    const org = unique('org');
    const taken = await Promise.all(Array.from({ length: 12 }, () => takeExportQuota(org, 'usr_x', 3)));
    expect(taken.filter(Boolean)).toHaveLength(3);
    expect(await takeExportQuota(org, 'usr_x', 3, new Date(Date.now() + 86_400_000 + 1000))).toBe(true);
    expect(await takeExportQuota(org, 'usr_y', 3)).toBe(true);
  });
});
