/**
 * The audit trail keeps no person (issue 35, item 4). Records are kept AUDIT_RETENTION_DAYS and are
 * not erased with a user, so the hook (edge/audit-trail.ts) records a user reference as the
 * platform user id it resolves to and free text as its length, for every route, unless a route
 * declares a field kept (`audit.keep`: configuration and catalogue fields).
 *
 * Two ways: over HTTP, the calls the issue names (an idp_id that is an email in paths, bodies and
 * queries; feedback, reversal reasons, notes, mail metadata, an erasure's reason); and in this
 * process, every audited route of the edge with every field of its body filled (optional ones
 * too) by markers, through the hook itself: neither its intent nor its record may hold a marker.
 * A route added later is walked the day it is added.
 */
import '../../edge/app.ts';

import { randomBytes } from 'node:crypto';

import type { H3Event } from 'h3';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';

import { AuditIntent, AuditRecord } from '../../activities/audit/models.ts';
import { noteChange } from '../../activities/core/audit-note.ts';
import { createLogger } from '../../activities/core/logger.ts';
import type { Principal } from '../../activities/identity/index.ts';
import { auditedRoute, AuditTrail } from '../../edge/audit-trail.ts';
import { type RouteDef, routes } from '../../edge/http.ts';
import { basicUser, call, newTenant, type Tenant, unique, until } from '../helpers/api.ts';
import { renderReceipt } from '../helpers/receipts.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';
import { groceries, type Shop, shop } from '../helpers/shop.ts';

useSuiteRuntime();

type Json = Record<string, any>;

const hex = randomBytes(4).toString('hex');
/** What a person is known by at their identity provider: an email, as the README's own calls send. */
const IDP = `zelda.quux.${hex}@example.com`;
/** Their address on record and their words. */
const EMAIL = `zq.${hex}@mail.example.org`;
const WORDS = `Zelda Quux wrote ${hex}`;
const MARKERS = [IDP, EMAIL, WORDS, hex];

const noMarker = (what: string, value: unknown) => {
  const text = JSON.stringify(value);
  for (const m of MARKERS) expect(text.includes(m), `${what} holds "${m}": ${text.slice(0, 600)}`).toBe(false);
};

const ok = (res: { status: number; body: any }, what: string) => {
  if (res.status < 200 || res.status >= 300) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};

async function recordOf(t: Tenant, rid: string): Promise<Json> {
  const res = await call('GET', `/api/audit?organization_id=${t.organization_id}&limit=100`, { key: t.adminKey });
  const mine = res.body.records.filter((r: Json) => r.request_id === rid);
  expect(mine, `one record of ${rid}`).toHaveLength(1);
  return mine[0];
}

describe('over HTTP: what the issue reproduced', () => {
  let s: Shop;
  let t: Tenant;
  let usr: string;
  let ana: { key: string; user_id: string };
  const as = (method: string, path: string, json?: unknown) => {
    const rid = unique('req-privacy');
    return call(method, path, { key: t.adminKey, json, headers: { 'x-request-id': rid } }).then((res) => ({
      ...res,
      rid,
    }));
  };

  beforeAll(async () => {
    s = await shop();
    t = s.t;
    const created = await as('POST', '/api/users', { idp_id: IDP, email: EMAIL, display_name: WORDS });
    usr = ok(created, 'user').user.user_id;
    ana = await basicUser(t);
  }, 120_000);

  it('records a user named by idp_id (path, body, query) as its user_id, and contact details as [personal]', async () => {
    const again = await as('POST', '/api/users', { idp_id: IDP, email: EMAIL });
    expect((await recordOf(t, again.rid)).changes).toEqual({ idp_id: { to: usr }, email: { to: '[personal]' } });

    const patched = await as('PATCH', `/api/users/${encodeURIComponent(IDP)}`, { display_name: `${WORDS} again` });
    ok(patched, 'patch');
    const pr = await recordOf(t, patched.rid);
    expect(pr.target).toEqual({ type: 'user', id: usr });
    expect(pr.changes.display_name).toEqual({ from: '[personal]', to: '[personal]' });

    const award = await as('POST', `/loyalty/award-points/${encodeURIComponent(IDP)}`, {
      action_type: 'purchase',
      operation_id: unique('order'),
    });
    ok(award, 'award');
    expect((await recordOf(t, award.rid)).target).toEqual({ type: 'user', id: usr });

    // The export route has no target of its own: the path's value is never taken as it is.
    const exported = await as('POST', `/api/users/${encodeURIComponent(IDP)}/export`);
    ok(exported, 'export');
    expect((await recordOf(t, exported.rid)).target).toEqual({ type: 'user', id: usr });

    ok(await call('POST', '/carina/search', { key: t.adminKey, json: { idp_id: IDP, query: 'soap' } }), 'search');
    const cleared = await as(
      'DELETE',
      `/carina/search-results?idp_id=${encodeURIComponent(IDP)}&organization_id=${t.organization_id}`,
    );
    ok(cleared, 'clear');
    expect((await recordOf(t, cleared.rid)).target).toEqual({ type: 'user', id: usr });

    const key = await as('POST', '/generate_api_key', { user_id: IDP });
    ok(key, 'key');
    expect((await recordOf(t, key.rid)).changes.user_id).toEqual({ to: usr });
  });

  it("records free text as its length: a feedback's title, a reversal's reason", async () => {
    const feedback = await as('POST', '/api/feedback/submit', {
      user_id: IDP,
      feedback_type: 'general',
      rating: 2,
      title: WORDS,
      comment: `${WORDS}, twice`,
    });
    ok(feedback, 'feedback');
    const fr = await recordOf(t, feedback.rid);
    expect(fr.changes).toMatchObject({
      user_id: { to: usr },
      feedback_type: { to: 'general' },
      rating: { to: 2 },
      title: { to: `<text: ${WORDS.length} characters>` },
    });

    const op = unique('order');
    ok(await as('POST', `/loyalty/award-points/${usr}`, { action_type: 'purchase', operation_id: op }), 'award');
    const reversed = await as('POST', '/loyalty/reverse', {
      operation_id: op,
      user_id: IDP,
      reason: WORDS,
      allow_negative: true,
    });
    ok(reversed, 'reverse');
    expect((await recordOf(t, reversed.rid)).changes).toMatchObject({
      operation_id: { to: op },
      user_id: { to: usr },
      reason: { to: `<text: ${WORDS.length} characters>` },
      allow_negative: { to: true },
    });
  }, 120_000);

  it("records a mail's subject and body as their lengths and its recipient as [personal]", async () => {
    const conversation = ok(
      await call('POST', '/initialize_session', { key: t.adminKey, json: { user_id: IDP } }),
      'session',
    ).conversation_id;
    const mail = await as('POST', '/email/send', {
      user_id: IDP,
      conversation_id: conversation,
      email_type: 'notification',
      metadata: {
        template: 'generic',
        subject: WORDS,
        body: `${WORDS}\nsee you`,
        recipient: EMAIL,
        idempotency_key: unique('mail'),
      },
    });
    ok(mail, 'mail');
    expect((await recordOf(t, mail.rid)).changes.metadata).toEqual({
      to: {
        template: 'generic',
        subject: `<text: ${WORDS.length} characters>`,
        body: `<text: ${WORDS.length + 8} characters>`,
        recipient: '[personal]',
        idempotency_key: '***',
      },
    });
  }, 120_000);

  it("records an admin's words as their length: a pause note, an endpoint's description", async () => {
    const event = ok(
      await call('POST', '/api/scheduler-service/events', {
        key: t.adminKey,
        json: {
          idp_id: IDP,
          type_of_event: 'loyalty',
          recurrency: 'daily',
          start_event: '2031-01-05T09:30:00Z',
          metadata: { action_type: 'daily_login', note: WORDS },
        },
      }),
      'event',
    ).event;
    const paused = await as('POST', `/scheduler/events/${event.id}/pause`, { note: WORDS });
    ok(paused, 'pause');
    expect((await recordOf(t, paused.rid)).changes).toEqual({
      note: { to: `<text: ${WORDS.length} characters>` },
      paused: { from: false, to: true },
    });

    const endpoint = ok(
      await call('POST', '/api/webhooks/endpoints', {
        key: t.adminKey,
        json: { url: 'http://127.0.0.1:9/privacy', events: ['*'], description: 'first' },
      }),
      'endpoint',
    ).endpoint.id;
    const patched = await as('PATCH', `/api/webhooks/endpoints/${endpoint}`, {
      description: WORDS,
      url: 'http://127.0.0.1:9/privacy-2',
    });
    ok(patched, 'endpoint patch');
    expect((await recordOf(t, patched.rid)).changes).toEqual({
      description: { from: '<text: 5 characters>', to: `<text: ${WORDS.length} characters>` },
      url: { from: 'http://127.0.0.1:9/privacy', to: 'http://127.0.0.1:9/privacy-2' },
    });
  }, 120_000);

  it("records a scan's validation notes (an admin's words about a person's receipt) as their length", async () => {
    const receipt = (await renderReceipt({ ...groceries('2026-10-19'), total: 5.0 })).toString('base64');
    const scan = ok(
      await call('POST', '/api/ticket-scan/loyalty/ticket-scan', {
        key: ana.key,
        json: { user_id: ana.user_id, venue_id: String(s.venue.id), image: receipt },
      }),
      'scan',
    );
    expect(scan.status).toBe('pending_validation');
    const validated = await as('POST', `/api/ticket-scan/loyalty/ticket-scan/${scan.id}/validate`, {
      validations: scan.products.map((p: Json) => ({ product_id: String(p.id), is_valid: true, notes: WORDS })),
    });
    ok(validated, 'validate');
    const vr = await recordOf(t, validated.rid);
    expect(vr.changes.validations.to[0]).toEqual({
      product_id: String(scan.products[0].id),
      is_valid: true,
      notes: `<text: ${WORDS.length} characters>`,
    });
  }, 120_000);

  it("an erasure's record names the user by user_id and keeps the reason's length; no record of the organization holds the person", async () => {
    const erased = await as('DELETE', `/api/users/${encodeURIComponent(IDP)}`, { reason: WORDS });
    expect(erased.status, JSON.stringify(erased.body)).toBe(202);
    const er = await recordOf(t, erased.rid);
    expect(er).toMatchObject({
      action: 'user.erase',
      target: { type: 'user', id: usr },
      changes: { reason: { to: `<text: ${WORDS.length} characters>` } },
    });
    await until(
      'the erasure',
      () => call('GET', `/api/users/${usr}/erasure`, { key: t.adminKey }),
      (r) => r.body.erasure?.status === 'completed',
      60_000,
      500,
    );
    const all = await call('GET', `/api/audit?organization_id=${t.organization_id}&limit=100`, { key: t.adminKey });
    expect(all.body.records.length).toBeGreaterThan(10);
    noMarker('the trail', all.body.records);
    noMarker('the stored records', await AuditRecord.find({ organization_id: t.organization_id }).lean());
  }, 120_000);
});

// ---- every audited route, through the hook in this process ----

const ID = 'gft_AuditPrivacy0001';
const NOW = '2031-01-05T09:30:00.000Z';
const COMBINATIONS = ['anyOf', 'oneOf'] as const;

const keptBy = (keep: readonly string[] | undefined, path: string) =>
  (keep ?? []).some((k) => k === '*' || path === k || path.startsWith(`${k}.`));
const namesUser = (name: string) => /(?:^|_)(?:user_id|user_ref|idp_id|internal_id)$/.test(name);

/** A value for every field the schema describes: users named by the marker idp_id, words by the marker, ids as platform ids. */
function fill(
  schema: Json | undefined,
  name: string,
  path: string,
  keep: readonly string[] | undefined,
  org: string,
  depth = 0,
): unknown {
  if (namesUser(name)) return IDP;
  if (name === 'organization_id') return org;
  if (keptBy(keep, path)) return 'kept value';
  if (!schema || depth > 6) return WORDS;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if ('const' in schema) return schema.const;
  for (const c of COMBINATIONS)
    if (Array.isArray(schema[c]))
      return fill(schema[c].find((s: Json) => s.type !== 'null') ?? schema[c][0], name, path, keep, org, depth + 1);
  const type = Array.isArray(schema.type) ? schema.type.find((x: string) => x !== 'null') : schema.type;
  if (type === 'number' || type === 'integer') return 1;
  if (type === 'boolean') return true;
  if (type === 'array') return [fill(schema.items, name, path, keep, org, depth + 1)];
  if (type === 'object' || schema.properties || schema.additionalProperties) {
    const out: Json = {};
    for (const [k, s] of Object.entries<Json>(schema.properties ?? {}))
      out[k] = fill(s, k, path ? `${path}.${k}` : k, keep, org, depth + 1);
    // free-form maps (metadata): a note, a name, a person
    if (!schema.properties || schema.additionalProperties)
      Object.assign(out, { note: WORDS, title: WORDS, user_id: IDP, recipient: EMAIL });
    return out;
  }
  if (schema.format === 'date-time' || schema.format === 'date') return NOW;
  if (name === 'id' || name.endsWith('_id')) return ID;
  return WORDS;
}

const jsonSchema = (s: z.ZodType | undefined) =>
  s ? (z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' }) as Json) : undefined;
const partOf = (s: z.ZodType | undefined, keep: readonly string[] | undefined, org: string) =>
  s ? fill(jsonSchema(s), '', '', keep, org) : undefined;
const label = (def: RouteDef<any, any, any, any>) => `${def.method} ${def.paths[0]}`;

describe('in this process: every audited route, every field', () => {
  it('leaves no marker in the intent or the record of any audited route, and records the person by user_id', async () => {
    const t = await newTenant();
    const usr = ok(await call('POST', '/api/users', { key: t.adminKey, json: { idp_id: IDP, email: EMAIL } }), 'user')
      .user.user_id;
    const logger = createLogger('edge', 'silent');
    const audited = routes.filter((def) => auditedRoute(def));
    expect(audited.length).toBeGreaterThan(50);
    const wrong: string[] = [];
    let namedByUserId = 0;
    for (const def of audited) {
      const spec = def.audit || undefined;
      const keep = spec?.keep;
      const principal: Principal = {
        key_id: 'key_AuditPrivacyTest01',
        user_id: 'usr_AuditPrivacyAdm1',
        idp_id: 'audit-privacy-admin',
        organization_id: t.organization_id,
        permissions: [def.auth === 'sysadmin' ? 'system_admin' : 'admin'],
        level: def.auth === 'sysadmin' ? 2 : 1,
      };
      const params = Object.fromEntries(
        Object.keys((jsonSchema(def.params)?.properties as Json | undefined) ?? {}).map((k) => [
          k,
          namesUser(k) ? IDP : k === 'organization_id' ? t.organization_id : ID,
        ]),
      );
      const query = partOf(def.query, undefined, t.organization_id);
      const body = def.body ? partOf(def.body, keep, t.organization_id) : undefined;
      const form = def.form ? partOf(def.form.fields, keep, t.organization_id) : undefined;
      const rid = unique('req-walk');
      try {
        const trail = await AuditTrail.begin(def, principal, { params, query, body, form }, rid, logger);
        if (!trail) throw new Error('not audited');
        noMarker(`${label(def)}: its intent`, await AuditIntent.findOne({ request_id: rid }).lean());
        // What components note: a previous value under a field of the body, and one of their own.
        trail.run(() => {
          for (const k of Object.keys((body ?? form ?? {}) as Json))
            if (!keptBy(keep, k) && k !== 'organization_id') noteChange(k, WORDS, `${WORDS}!`);
          if (!keptBy(keep, 'their_note')) noteChange('their_note', WORDS, EMAIL);
          noteChange('user_id', IDP, IDP);
        });
        await trail.answered({} as H3Event, { success: true });
        const record = await AuditRecord.findOne({ request_id: rid }).lean();
        if (!record) throw new Error('no record');
        noMarker(`${label(def)}: its record`, record);
        if (JSON.parse(record.changes_json).user_id?.to === usr) namedByUserId += 1;
      } catch (err) {
        wrong.push(`${label(def)}: ${(err as Error).message.split('\n')[0]}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(namedByUserId).toBe(audited.length);
  }, 120_000);

  it('a target taken from a path value that is no platform id is recorded as its length; a user path value as its user_id, or [unknown user]', async () => {
    const t = await newTenant();
    const logger = createLogger('edge', 'silent');
    const principal: Principal = {
      key_id: 'key_AuditPrivacyTest02',
      user_id: 'usr_AuditPrivacyAdm2',
      idp_id: 'audit-privacy-admin',
      organization_id: t.organization_id,
      permissions: ['admin'],
      level: 1,
    };
    const fake = (path: string): RouteDef<any, any, any, any> => ({
      method: 'POST',
      paths: [path],
      summary: 'test',
      tag: 'test',
      auth: 'admin',
      handler: () => ({}),
    });
    const through = async (def: RouteDef<any, any, any, any>, params: Json) => {
      const rid = unique('req-target');
      const trail = (await AuditTrail.begin(
        def,
        principal,
        { params, query: {}, body: {}, form: undefined },
        rid,
        logger,
      ))!;
      await trail.answered({} as H3Event, {});
      return (await AuditRecord.findOne({ request_id: rid }).lean())!.target;
    };
    expect(await through(fake('/x/things/:thing_ref/archive'), { thing_ref: WORDS })).toEqual({
      type: 'thing',
      id: `<text: ${WORDS.length} characters>`,
    });
    expect(await through(fake('/x/things/:thing_ref/archive'), { thing_ref: ID })).toEqual({ type: 'thing', id: ID });
    expect(await through(fake('/x/people/:person_id/archive'), { person_id: '1234' })).toEqual({
      type: 'people',
      id: '1234',
    });
    expect(await through(fake('/x/members/:member_user_id/archive'), { member_user_id: IDP })).toEqual({
      type: 'member',
      id: '[unknown user]',
    });
  });
});
