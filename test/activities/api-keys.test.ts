/**
 * API-key activities against the suite's real MongoDB-wire server, in this test process: the
 * edge's per-process key cache must drop a key revoked by another process (another edge replica).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { parseEnv, setConfig } from '../../activities/config';
import { closeRuntime, initRuntime } from '../../activities/runtime';
import { authenticateKey, issueApiKey, REVOCATION_POLL_MS, stopRevocationWatcher, verifyApiKey, type Principal } from '../../activities/identity/api-keys';
import { ApiKey, ApiKeyUsage } from '../../activities/identity/models';
import { resolveOrCreateUser } from '../../activities/identity/users';

const sysadmin: Principal = { key_id: 'test', user_id: 'usr_test', idp_id: 'test', organization_id: 'default', permissions: ['system_admin'], level: 2 };

beforeAll(async () => {
  setConfig(parseEnv({ ...process.env, ...inject('platformEnv') }));
  await initRuntime();
});

afterAll(async () => {
  stopRevocationWatcher();
  await closeRuntime();
});

describe('key cache', () => {
  it('refuses a key revoked by another process within the revocation poll interval', async () => {
    const user = await resolveOrCreateUser('default', `cache-${Date.now()}`);
    const issued = await issueApiKey(sysadmin, user, ['basic']);
    expect(await authenticateKey(issued.api_key)).toMatchObject({ user_id: user.user_id }); // now cached
    // Another process revokes it: a direct write, this process's cache is not told.
    await ApiKey.updateOne({ key_id: issued.key_id }, { $set: { status: 'revoked', revoked_at: new Date() } });
    await new Promise((r) => setTimeout(r, REVOCATION_POLL_MS * 3));
    expect(await authenticateKey(issued.api_key)).toBeNull();
    expect(await verifyApiKey(issued.api_key)).toEqual({ valid: false });
  });

  it('records last_used when a key is verified', async () => {
    const user = await resolveOrCreateUser('default', `lastused-${Date.now()}`);
    const issued = await issueApiKey(sysadmin, user, ['basic']);
    const before = Date.now();
    expect((await verifyApiKey(issued.api_key)).valid).toBe(true);
    const usage = await ApiKeyUsage.findOne({ key_id: issued.key_id }).lean();
    expect(usage?.last_used.getTime()).toBeGreaterThanOrEqual(before - 5);
  });
});
