/**
 * The audit trail: what is listed and to whom, the hash chain under concurrent admin changes, a
 * record altered in the database named by verify, retention from the anchor, intents left by a
 * crash appended as outcome unknown.
 */
import { describe, expect, it } from 'vitest';

import { purgeAuditRecords, recordChange } from '../../activities/audit/index.ts';
import { AuditIntent, AuditRecord } from '../../activities/audit/models.ts';
import { recordId } from '../../activities/audit/store.ts';
import { adminKey, basicUser, call, newTenant, type Tenant, unique } from '../helpers/api.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();

const gift = (name: string) => ({
  gift_name: name,
  gift_type: 'electronic_pins',
  country: 'US',
  supplier: 'Steam',
  electronic_pin_amount: 5,
  points_value: 10,
});

async function keyIdOf(t: Tenant): Promise<string> {
  const res = await call('GET', `/list_api_keys/${t.admin.user_id}`, { key: t.adminKey });
  expect(res.status).toBe(200);
  return res.body.api_keys[0].key_id;
}

const list = (t: Tenant, q = '', key = t.adminKey) =>
  call('GET', `/api/audit?organization_id=${t.organization_id}${q}`, { key });
const verify = (t: Tenant, key = t.adminKey) =>
  call('GET', `/api/audit/verify?organization_id=${t.organization_id}`, { key });

describe('GET /api/audit', () => {
  it('lists newest first, filters by action, actor key, target and time, and pages', async () => {
    const t = await newTenant();
    const keyId = await keyIdOf(t);
    const created: string[] = [];
    for (const name of ['One', 'Two', 'Three']) {
      const res = await call('POST', '/api/gifts/gifts', {
        key: t.adminKey,
        json: gift(name),
        headers: { 'x-request-id': unique('req-gift') },
      });
      expect(res.status).toBe(201);
      created.push(res.body.gift.id);
    }
    const between = new Date().toISOString();
    const put = await call('PUT', `/api/gifts/gifts/${created[0]}`, {
      key: t.adminKey,
      json: gift('One, renamed'),
      headers: { 'x-request-id': 'req-audit-put-1' },
    });
    expect(put.status).toBe(200);

    const all = await list(t);
    expect(all.status).toBe(200);
    // The tenant's own admin key was minted by the system admin in this organization: that is recorded too.
    const mine = all.body.records.filter((r: any) => r.actor.key_id === keyId);
    expect(mine.map((r: any) => r.action)).toEqual(['gift.update', 'gift.create', 'gift.create', 'gift.create']);
    expect(mine[0]).toMatchObject({
      organization_id: t.organization_id,
      actor: { key_id: keyId, user_id: t.admin.user_id, level: 'admin' },
      action: 'gift.update',
      target: { type: 'gift', id: created[0] },
      request_id: 'req-audit-put-1',
      outcome: 'succeeded',
      changes: { gift_name: { to: 'One, renamed' } },
    });
    const ats = all.body.records.map((r: any) => r.at);
    expect([...ats].sort().reverse()).toEqual(ats);

    const byAction = await list(t, '&action=gift.create');
    expect(byAction.body.records.map((r: any) => r.target.id)).toEqual([...created].reverse());
    expect((await list(t, `&actor_key_id=${keyId}`)).body.records).toHaveLength(4);
    expect((await list(t, `&target_id=${created[0]}`)).body.records.map((r: any) => r.action)).toEqual([
      'gift.update',
      'gift.create',
    ]);
    expect((await list(t, `&from=${encodeURIComponent(between)}`)).body.records.map((r: any) => r.action)).toEqual([
      'gift.update',
    ]);
    expect((await list(t, `&action=gift.create&to=${encodeURIComponent(between)}`)).body.records).toHaveLength(3);

    const p1 = await list(t, '&action=gift.create&limit=2');
    expect(p1.body).toMatchObject({ page: 1, limit: 2, has_more: true });
    const p2 = await list(t, '&action=gift.create&limit=2&page=2');
    expect(p2.body).toMatchObject({ page: 2, limit: 2, has_more: false });
    expect([...p1.body.records, ...p2.body.records].map((r: any) => r.target.id)).toEqual([...created].reverse());

    const v = await verify(t);
    expect(v.body).toMatchObject({ success: true, organization_id: t.organization_id, ok: true, first_break: null });
    expect(v.body.records_checked).toBe(all.body.records.length);
  });

  it("an admin reads only its own organization's trail; a basic key none; a system admin any", async () => {
    const a = await newTenant();
    const b = await newTenant();
    expect((await list(b, '', a.adminKey)).status).toBe(403);
    expect((await verify(b, a.adminKey)).status).toBe(403);
    const u = await basicUser(a);
    expect((await list(a, '', u.key)).status).toBe(403);
    expect((await verify(a, u.key)).status).toBe(403);
    const sys = await list(b, '', adminKey());
    expect(sys.status).toBe(200);
    expect(sys.body.records.every((r: any) => r.organization_id === b.organization_id)).toBe(true);
    expect((await verify(b, adminKey())).body.ok).toBe(true);
    // No route changes or deletes a record.
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'])
      expect((await call(method, '/api/audit', { key: adminKey(), json: {} })).status).toBe(405);
  });

  it('a basic key leaves no record; neither does a refused admin request', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const before = (await list(t)).body.records.length;
    expect(
      (
        await call('POST', '/initialize_session', {
          key: u.key,
          json: { user_id: u.user_id },
          headers: { 'x-request-id': 'req-basic-1' },
        })
      ).status,
    ).toBe(200);
    expect((await call('PUT', '/api/gifts/gifts/nope', { key: t.adminKey, json: gift('x') })).status).toBe(404);
    expect((await list(t)).body.records.length).toBe(before);
  });
});

describe('the chain', () => {
  it('keeps 24 concurrent admin changes of one organization contiguous and verifiable', async () => {
    const t = await newTenant();
    const n = 24;
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        call('POST', '/api/gifts/gifts', {
          key: t.adminKey,
          json: gift(`Concurrent ${i}`),
          headers: { 'x-request-id': `req-conc-${t.organization_id}-${i}` },
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(n).fill(201));
    const records: any[] = [];
    for (let page = 1; ; page++) {
      const res = await list(t, `&limit=100&page=${page}`);
      records.push(...res.body.records);
      if (!res.body.has_more) break;
    }
    const seqs = records.map((r) => r.seq).sort((x, y) => x - y);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
    const ids = new Set(records.filter((r) => r.action === 'gift.create').map((r) => r.request_id));
    expect(ids.size).toBe(n);
    const bySeq = new Map(records.map((r) => [r.seq, r]));
    for (const r of records) if (r.seq > 1) expect(r.prev_hash).toBe(bySeq.get(r.seq - 1).hash);
    const v = await verify(t);
    expect(v.body).toMatchObject({ ok: true, records_checked: records.length, first_break: null });
  });

  it('keeps one chain when two processes append at once (the edge over HTTP and this process directly)', async () => {
    const t = await newTenant();
    const entry = (i: number) => ({
      organization_id: t.organization_id,
      actor: { key_id: 'key_test', user_id: 'usr_test', level: 'admin' as const },
      action: 'test.append',
      target: { type: 'test', id: String(i) },
      request_id: `req-direct-${i}`,
      changes: {},
    });
    const [http, direct] = await Promise.all([
      Promise.all(
        Array.from({ length: 15 }, (_, i) =>
          call('POST', '/api/gifts/gifts', { key: t.adminKey, json: gift(`Two writers ${i}`) }),
        ),
      ),
      Promise.all(Array.from({ length: 40 }, (_, i) => recordChange(entry(i)))),
    ]);
    expect(http.map((r) => r.status)).toEqual(Array(15).fill(201));
    expect(direct).toHaveLength(40);
    const v = await verify(t);
    expect(v.body).toMatchObject({ ok: true, first_break: null });
    expect(v.body.records_checked).toBeGreaterThanOrEqual(56); // the tenant's key, 15 gifts, 40 direct
  });

  it('names a record altered in the database, one re-hashed by its link, one removed as missing', async () => {
    const t = await newTenant();
    for (const name of ['A', 'B', 'C', 'D'])
      expect((await call('POST', '/api/gifts/gifts', { key: t.adminKey, json: gift(name) })).status).toBe(201);
    expect((await verify(t)).body.ok).toBe(true);
    const rec = await AuditRecord.findById(recordId(t.organization_id, 3)).lean();
    expect(rec).toBeTruthy();

    // Altered in place: its own hash no longer matches.
    await AuditRecord.updateOne({ _id: rec!._id }, { $set: { action: 'gift.delete' } });
    expect((await verify(t)).body).toMatchObject({
      ok: false,
      records_checked: 2,
      first_break: { seq: 3, id: rec!._id, reason: 'hash_mismatch' },
    });

    // Altered with its hash recomputed: the next record's link breaks.
    const { hashOf } = await import('../../activities/audit/chain.ts');
    const altered = { ...rec!, action: 'gift.delete' };
    await AuditRecord.updateOne({ _id: rec!._id }, { $set: { action: 'gift.delete', hash: hashOf(altered as any) } });
    expect((await verify(t)).body).toMatchObject({ ok: false, first_break: { seq: 4, reason: 'prev_hash_mismatch' } });

    // Restored, then a record removed: missing.
    await AuditRecord.replaceOne({ _id: rec!._id }, rec!);
    expect((await verify(t)).body.ok).toBe(true);
    await AuditRecord.deleteOne({ _id: rec!._id });
    expect((await verify(t)).body).toMatchObject({ ok: false, first_break: { seq: 3, reason: 'missing' } });
    // The tail removed too: the head still says how far the chain reached.
    await AuditRecord.deleteMany({
      _id: { $in: [recordId(t.organization_id, 4), recordId(t.organization_id, 5), recordId(t.organization_id, 6)] },
    });
    const last = (await verify(t)).body;
    expect(last.ok).toBe(false);
    expect(last.first_break.reason).toBe('missing');
  });
});

describe('retention and intents', () => {
  it('removes records past AUDIT_RETENTION_DAYS and verifies from the anchor', async () => {
    const t = await newTenant();
    const actor = { key_id: 'key_test', user_id: t.admin.user_id, level: 'admin' as const };
    const old = new Date(Date.now() - 401 * 86_400_000);
    // Seeded in process: the tenant's own records (its admin key) are recent.
    const org = unique('retained');
    for (let i = 0; i < 3; i++)
      await recordChange({
        organization_id: org,
        actor,
        action: 'gift.create',
        target: { type: 'gift', id: `old-${i}` },
        request_id: `req-old-${i}`,
        changes: {},
        at: old,
      });
    for (let i = 0; i < 2; i++)
      await recordChange({
        organization_id: org,
        actor,
        action: 'gift.create',
        target: { type: 'gift', id: `new-${i}` },
        request_id: `req-new-${i}`,
        changes: {},
      });
    const out = await purgeAuditRecords({});
    expect(out.removed).toBeGreaterThanOrEqual(3);
    expect(await AuditRecord.countDocuments({ organization_id: org })).toBe(2);
    const v = await call('GET', `/api/audit/verify?organization_id=${org}`, { key: adminKey() });
    expect(v.body).toMatchObject({ ok: true, checked_from: 4, records_checked: 2, first_break: null });
    // The chain goes on from its tail; a second run removes nothing more.
    await recordChange({
      organization_id: org,
      actor,
      action: 'gift.delete',
      target: { type: 'gift', id: 'new-0' },
      request_id: 'req-after',
      changes: {},
    });
    await purgeAuditRecords({});
    expect((await call('GET', `/api/audit/verify?organization_id=${org}`, { key: adminKey() })).body).toMatchObject({
      ok: true,
      checked_from: 4,
      records_checked: 3,
    });
    // A record older than the anchor re-inserted by hand is ignored; one before the kept ones altered is named.
    await AuditRecord.updateOne({ _id: recordId(org, 4) }, { $set: { request_id: 'forged' } });
    expect(
      (await call('GET', `/api/audit/verify?organization_id=${org}`, { key: adminKey() })).body.first_break,
    ).toMatchObject({ seq: 4, reason: 'hash_mismatch' });
  });

  it('appends an intent a crash left as outcome unknown, once', async () => {
    const t = await newTenant();
    const created_at = new Date(Date.now() - 20 * 60_000);
    await AuditIntent.create({
      _id: unique('aui'),
      organization_id: t.organization_id,
      actor: { key_id: 'key_crashed', user_id: t.admin.user_id, level: 'admin' },
      action: 'gift.delete',
      target: { type: 'gift', id: 'g1' },
      request_id: 'req-crashed',
      changes_json: '{}',
      created_at,
    });
    await purgeAuditRecords({});
    await purgeAuditRecords({});
    const res = await list(t, '&actor_key_id=key_crashed');
    expect(res.body.records).toHaveLength(1);
    expect(res.body.records[0]).toMatchObject({
      action: 'gift.delete',
      outcome: 'unknown',
      request_id: 'req-crashed',
      target: { type: 'gift', id: 'g1' },
    });
    expect((await verify(t)).body.ok).toBe(true);
  });
});
