/**
 * Changes that used to leave no audit record, or a wrong one (issue 35, item 13):
 *  (a) an upload retried with its Idempotency-Key after a server error really runs: it is recorded;
 *      only a true replay (answered from the stored result) is not;
 *  (b) a read never creates anything: GET /list_api_keys of an unknown user is 404 and creates nobody;
 *  (c) the maintenance run settles a crashed request's intent by the intent's own (server-chosen) id,
 *      carried into the record, not by the X-Request-Id a client chose.
 */
import { describe, expect, it } from 'vitest';

import { purgeAuditRecords } from '../../activities/audit/index.ts';
import { AuditIntent, AuditRecord } from '../../activities/audit/models.ts';
import { newId } from '../../activities/core/ids.ts';
import { claimIdempotencyKey } from '../../activities/idempotency/index.ts';
import { requestHash } from '../../edge/idempotency.ts';
import { basicUser, call, edgeUrl, newTenant, type Tenant, unique } from '../helpers/api.ts';
import { renderReceipt } from '../helpers/receipts.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';
import { groceries, shop } from '../helpers/shop.ts';

useSuiteRuntime();

const recordsOf = (request_id: string) => AuditRecord.find({ request_id }).lean();
const gift = (name: string) => ({
  gift_name: name,
  gift_type: 'electronic_pins',
  country: 'US',
  supplier: 'Steam',
  electronic_pin_amount: 5,
  points_value: 10,
});

describe('(a) an upload retried after a server error', () => {
  it('runs and is recorded; a replay of its stored answer afterwards is not', async () => {
    const s = await shop();
    const u = await basicUser(s.t);
    const image = await renderReceipt(groceries('2026-09-17'));
    const key = unique('scan-after-5xx');
    const venue_id = String(s.venue.id);
    // The first request claimed the key and then failed with a 5xx before its run did anything:
    // the key stays open (edge/idempotency.ts), so the retry runs the scan itself.
    const first = await claimIdempotencyKey({
      organization_id: s.t.organization_id,
      user_id: u.user_id,
      route: 'ticket_scan',
      key,
      request_sha256: await requestHash(
        { brand_id: null, venue_id, filename: 'ticket', content_type: 'application/octet-stream' },
        image,
      ),
      resource_id: newId('scan', 12),
    });
    const send = (rid: string) =>
      call('POST', '/api/ticket-scan/loyalty/ticket-scan', {
        key: s.t.adminKey,
        json: { user_id: u.user_id, venue_id, image: image.toString('base64') },
        headers: { 'x-request-id': rid, 'idempotency-key': key },
      });
    const retry = unique('req-retry');
    const res = await send(retry);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.id).toBe(first.resource_id); // the run the first request would have started
    const recorded = await recordsOf(retry);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({
      action: 'ticket_scan.create',
      target: { type: 'ticket_scan', id: first.resource_id },
      outcome: 'succeeded',
    });
    expect(res.headers.get('idempotent-replayed')).toBeNull(); // its own run's answer, not a replay

    // Now the key holds the answer: a repeat is a replay, answered from it, and adds no record.
    const replay = unique('req-replay');
    const again = await send(replay);
    expect([again.status, again.headers.get('idempotent-replayed'), again.body.id]).toEqual([
      200,
      'true',
      first.resource_id,
    ]);
    expect(await recordsOf(replay)).toHaveLength(0);
  }, 120_000);
});

describe('(b) GET /list_api_keys', () => {
  it('answers 404 for an unknown user, with an admin key too, and creates nobody', async () => {
    const t = await newTenant();
    const stranger = `${unique('nobody')}@example.com`;
    for (const prefix of ['', '/api/session-service']) {
      const res = await call('GET', `${prefix}/list_api_keys/${encodeURIComponent(stranger)}`, { key: t.adminKey });
      expect(res.status, JSON.stringify(res.body)).toBe(404);
    }
    expect((await call('GET', `/api/users/${encodeURIComponent(stranger)}`, { key: t.adminKey })).status).toBe(404);
    // a known user's keys are still listed, by idp_id or user_id
    const u = await basicUser(t);
    for (const ref of [u.idp_id, u.user_id])
      expect(
        (await call('GET', `/list_api_keys/${encodeURIComponent(ref)}`, { key: t.adminKey })).body.api_keys,
      ).toHaveLength(1);
  });

  it('no GET of the document creates the user it names (path or query), whatever the other parameters', async () => {
    const t = await newTenant();
    const names = /(?:^|_)(?:user_id|user_ref|idp_id|internal_id)$/;
    const doc = (await call('GET', '/openapi.json')).body as { paths: Record<string, Record<string, any>> };
    const creating: string[] = [];
    let probed = 0;
    for (const [p, ops] of Object.entries(doc.paths)) {
      const op = ops.get;
      if (!op || !Array.isArray(op.security)) continue;
      const params = (op.parameters ?? []) as Array<{ name: string; in: string }>;
      const users = params.filter((x) => names.test(x.name) && (x.in === 'path' || x.in === 'query'));
      if (!users.length) continue;
      const stranger = `${unique('ghost')}@example.com`;
      let url = p.replace(/\{(\w+)\}/g, (_m, name: string) =>
        encodeURIComponent(names.test(name) ? stranger : name === 'organization_id' ? t.organization_id : 'x1'),
      );
      const q = new URLSearchParams(
        users.filter((x) => x.in === 'query').map((x): [string, string] => [x.name, stranger]),
      );
      if ([...q.keys()].length) url += `?${q}`;
      // Probes with made-up values: answered 404/422 or so, outside what a test of the route checks.
      await fetch(`${edgeUrl()}${url}`, { headers: { authorization: `Bearer ${t.adminKey}` } });
      probed += 1;
      if ((await call('GET', `/api/users/${encodeURIComponent(stranger)}`, { key: t.adminKey })).status !== 404)
        creating.push(`GET ${p}`);
    }
    expect(probed).toBeGreaterThan(10);
    expect(creating).toEqual([]);
  }, 120_000);
});

describe('(c) a crashed request whose X-Request-Id another request also used', () => {
  const crashed = (t: Tenant, request_id: string, _id = unique('aui')) =>
    AuditIntent.create({
      _id,
      organization_id: t.organization_id,
      actor: { key_id: 'key_crashed', user_id: t.admin.user_id, level: 'admin' },
      action: 'gift.create',
      target: { type: 'gift', id: 'gft_crashed' },
      request_id,
      changes_json: '{}',
      created_at: new Date(Date.now() - 20 * 60_000),
    });

  it("is appended as outcome unknown: the other request's record does not settle it", async () => {
    const t = await newTenant();
    const rid = unique('req-chosen');
    await crashed(t, rid);
    // Another request, same client-chosen id and action, succeeds and is recorded after the intent.
    expect(
      (
        await call('POST', '/api/gifts/gifts', {
          key: t.adminKey,
          json: gift('Collide'),
          headers: { 'x-request-id': rid },
        })
      ).status,
    ).toBe(201);
    await purgeAuditRecords({});
    await purgeAuditRecords({});
    const records = await recordsOf(rid);
    expect(records.map((r) => r.outcome).sort()).toEqual(['succeeded', 'unknown']);
    expect(records.find((r) => r.outcome === 'unknown')).toMatchObject({
      actor: { key_id: 'key_crashed' },
      target: { type: 'gift', id: 'gft_crashed' },
    });
    expect(
      (await call('GET', `/api/audit/verify?organization_id=${t.organization_id}`, { key: t.adminKey })).body.ok,
    ).toBe(true);
  });

  it('is only removed when its own record exists (the removal was what got lost)', async () => {
    const t = await newTenant();
    const rid = unique('req-recorded');
    expect(
      (
        await call('POST', '/api/gifts/gifts', {
          key: t.adminKey,
          json: gift('Recorded'),
          headers: { 'x-request-id': rid },
        })
      ).status,
    ).toBe(201);
    const [record] = await recordsOf(rid);
    expect(record.intent_id).toMatch(/^aui_/);
    // The intent of that very request, left behind as if its removal had failed.
    await crashed(t, rid, String(record.intent_id));
    await purgeAuditRecords({});
    expect(await recordsOf(rid)).toHaveLength(1);
    expect(await AuditIntent.exists({ _id: record.intent_id })).toBeNull();
  });
});
