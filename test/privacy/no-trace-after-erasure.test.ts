/**
 * One test for the whole platform: an erased person leaves no trace (docs/privacy.md). On a
 * platform of its own (its own database, bucket, task queue and DATA_DIR, so everything kept is
 * this test's), a user whose idp_id, email, name and every free text and file name they or an
 * admin wrote about them carry one unique marker uses every component; admins act on them (the
 * audit trail records it), events go out. Then the user is erased, and the marker is looked for in
 * every document of every collection, every object (name and bytes) of the bucket, every Temporal
 * history and Schedule of the task queue still kept, and every file under DATA_DIR: it is nowhere.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Client, Connection } from '@temporalio/client';
import * as Minio from 'minio';
import mongoose from 'mongoose';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { parseEnv } from '../../activities/core/config.ts';
import { generateSecret } from '../../activities/identity/api-keys.ts';
import { launchPlatform, type Platform } from '../../tools/platform.ts';
import { call, fileForm, unique, until } from '../helpers/api.ts';
import { renderReceipt } from '../helpers/receipts.ts';
import { isolatedPlatformEnv } from '../helpers/runtime.ts';

const queue = unique('privacy-marker');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'privacy-marker-'));
const systemKey = generateSecret();
/** Lower-case letters and digits: it survives every normalization a field may apply. */
const MARK = `zq${randomBytes(6).toString('hex')}`;

let platform: Platform;
let env: Record<string, string>;
let admin: string;
let org: string;
let ana: { key: string; user_id: string; idp_id: string };

const api = (
  method: string,
  route: string,
  key: string | undefined,
  opts: { json?: unknown; form?: FormData; headers?: Record<string, string> } = {},
) => call(method, route, { baseUrl: platform.edgeUrl, key, ...opts });

async function ok(what: string, res: Promise<{ status: number; body: any }>, status = [200, 201, 202]) {
  const r = await res;
  expect(status, `${what}: ${r.status} ${JSON.stringify(r.body)}`).toContain(r.status);
  return r.body;
}

beforeAll(async () => {
  env = isolatedPlatformEnv(
    { queue, dataDir, adminKey: systemKey },
    { WORKER_COUNT: '1', LOG_LEVEL: 'warn', WEBHOOK_ALLOW_PRIVATE: '1', SMTP_URL: '' },
  );
  platform = await launchPlatform({
    cfg: parseEnv({ ...process.env, ...env }),
    freePorts: true,
    env,
    stdio: 'ignore',
    log: () => undefined,
  });
  org = (
    await ok(
      'org',
      api('POST', '/api/organizations', systemKey, { json: { name: unique('Marker'), tier: 'business' } }),
    )
  ).organization.organization_id;
  admin = (
    await ok(
      'admin',
      api('POST', '/generate_api_key', systemKey, {
        json: { user_id: unique('admin'), organization_id: org, permissions: ['admin'] },
      }),
    )
  ).api_key;

  // The person: the marker in the idp_id (an email, as identity providers often use), email and name.
  const idp_id = `${MARK}@example.com`;
  const key = await ok('key', api('POST', '/generate_api_key', admin, { json: { user_id: idp_id } }));
  ana = { key: key.api_key, user_id: key.metadata.user_id, idp_id };
  await ok(
    'profile',
    api('PATCH', `/api/users/${encodeURIComponent(idp_id)}`, admin, {
      json: { email: `${MARK}.mail@example.com`, display_name: `Ana ${MARK}` },
    }),
  );

  // Everything the person writes or uploads.
  const conversation_id = (
    await ok('session', api('POST', '/initialize_session', ana.key, { json: { user_id: ana.user_id } }))
  ).conversation_id;
  await ok(
    'support',
    api('POST', '/support', ana.key, {
      json: { prompt: `where is my order ${MARK}`, user_id: ana.user_id, conversation_id },
    }),
  );
  await ok(
    'text',
    api('POST', '/process_text', ana.key, {
      json: {
        text: `My neighbour ${MARK} is lovely and the service was great.`,
        user_id: ana.user_id,
        conversation_id,
      },
    }),
  );
  await ok('search', api('POST', '/carina/search', ana.key, { json: { idp_id, query: `${MARK} pizza` } }));
  await ok(
    'feedback',
    api('POST', '/api/feedback/submit', ana.key, {
      json: {
        user_id: ana.user_id,
        feedback_type: 'general',
        rating: 4,
        title: `From ${MARK}`,
        comment: `Call ${MARK} back`,
      },
    }),
  );
  const photo = await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 200, g: 30, b: 30 } } })
    .jpeg()
    .toBuffer();
  await ok(
    'image',
    api('POST', '/process_image', ana.key, {
      form: fileForm(
        { user_id: ana.user_id, session_id: 's1', conversation_id },
        { data: photo, name: `${MARK}-photo.jpg`, type: 'image/jpeg' },
      ),
    }),
  );
  await ok(
    'document',
    api('POST', '/process_document', ana.key, {
      form: fileForm(
        { user_id: ana.user_id, session_id: 's1', conversation_id },
        { data: Buffer.from(`# Notes of ${MARK}\n\nPrivate.\n`), name: `${MARK}-notes.md` },
      ),
    }),
  );
  await ok(
    'thumbnail',
    api('POST', '/generate_thumbnail', ana.key, {
      form: fileForm({}, { data: Buffer.from(`plain text ${MARK}\n`), name: `${MARK}-plain.txt` }),
    }),
  );
  const receipt = await renderReceipt({
    merchant: `Shop ${MARK}`,
    address: '1 Main Street',
    date: '2026-11-20',
    items: [{ name: 'Bread', price: 2.5 }],
  });
  const venue = (
    await ok(
      'venue',
      api('POST', '/retail/admin/venues', admin, {
        json: { name: 'Corner Shop', address: '1 Main Street', latitude: 40.4, longitude: -3.7 },
      }),
    )
  ).venue;
  await ok(
    'receipt',
    api('POST', `/retail/receipts?venue_id=${venue.id}`, ana.key, {
      form: fileForm({}, { data: receipt, name: `${MARK}-receipt.png`, type: 'image/png' }),
    }),
  );
  await ok(
    'event',
    api('POST', '/api/scheduler-service/events', ana.key, {
      json: {
        idp_id,
        type_of_event: 'support',
        recurrency: 'daily',
        start_event: '2031-01-05T09:30:00Z',
        metadata: { prompt: `remind ${MARK} about points`, conversation_id },
      },
    }),
  );
  await ok(
    'mail',
    api('POST', '/email/send', admin, {
      json: {
        user_id: idp_id,
        conversation_id: '-',
        email_type: 'notification',
        metadata: { template: 'generic', subject: `Hello ${MARK}`, body: `Dear ${MARK}, thanks.` },
      },
    }),
  );
  await ok('qr', api('POST', '/loyalty/generate-referral-qr', ana.key, { json: { idp_id } }));

  // What admins do about the person, in their own words (the audit trail records each).
  await ok('rules', api('PUT', '/loyalty/rules', admin, { json: { actions: { purchase: 100 } } }));
  await ok(
    'award',
    api('POST', `/loyalty/award-points/${encodeURIComponent(idp_id)}`, admin, {
      json: { action_type: 'purchase', operation_id: 'order-1' },
    }),
  );
  await ok(
    'reverse',
    api('POST', '/loyalty/reverse', admin, {
      json: { operation_id: 'order-1', user_id: idp_id, reason: `fraud by ${MARK}` },
    }),
  );
  await ok('export', api('POST', `/api/users/${encodeURIComponent(idp_id)}/export`, admin));
}, 600_000);

afterAll(async () => {
  await platform?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** Every string in a value, binaries decoded as UTF-8 (payloads, BSON binaries). */
function* strings(v: unknown, depth = 0): Generator<string> {
  if (depth > 64 || v === null || v === undefined) return;
  if (typeof v === 'string') yield v;
  else if (v instanceof Uint8Array) yield Buffer.from(v).toString('utf8');
  else if (v && typeof v === 'object' && (v as { _bsontype?: string })._bsontype === 'Binary')
    yield Buffer.from((v as { buffer: Uint8Array }).buffer).toString('utf8');
  else if (Array.isArray(v)) for (const x of v) yield* strings(x, depth + 1);
  else if (typeof v === 'object')
    for (const [k, x] of Object.entries(v as object)) {
      yield k;
      yield* strings(x, depth + 1);
    }
}
const holds = (v: unknown) => [...strings(v)].some((s) => s.toLowerCase().includes(MARK));

describe('an erased person leaves no trace anywhere the platform keeps data', () => {
  it(`finds the marker before the erasure, and nowhere after it: database, bucket, Temporal, DATA_DIR`, async () => {
    const found = async () => {
      const where: string[] = [];
      // Every document of every collection of the platform's database.
      const db = await mongoose.createConnection(env.MONGODB_URI).asPromise();
      try {
        for (const c of await db.db!.listCollections().toArray()) {
          for (const doc of await db.db!.collection(c.name).find({}).toArray())
            if (holds(doc)) where.push(`db ${c.name} ${String(doc._id)}`);
        }
      } finally {
        await db.close();
      }
      // Every object of the bucket, by name and by content.
      const minio = new Minio.Client({
        endPoint: env.MINIO_ENDPOINT.split(':')[0],
        port: Number(env.MINIO_ENDPOINT.split(':')[1]),
        useSSL: false,
        accessKey: env.MINIO_ACCESS_KEY,
        secretKey: env.MINIO_SECRET_KEY,
      });
      for await (const o of minio.listObjectsV2(env.MINIO_BUCKET, '', true)) {
        if (!o.name) continue;
        if (o.name.toLowerCase().includes(MARK)) where.push(`bucket name ${o.name}`);
        const chunks: Buffer[] = [];
        for await (const chunk of await minio.getObject(env.MINIO_BUCKET, o.name)) chunks.push(chunk as Buffer);
        if (Buffer.concat(chunks).toString('latin1').toLowerCase().includes(MARK))
          where.push(`bucket object ${o.name}`);
      }
      // Every run of the task queue still kept (input, history, memo, search attributes), and every Schedule.
      const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS });
      try {
        const client = new Client({ connection, namespace: env.TEMPORAL_NAMESPACE ?? 'default' });
        for await (const run of client.workflow.list({ query: `TaskQueue = '${queue}'` })) {
          const history = await client.workflow
            .getHandle(run.workflowId, run.runId)
            .fetchHistory()
            .catch(() => null);
          if (holds(run.memo) || holds(run.searchAttributes) || (history && holds(history)))
            where.push(`temporal run ${run.workflowId}`);
        }
        for await (const s of client.schedule.list()) {
          const d = await client.schedule
            .getHandle(s.scheduleId)
            .describe()
            .catch(() => null);
          if (d && d.action.type === 'startWorkflow' && d.action.taskQueue === queue && holds(d))
            where.push(`temporal schedule ${s.scheduleId}`);
        }
      } finally {
        await connection.close();
      }
      // Every file under DATA_DIR, by path and by content.
      const walk = (dir: string): string[] =>
        fs
          .readdirSync(dir, { withFileTypes: true })
          .flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
      for (const file of walk(dataDir)) {
        if (file.toLowerCase().includes(MARK)) where.push(`file name ${path.relative(dataDir, file)}`);
        else if (fs.readFileSync(file).toString('latin1').toLowerCase().includes(MARK))
          where.push(`file ${path.relative(dataDir, file)}`);
      }
      return where;
    };

    // The search can find it: before the erasure the marker is in each kind of place.
    const before = await found();
    for (const kind of ['db ', 'bucket ', 'temporal run ', 'file '])
      expect(
        before.some((w) => w.startsWith(kind)),
        `${kind}: ${before.join('\n')}`,
      ).toBe(true);

    await ok(
      'erase',
      api('DELETE', `/api/users/${encodeURIComponent(ana.idp_id)}`, admin, {
        json: { reason: `asked by ${MARK} on the phone` },
      }),
    );
    await until(
      'the erasure completed',
      () => api('GET', `/api/users/${ana.user_id}/erasure`, admin),
      (r) => r.body.erasure?.status === 'completed',
      240_000,
      500,
    );
    // Temporal deletes an execution in the background.
    const after = await until('no trace left', found, (w) => w.length === 0, 60_000, 2_000).catch(async () => found());
    expect(after, after.join('\n')).toEqual([]);
  }, 600_000);
});
