/**
 * The hot paths of identity and sessions (a key check, a user by either id, listing a user's keys,
 * issuing a key, verifying or opening a conversation, a scheduled run's key level) are answered from indexes:
 * every query they send is recorded (mongoose's debug hook) and explained by the server
 * (`scans`), so one that would read a collection growing with users fails here. A key check's
 * commands are counted on the wire (the driver's command monitoring): an uncached check reads
 * three documents and writes nothing; last uses are written in batches, one command for many keys.
 */
import { describe, expect, it } from 'vitest';

import { onCommandTimed } from '../../activities/core/db/index.ts';
import {
  authenticateKey,
  flushKeyUsage,
  insertKey,
  type Principal,
  stopRevocationWatcher,
  verifyApiKey,
} from '../../activities/identity/api-keys.ts';
import { currentKeyLevel, issueApiKey, listApiKeys } from '../../activities/identity/key-management.ts';
import { findUser, resolveOrCreateUser } from '../../activities/identity/users.ts';
import { initializeSession, newConversation, verifySession } from '../../activities/sessions/sessions.ts';
import { queriesOf, scans } from '../helpers/queries.ts';
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

/** The commands `work` sends (`collection.command`), counted until a moment after it returns (writes it leaves in flight included). */
async function commandsOf(work: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const stop = onCommandTimed((collection, command) => seen.push(`${collection}.${command}`));
  try {
    await work();
    await new Promise((r) => setTimeout(r, 100));
  } finally {
    stop();
  }
  return seen.sort();
}

describe('hot paths answered from indexes', () => {
  it('checks a key it has not cached with three indexed reads and no write; a cached check sends nothing', async () => {
    const user = await resolveOrCreateUser('default', `hot-${Date.now()}`);
    const issued = await issueApiKey(sysadmin, user, ['basic']);
    await stopRevocationWatcher(); // nothing cached: the check reads the database
    const reads = ['api_key_rotations.find', 'api_keys.find', 'users.find'];
    const qs = await queriesOf(async () => {
      expect(
        await commandsOf(async () =>
          expect(await authenticateKey(issued.api_key)).toMatchObject({ user_id: user.user_id }),
        ),
      ).toEqual(reads);
      expect(
        await commandsOf(async () =>
          expect(await authenticateKey(issued.api_key)).toMatchObject({ user_id: user.user_id }),
        ),
      ).toEqual([]);
      await stopRevocationWatcher();
      expect(await commandsOf(async () => expect((await verifyApiKey(issued.api_key)).valid).toBe(true))).toEqual(
        reads,
      );
    });
    expect(qs.length).toBe(6);
    expect(await scans(qs)).toEqual([]);
  });

  it('writes the last uses of many keys in one command, and lists them before and after', async () => {
    const user = await resolveOrCreateUser('default', `hot-usage-${Date.now()}`);
    const issued = await Promise.all(Array.from({ length: 5 }, () => issueApiKey(sysadmin, user, ['basic'])));
    await stopRevocationWatcher();
    const before = Date.now();
    for (const k of issued) expect(await authenticateKey(k.api_key)).not.toBeNull();
    // Not written yet, but this process lists what it holds.
    const listed = await listApiKeys(sysadmin, 'default', user.user_id);
    expect(listed.every((k) => Date.parse(k.last_used!) >= before - 5)).toBe(true);
    expect(await commandsOf(() => flushKeyUsage())).toEqual(['api_key_usage.update']);
    expect(await commandsOf(() => flushKeyUsage())).toEqual([]); // nothing left
    const qs = await queriesOf(async () => {
      const again = await listApiKeys(sysadmin, 'default', user.user_id);
      expect(again.map((k) => k.last_used)).toEqual(listed.map((k) => k.last_used));
    });
    expect(await scans(qs)).toEqual([]);
  });

  it('finds a user by user_id and by idp_id from indexes', async () => {
    const user = await resolveOrCreateUser('default', `hot-user-${Date.now()}`);
    const qs = await queriesOf(async () => {
      expect((await findUser('default', user.user_id))?.idp_id).toBe(user.idp_id);
      expect((await findUser('default', user.idp_id))?.user_id).toBe(user.user_id);
    });
    expect(qs.length).toBe(2);
    expect(await scans(qs)).toEqual([]);
  });

  it("lists a user's keys from indexes, one read a collection", async () => {
    const user = await resolveOrCreateUser('default', `hot-list-${Date.now()}`);
    await issueApiKey(sysadmin, user, ['basic']);
    await issueApiKey(sysadmin, user, ['admin']);
    const qs = await queriesOf(async () =>
      expect((await listApiKeys(sysadmin, 'default', user.user_id)).map((k) => k.permissions[0])).toEqual([
        'admin',
        'basic',
      ]),
    );
    expect(qs.map((q) => q.collection).sort()).toEqual(['api_key_rotations', 'api_key_usage', 'api_keys']);
    expect(await scans(qs)).toEqual([]);
  });

  it('issues a key to a user one place short of the cap with one read of its places and one insert of a place', async () => {
    const user = await resolveOrCreateUser('default', `hot-issue-${Date.now()}`);
    for (let i = 0; i < 8; i += 1) await issueApiKey(sysadmin, user, ['basic']);
    const qs = await queriesOf(async () => issueApiKey(sysadmin, user, ['basic']));
    const commands = await commandsOf(() => issueApiKey(sysadmin, user, ['basic'])); // the 10th
    expect(commands.filter((c) => c.startsWith('api_key_slots.'))).toEqual([
      'api_key_slots.find',
      'api_key_slots.insert',
    ]);
    expect(await scans(qs)).toEqual([]);
  });

  it("lists every one of a user's keys created at the same moment, each once", async () => {
    const user = await resolveOrCreateUser('default', `hot-burst-${Date.now()}`);
    const issued = await Promise.all(
      Array.from({ length: 8 }, () => insertKey(user, ['basic'], { created_by: 'test' })),
    );
    const listed = (await listApiKeys(sysadmin, 'default', user.user_id)).map((k) => k.key_id);
    expect(listed.sort()).toEqual(issued.map((k) => k.key_id).sort());
  });

  it("gives a scheduled run its saver's key level from indexes", async () => {
    const user = await resolveOrCreateUser('default', `hot-level-${Date.now()}`);
    const issued = await issueApiKey(sysadmin, user, ['admin']);
    const qs = await queriesOf(async () =>
      expect(await currentKeyLevel('default', user.user_id, issued.key_id)).toBe(1),
    );
    expect(qs.length).toBeGreaterThan(0);
    expect(await scans(qs)).toEqual([]);
  });

  it('verifies a conversation from indexes', async () => {
    const user_id = `usr_hot${Date.now()}`;
    const { conversation_id } = await initializeSession({ user_id, organization_id: 'default' });
    const qs = await queriesOf(async () =>
      expect((await verifySession({ user_id, organization_id: 'default', conversation_id })).valid).toBe(true),
    );
    expect(qs.length).toBeGreaterThan(0);
    expect(await scans(qs)).toEqual([]);
  });

  it("opens a conversation in the user's latest open session from indexes", async () => {
    const user_id = `usr_hotconv${Date.now()}`;
    const { session } = await initializeSession({ user_id, organization_id: 'default' });
    const qs = await queriesOf(async () =>
      expect((await newConversation({ user_id, organization_id: 'default' })).session_id).toBe(session.session_id),
    );
    expect(qs.find((q) => q.sort)).toMatchObject({ collection: 'sessions', sort: { last_activity: -1 } });
    expect(await scans(qs)).toEqual([]);
  });
});
