/**
 * API-key activities against the suite's real MongoDB-wire server, in this test process: the
 * edge's per-process key cache must drop a key revoked by another process (another edge replica),
 * an unknown key presented again must not cost another read, last uses are written in batches that
 * never touch the key, and keys stored by earlier versions keep working.
 */
import mongoose from 'mongoose';
import { describe, expect, it } from 'vitest';

import {
  authenticateKey,
  flushKeyUsage,
  generateSecret,
  hashKey,
  insertKey,
  type Principal,
  REVOCATION_POLL_MS,
  verifyApiKey,
} from '../../activities/identity/api-keys.ts';
import { currentKeyLevel, issueApiKey, listApiKeys, revokeApiKey } from '../../activities/identity/key-management.ts';
import { ApiKey, ApiKeyRotation, ApiKeyUsage } from '../../activities/identity/models.ts';
import { writeLastUses } from '../../activities/identity/store.ts';
import { resolveOrCreateUser } from '../../activities/identity/users.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

const sysadmin: Principal = {
  key_id: 'test',
  user_id: 'usr_test',
  idp_id: 'test',
  organization_id: 'default',
  permissions: ['system_admin'],
  level: 2,
};

useSuiteRuntime();

describe('key cache', () => {
  it('refuses a key revoked by another process within the revocation poll interval', async () => {
    const user = await resolveOrCreateUser('default', `cache-${Date.now()}`);
    const issued = await issueApiKey(sysadmin, user, ['basic']);
    expect(await authenticateKey(issued.api_key)).toMatchObject({ user_id: user.user_id }); // now cached
    // Another process revokes it: a direct write, this process's cache is not told.
    await ApiKey.updateOne({ key_id: issued.key_id }, { $set: { status: 'revoked', revoked_at: new Date() } });
    await new Promise((r) => setTimeout(r, REVOCATION_POLL_MS * 3));
    expect(await authenticateKey(issued.api_key)).toBeNull();
    expect(await verifyApiKey(issued.api_key)).toEqual({ valid: false, reason: 'revoked' });
  });

  it('refuses a key whose rotation another process wrote, within the poll interval', async () => {
    const user = await resolveOrCreateUser('default', `rotated-${Date.now()}`);
    const issued = await issueApiKey(sysadmin, user, ['basic']);
    expect(await authenticateKey(issued.api_key)).toMatchObject({ user_id: user.user_id }); // now cached
    const now = new Date();
    await ApiKeyRotation.create({
      _id: issued.key_id,
      key_id: 'key_elsewhere',
      hash: hashKey(issued.api_key),
      grace_until: now,
      created_at: now,
      changed_at: now,
    });
    await new Promise((r) => setTimeout(r, REVOCATION_POLL_MS * 3));
    expect(await authenticateKey(issued.api_key)).toBeNull();
    expect(await verifyApiKey(issued.api_key)).toEqual({ valid: false, reason: 'expired' });
  });

  it('refuses a cached key once its expiry has passed, without another read', async () => {
    const user = await resolveOrCreateUser('default', `expiring-${Date.now()}`);
    const issued = await issueApiKey(sysadmin, user, ['basic'], { expires_at: new Date(Date.now() + 500) });
    expect(await authenticateKey(issued.api_key)).toMatchObject({ user_id: user.user_id });
    const reads: string[] = [];
    mongoose.set('debug', (collection: string, method: string) => {
      if (collection === 'api_keys' && method === 'findOne') reads.push(method); // not the revocation watcher's polls
    });
    try {
      await new Promise((r) => setTimeout(r, 600));
      expect(await authenticateKey(issued.api_key)).toBeNull();
      expect(await verifyApiKey(issued.api_key)).toEqual({ valid: false, reason: 'expired' });
      expect(reads).toEqual([]);
    } finally {
      mongoose.set('debug', false);
    }
  });

  it('records last_used when a key is verified: listed at once here, written within a second', async () => {
    const user = await resolveOrCreateUser('default', `lastused-${Date.now()}`);
    const issued = await issueApiKey(sysadmin, user, ['basic']);
    const before = Date.now();
    expect((await verifyApiKey(issued.api_key)).valid).toBe(true);
    const listed = (await listApiKeys(sysadmin, 'default', user.user_id)).find((k) => k.key_id === issued.key_id);
    expect(Date.parse(listed!.last_used!)).toBeGreaterThanOrEqual(before - 5);
    await new Promise((r) => setTimeout(r, 1300)); // the batch's time, without asking for it
    const usage = await ApiKeyUsage.findOne({ key_id: issued.key_id }).lean();
    expect(usage?.last_used.toISOString()).toBe(listed!.last_used);
  });

  it('never undoes a revocation with a late usage write, nor sets last_used back', async () => {
    const user = await resolveOrCreateUser('default', `lateuse-${Date.now()}`);
    const issued = await issueApiKey(sysadmin, user, ['basic']);
    expect(await authenticateKey(issued.api_key)).not.toBeNull(); // a use pending in memory
    await revokeApiKey(sysadmin, 'default', user.user_id, issued.key_id);
    await flushKeyUsage();
    expect((await ApiKey.findOne({ key_id: issued.key_id }).lean())?.status).toBe('revoked');
    expect(await verifyApiKey(issued.api_key)).toEqual({ valid: false, reason: 'revoked' });
    const written = (await ApiKeyUsage.findOne({ key_id: issued.key_id }).lean())!.last_used;
    await writeLastUses(new Map([[issued.key_id, new Date(written.getTime() - 60_000)]])); // a batch arriving late
    expect((await ApiKeyUsage.findOne({ key_id: issued.key_id }).lean())?.last_used).toEqual(written);
  });
});

describe('documents written by earlier versions', () => {
  it('authenticates, lists and records the use of a key stored with an ObjectId _id and no link documents', async () => {
    const user = await resolveOrCreateUser('default', `legacy-${Date.now()}`);
    const secret = generateSecret();
    const key_id = `key_legacy${Date.now()}`;
    const at = new Date(Date.now() - 60_000);
    // As an old version left them: ObjectId _ids, written without this version's hooks.
    await ApiKey.collection.insertOne({
      _id: new mongoose.Types.ObjectId() as never,
      key_id,
      hash: hashKey(secret),
      prefix: secret.slice(3, 7),
      user_id: user.user_id,
      idp_id: user.idp_id,
      organization_id: 'default',
      permissions: ['basic'],
      status: 'active',
      created_at: at,
    });
    await ApiKeyUsage.collection.insertOne({ _id: new mongoose.Types.ObjectId() as never, key_id, last_used: at });
    expect(await authenticateKey(secret)).toMatchObject({ key_id, user_id: user.user_id });
    await flushKeyUsage();
    expect(await ApiKeyUsage.countDocuments({ key_id })).toBe(1);
    const listed = (await listApiKeys(sysadmin, 'default', user.user_id)).find((k) => k.key_id === key_id);
    expect(Date.parse(listed!.last_used!)).toBeGreaterThan(at.getTime());
    expect(await currentKeyLevel('default', user.user_id, key_id)).toBe(0);
    expect((await revokeApiKey(sysadmin, 'default', user.user_id, key_id)).already).toBe(false);
    expect(await verifyApiKey(secret)).toEqual({ valid: false, reason: 'revoked' });
  });
});

describe('unknown keys', () => {
  it('reads the database once for an unknown key presented again and again', async () => {
    const reads: string[] = [];
    mongoose.set('debug', (collection: string, method: string) => {
      if (collection === 'api_keys' && method !== 'find') reads.push(method); // not the revocation watcher's polls
    });
    try {
      const unknown = generateSecret();
      for (let i = 0; i < 5; i += 1) expect(await authenticateKey(unknown)).toBeNull();
      expect(await verifyApiKey(unknown)).toEqual({ valid: false, reason: 'not_found' });
      expect(reads).toEqual(['findOne']);
    } finally {
      mongoose.set('debug', false);
    }
  });

  it('accepts a key issued after it was presented as unknown', async () => {
    const user = await resolveOrCreateUser('default', `late-${Date.now()}`);
    const secret = generateSecret();
    expect(await authenticateKey(secret)).toBeNull(); // remembered as unknown
    await insertKey(user, ['basic'], { secret, created_by: 'test' });
    expect(await authenticateKey(secret)).toMatchObject({ user_id: user.user_id });
  });
});

describe('usable keys', () => {
  it("gives a scheduled run's saver only the level of keys that still authenticate (not expired, not past a rotation's grace)", async () => {
    const user = await resolveOrCreateUser('default', `usable-${Date.now()}`);
    const expiring = await issueApiKey(sysadmin, user, ['admin'], { expires_at: new Date(Date.now() + 400) });
    const basic = await issueApiKey(sysadmin, user, ['basic']);
    expect(await currentKeyLevel('default', user.user_id, expiring.key_id)).toBe(1);
    await new Promise((r) => setTimeout(r, 500));
    expect(await currentKeyLevel('default', user.user_id, expiring.key_id)).toBe(0); // the basic key's

    const rotated = await issueApiKey(sysadmin, user, ['admin']);
    expect(await currentKeyLevel('default', user.user_id, rotated.key_id)).toBe(1);
    const now = new Date();
    // Rotated, its grace over, its successor gone: the key is still `active` in its own document.
    await ApiKeyRotation.create({
      _id: rotated.key_id,
      key_id: 'key_gone',
      hash: hashKey(rotated.api_key),
      grace_until: now,
      created_at: now,
      changed_at: now,
    });
    expect(await currentKeyLevel('default', user.user_id, rotated.key_id)).toBe(0);
    expect(await currentKeyLevel('default', user.user_id)).toBe(0);

    await revokeApiKey(sysadmin, 'default', user.user_id, basic.key_id);
    expect(await currentKeyLevel('default', user.user_id, rotated.key_id)).toBe(-1);
  });
});
