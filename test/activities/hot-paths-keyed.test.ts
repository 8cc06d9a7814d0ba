/**
 * The hot paths of identity and sessions (a key check, a user by either id, listing a user's keys,
 * verifying a conversation, a scheduled run's key level) reach the database only by `_id`, so
 * neither server answers them by scanning a collection that grows with users. Every query they
 * send is recorded (mongoose's debug hook) and its filter checked.
 */
import { describe, expect, it } from 'vitest';
import { queriesOf, show, type Query } from '../helpers/queries';
import { authenticateKey, insertKey, stopRevocationWatcher, verifyApiKey, type Principal } from '../../activities/identity/api-keys';
import { currentKeyLevel, issueApiKey, listApiKeys } from '../../activities/identity/key-management';
import { findUser, resolveOrCreateUser } from '../../activities/identity/users';
import { initializeSession, verifySession } from '../../activities/sessions/sessions';
import { useSuiteRuntime } from '../helpers/runtime';

const sysadmin: Principal = { key_id: 'test', user_id: 'usr_test', idp_id: 'test', organization_id: 'default', permissions: ['system_admin'], level: 2 };

useSuiteRuntime();


const byId = (q: Query) => '_id' in q.filter;

describe('hot paths keyed for both servers', () => {
  it('checks a key it has not cached with reads by _id only', async () => {
    const user = await resolveOrCreateUser('default', `hot-${Date.now()}`);
    const issued = await issueApiKey(sysadmin, user, ['basic']);
    stopRevocationWatcher(); // nothing cached: the check reads the database
    const qs = await queriesOf(async () => {
      expect(await authenticateKey(issued.api_key)).toMatchObject({ user_id: user.user_id });
      stopRevocationWatcher();
      expect((await verifyApiKey(issued.api_key)).valid).toBe(true);
    });
    expect(qs.length).toBeGreaterThan(0);
    expect(show(qs.filter((q) => !byId(q)))).toEqual([]);
  });

  it('finds a user by user_id and by idp_id with reads by _id only', async () => {
    const user = await resolveOrCreateUser('default', `hot-user-${Date.now()}`);
    const qs = await queriesOf(async () => {
      expect((await findUser('default', user.user_id))?.idp_id).toBe(user.idp_id);
      expect((await findUser('default', user.idp_id))?.user_id).toBe(user.user_id);
    });
    expect(qs.length).toBeGreaterThan(0);
    expect(show(qs.filter((q) => !byId(q)))).toEqual([]);
  });

  it("lists a user's keys with reads by _id only", async () => {
    const user = await resolveOrCreateUser('default', `hot-list-${Date.now()}`);
    await issueApiKey(sysadmin, user, ['basic']);
    await issueApiKey(sysadmin, user, ['admin']);
    const qs = await queriesOf(async () => expect((await listApiKeys(sysadmin, 'default', user.user_id)).map((k) => k.permissions[0])).toEqual(['admin', 'basic']));
    expect(qs.length).toBeGreaterThan(0);
    expect(show(qs.filter((q) => !byId(q)))).toEqual([]);
  });

  it("lists every one of a user's keys created at the same moment, each once", async () => {
    const user = await resolveOrCreateUser('default', `hot-burst-${Date.now()}`);
    const issued = await Promise.all(Array.from({ length: 8 }, () => insertKey(user, ['basic'], { created_by: 'test' })));
    const listed = (await listApiKeys(sysadmin, 'default', user.user_id)).map((k) => k.key_id);
    expect(listed.sort()).toEqual(issued.map((k) => k.key_id).sort());
  });

  it("gives a scheduled run its saver's key level with reads by _id only", async () => {
    const user = await resolveOrCreateUser('default', `hot-level-${Date.now()}`);
    const issued = await issueApiKey(sysadmin, user, ['admin']);
    const qs = await queriesOf(async () => expect(await currentKeyLevel('default', user.user_id, issued.key_id)).toBe(1));
    expect(qs.length).toBeGreaterThan(0);
    expect(show(qs.filter((q) => !byId(q)))).toEqual([]);
  });

  it('verifies a conversation with reads and writes by _id only', async () => {
    const user_id = `usr_hot${Date.now()}`;
    const { conversation_id } = await initializeSession({ user_id, organization_id: 'default' });
    const qs = await queriesOf(async () => expect((await verifySession({ user_id, organization_id: 'default', conversation_id })).valid).toBe(true));
    expect(qs.length).toBeGreaterThan(0);
    expect(show(qs.filter((q) => !byId(q)))).toEqual([]);
  });
});
