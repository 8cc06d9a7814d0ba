/**
 * An erasure whose worker is killed (SIGKILL) in the middle: a new worker resumes the run and it
 * completes once, nothing of the user left behind, `user.erased` recorded once.
 */
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

import { parseEnv, setConfig } from '../../activities/core/config.ts';
import { closeRuntime, initRuntime, runtime } from '../../activities/core/runtime.ts';
import { eventId } from '../../activities/events/index.ts';
import { PlatformEvent } from '../../activities/events/models.ts';
import { stopRevocationWatcher } from '../../activities/identity/api-keys.ts';
import { requestErasure } from '../../activities/privacy/index.ts';
import { type ErasureDoc, UserErasure } from '../../activities/privacy/models.ts';
import { basicUser, call, fileForm, newTenant, unique, until } from '../helpers/api.ts';
import { killDrillWorkers, startDrillWorker } from '../helpers/drill-worker.ts';

const queue = unique('privacy-drill');

// This file's erasure runs on the drill's own task queue: only its workers run it.
beforeAll(async () => {
  setConfig(parseEnv({ ...process.env, ...inject('platformEnv'), TEMPORAL_TASK_QUEUE: queue }));
  await initRuntime();
});
afterAll(async () => {
  killDrillWorkers();
  await stopRevocationWatcher();
  await closeRuntime();
});

const pending = (d: ErasureDoc | null) => Object.values(d?.steps ?? {}).filter((s) => s.status === 'pending').length;
const done = (d: ErasureDoc | null) => Object.values(d?.steps ?? {}).filter((s) => s.status === 'done').length;

describe('privacy: an erasure when its worker dies', () => {
  it('resumes after a SIGKILL mid-erasure and completes once, nothing left behind', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    expect((await call('PUT', '/loyalty/rules', { key: t.adminKey, json: { actions: { purchase: 10 } } })).status).toBe(
      200,
    );
    expect(
      (await call('POST', `/loyalty/award-points/${u.idp_id}`, { key: t.adminKey, json: { action_type: 'purchase' } }))
        .status,
    ).toBe(200);
    const photo = await sharp({ create: { width: 32, height: 32, channels: 3, background: { r: 1, g: 2, b: 3 } } })
      .jpeg()
      .toBuffer();
    const image = await call('POST', '/process_image', {
      key: u.key,
      form: fileForm(
        { user_id: u.user_id, session_id: 's1', conversation_id: 'c1' },
        { data: photo, name: 'p.jpg', type: 'image/jpeg' },
      ),
    });
    expect(image.status).toBe(200);

    // Asked with no worker on the queue; the first worker is killed once some steps are done and others are not.
    const { view } = await requestErasure(
      t.organization_id,
      { user_id: u.user_id, idp_id: u.idp_id },
      { key_id: 'drill', user_id: 'drill', level: 1 },
    );
    const key = `${t.organization_id}:${u.user_id}`;
    const first = await startDrillWorker(queue);
    let seen: ErasureDoc | null = null;
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      seen = await UserErasure.findById(key).lean<ErasureDoc>();
      if (done(seen) >= 3 && pending(seen) > 0) break;
      await new Promise((r) => setTimeout(r, 15));
    }
    first.kill('SIGKILL');
    expect(pending(seen), 'killed before the erasure was half done').toBeGreaterThan(0);

    await startDrillWorker(queue);
    const finished = await until(
      'the erasure completed',
      () => UserErasure.findById(key).lean<ErasureDoc>(),
      (d) => d?.status === 'completed',
      120_000,
      250,
    );
    expect(pending(finished)).toBe(0);
    expect(finished!.idp_id).toBeUndefined();

    // Once: one user.erased event, one run.
    const id = eventId(t.organization_id, 'user.erased', view.erasure_id);
    expect(await PlatformEvent.countDocuments({ _id: id })).toBe(1);
    expect(await PlatformEvent.countDocuments({ organization_id: t.organization_id, type: 'user.erased' })).toBe(1);

    // Nothing left behind.
    expect((await call('GET', `/api/users/${u.user_id}`, { key: t.adminKey })).status).toBe(404);
    expect((await call('GET', `/loyalty/points/${u.user_id}`, { key: t.adminKey })).status).toBe(404);
    const { minio, minioSettings } = runtime();
    const left: string[] = [];
    for await (const o of minio.listObjectsV2(minioSettings.bucket, `${t.organization_id}/${u.user_id}/`, true))
      if (o.name) left.push(o.name);
    expect(left).toEqual([]);
  }, 240_000);
});
