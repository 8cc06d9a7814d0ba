/**
 * Issue 27 under attack: a user's export and erasure, and the audit trail, as a hostile basic key
 * or an organization's admin would use them (docs/privacy.md, docs/components/audit.md).
 */
import { describe, expect, it } from 'vitest';

import { newId } from '../../activities/core/ids.ts';
import { runtime } from '../../activities/core/runtime.ts';
import { eventsSettled, eventsUserData } from '../../activities/events/index.ts';
import { ledgerEventsSettled } from '../../activities/loyalty/index.ts';
import { EXPORTS_GATHERED_PER_ORGANIZATION } from '../../activities/privacy/constants.ts';
import { exportUserPart } from '../../activities/privacy/exports.ts';
import { insertExport } from '../../activities/privacy/store.ts';
import { basicUser, call, newTenant, until } from '../helpers/api.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();

const ok = <T extends { status: number; body: unknown }>(what: string, res: T, status = 200): T => {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(status);
  return res;
};

async function objectsUnder(prefix: string): Promise<string[]> {
  const { minio, minioSettings } = runtime();
  const names: string[] = [];
  for await (const o of minio.listObjectsV2(minioSettings.bucket, prefix, true)) if (o.name) names.push(o.name);
  return names;
}

describe('issue 27: export and erasure against a hostile caller', () => {
  it("an erasure leaves nothing of an export gathered when it began (the parts' JSON in MinIO)", async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    ok(
      'email',
      await call('PATCH', `/api/users/${u.user_id}`, { key: t.adminKey, json: { email: `${u.idp_id}@example.com` } }),
    );
    // An export half gathered: the identity part (email, idp_id) is in storage, the zip not packed yet.
    const export_id = newId('exp');
    await insertExport({
      _id: export_id,
      organization_id: t.organization_id,
      user_id: u.user_id,
      requested_by: { key_id: 'k', user_id: u.user_id, level: 0 },
    });
    await exportUserPart({ export_id, part: 'identity' });
    expect(await objectsUnder(`privacy/exports/${export_id}/`)).toHaveLength(1);

    ok('erase', await call('DELETE', `/api/users/${u.user_id}`, { key: t.adminKey, json: {} }), 202);
    await until(
      'the erasure completed',
      () => call('GET', `/api/users/${u.user_id}/erasure`, { key: t.adminKey }),
      (r) => r.body.erasure?.status === 'completed',
      180_000,
      500,
    );
    expect(await objectsUnder(`privacy/exports/${export_id}/`)).toEqual([]);

    // A part gathered after the erasure (an activity that was in flight) writes nothing either.
    await exportUserPart({ export_id, part: 'identity' });
    expect(await objectsUnder(`privacy/exports/${export_id}/`)).toEqual([]);
  }, 300_000);

  it("a user whose idp_id is a word in another user's events neither exports nor erases those events", async () => {
    const t = await newTenant();
    ok('rules', await call('PUT', '/loyalty/rules', { key: t.adminKey, json: { actions: { purchase: 100 } } }));
    const b = await basicUser(t);
    ok(
      'award B',
      await call('POST', `/loyalty/award-points/${b.idp_id}`, { key: t.adminKey, json: { action_type: 'purchase' } }),
    );
    await ledgerEventsSettled();
    await eventsSettled();
    const eventsOfB = async () =>
      ok('events', await call('GET', '/api/events', { key: t.adminKey })).body.events.filter(
        (e: any) => e.data?.user_id === b.user_id,
      );
    const [before] = await eventsOfB();
    expect(before, 'B has an event').toBeTruthy();
    // A's idp_id (chosen by the organization's identity provider, e.g. a user name) is a word of B's event.
    const word = String(before.data.reason);
    const a = await basicUser(t, word);

    const exported = await eventsUserData.export({
      organization_id: t.organization_id,
      user_id: a.user_id,
      idp_id: a.idp_id,
    });
    expect(exported.data.events, "B's event in A's export").toEqual([]);

    ok('erase A', await call('DELETE', `/api/users/${a.user_id}`, { key: t.adminKey, json: {} }), 202);
    await until(
      'the erasure completed',
      () => call('GET', `/api/users/${a.user_id}/erasure`, { key: t.adminKey }),
      (r) => r.body.erasure?.status === 'completed',
      180_000,
      500,
    );
    const [after] = await eventsOfB();
    expect(after.data, "B's event rewritten by A's erasure").toEqual(before.data);
  }, 300_000);

  it('an admin exporting every user at once gets at most EXPORTS_GATHERED_PER_ORGANIZATION gathered at a time (429 beyond)', async () => {
    const t = await newTenant();
    const users = await Promise.all(
      Array.from({ length: EXPORTS_GATHERED_PER_ORGANIZATION * 2 + 2 }, () => basicUser(t)),
    );
    const answers = await Promise.all(
      users.map((u) => call('POST', `/api/users/${u.user_id}/export`, { key: t.adminKey })),
    );
    const started = answers.filter((r) => r.status === 202);
    expect(
      answers.filter((r) => r.status !== 202 && r.status !== 429),
      JSON.stringify(answers.map((r) => r.body)),
    ).toEqual([]);
    expect(started.length).toBeGreaterThan(0);
    expect(started.length).toBeLessThanOrEqual(EXPORTS_GATHERED_PER_ORGANIZATION);
    // Once they are ready, the next ones are gathered.
    for (const r of started) {
      const u = users[answers.indexOf(r)];
      await until(
        'the export ready',
        () => call('GET', `/api/users/${u.user_id}/exports/${r.body.export_id}`, { key: t.adminKey }),
        (x) => x.body.export?.status === 'ready',
        120_000,
        500,
      );
    }
    const refused = users.filter((_, i) => answers[i].status === 429);
    ok('the next one', await call('POST', `/api/users/${refused[0].user_id}/export`, { key: t.adminKey }), 202);
  }, 300_000);

  it('an erasure asked for by idp_id (an email here) leaves the user_id in the audit trail, never the idp_id', async () => {
    const t = await newTenant();
    const u = await basicUser(t, `ana.${Date.now()}@example.com`);
    ok('erase', await call('DELETE', `/api/users/${encodeURIComponent(u.idp_id)}`, { key: t.adminKey, json: {} }), 202);
    const records = ok('audit', await call('GET', '/api/audit?action=user.erase', { key: t.adminKey })).body.records;
    expect(records).toHaveLength(1);
    expect(records[0].target).toEqual({ type: 'user', id: u.user_id });
    expect(JSON.stringify(records)).not.toContain(u.idp_id);
  }, 300_000);

  it("the audit trail holds no person's contact details or idp_id: they outlive an erasure there", async () => {
    const t = await newTenant();
    const idp = `bea.${Date.now()}@example.com`;
    ok(
      'user',
      await call('POST', '/api/users', { key: t.adminKey, json: { idp_id: idp, email: idp, display_name: 'Bea B.' } }),
      201,
    );
    ok(
      'patch',
      await call('PATCH', `/api/users/${encodeURIComponent(idp)}`, {
        key: t.adminKey,
        json: { email: `new.${idp}`, display_name: 'Bea C.' },
      }),
    );
    const records = ok('audit', await call('GET', '/api/audit?limit=100', { key: t.adminKey })).body.records;
    const update = records.find((r: any) => r.action === 'user.update');
    expect(update.changes.email.to).toBe('[personal]');
    expect(update.changes.display_name.to).toBe('[personal]');
    const text = JSON.stringify(records);
    for (const personal of [idp, 'Bea B.', 'Bea C.']) expect(text).not.toContain(personal);
  }, 60_000);
});
