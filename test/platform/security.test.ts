/**
 * The shared security suite: every operation of the OpenAPI document is attacked the same three
 * ways, and afterwards nothing of the victim's organization may have changed.
 *
 *  1. no key                                   → 401
 *  2. another organization's admin key, naming the victim's organization and resources → 403/404
 *  3. a basic key of the victim's organization naming the victim (or the victim's resources)
 *     → 403 (404 for a resource id: a basic key is not told whether another user's thing exists)
 *  4. admin keys of the victim's organization that no longer work (expired, rotated past their
 *     grace, revoked) → 401
 *
 * Requests are built from the OpenAPI document itself: parameters and body fields are filled by
 * name from the victim's world (user, session, event, scan, gift…), other required fields from
 * their schema. A request the platform refuses as invalid (400/422) fails the suite: the probe must
 * reach the authorization decision, or it proves nothing. A new route is covered the day it is
 * added; one that needs a hand-made body says so in BODIES.
 */
import fs from 'node:fs';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

import { basicUser, call, fileForm, newTenant, type Res, type Tenant, until } from '../helpers/api.ts';
import { startExtraEdge, stopEdges } from '../helpers/edge-process.ts';
import { renderReceipt } from '../helpers/receipts.ts';
import { groceries, type Shop, shop } from '../helpers/shop.ts';

type Json = Record<string, any>;
interface Op {
  method: string;
  path: string;
  op: Json;
}

/** Operations that need no key (their own tests cover them). */
const OPEN = new Set([
  'GET /health',
  'GET /health/ready',
  'GET /metrics',
  'GET /openapi.json',
  'GET /docs',
  'GET /docs/assets/{file}',
  // the console's static files: it signs in with a key it sends to the API (test/console/shell)
  'GET /console',
  'GET /console/assets/{file}',
  'POST /verify_api_key',
  'POST /api/session-service/verify_api_key',
  'POST /api/billing/webhooks/payment',
  'GET /referral/{code}',
  // a signed link and an unsubscribe link carry their own proof (their tests: files/signed-links,
  // email/suppressions)
  'GET /files/{organization_id}/{user_id}/{folder}/{name}',
  'GET /email/unsubscribe',
  'POST /email/unsubscribe',
]);

/** Operations that read platform-wide data any organization's key may read: no victim to reach. */
const GLOBAL = new Set(['GET /api/billing/packages', 'GET /api/llm-config/provider-config/{agent_name}']);

/** Field names that name a user; the probe fills them with the victim. */
const USER_FIELDS = new Set(['user_id', 'idp_id', 'internal_user_id', 'user_ref', 'referred_internal_id']);

interface World {
  a: Shop['t'];
  b: Tenant;
  victim: { key: string; user_id: string; idp_id: string };
  attacker: { key: string; user_id: string; idp_id: string };
  ids: Record<string, string | number>;
  /** path params that name a resource owned by the victim (not the organization) */
  owned: Set<string>;
}

let w: World;
const jpeg = fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'photo.jpg'));

function must(res: Res, what: string, status = 200) {
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

async function buildWorld(): Promise<World> {
  const s = await shop();
  const a = s.t;
  const b = await newTenant('business');
  const victim = await basicUser(a);
  const attacker = await basicUser(a);
  const admin = { key: a.adminKey };
  const session = must(
    await call('POST', '/initialize_session', { key: victim.key, json: { user_id: victim.idp_id, source: 'mobile' } }),
    'session',
  );
  const brand = must(await call('GET', '/retail/brands', admin), 'brands').brands[0];
  const product = must(
    await call('POST', '/retail/admin/products', {
      key: a.adminKey,
      json: { name: 'Security Soap', brand_id: brand.id, barcode: '4006381333931' },
    }),
    'product',
    201,
  ).product;
  must(
    await call('POST', '/loyalty/award-points/' + victim.user_id, { ...admin, json: { action_type: 'purchase' } }),
    'award',
  );
  const gift = must(
    await call('POST', '/api/gifts/gifts', {
      ...admin,
      json: {
        gift_name: 'Soap voucher',
        gift_type: 'electronic_pins',
        country: 'US',
        supplier: 'Steam',
        electronic_pin_amount: 5,
        points_value: 1,
      },
    }),
    'gift',
    201,
  ).gift;
  const redemption = must(
    await call('POST', `/api/gifts/gifts/${gift.id}/redeem`, { key: victim.key, json: { user_id: victim.user_id } }),
    'redemption',
  ).redemption;
  const article = must(
    await call('POST', '/support/knowledge', {
      ...admin,
      json: { title: 'Refunds', body: 'Refunds take five days to reach your card.' },
    }),
    'article',
    201,
  ).article;
  const event = must(
    await call('POST', '/api/scheduler-service/events', {
      key: victim.key,
      json: {
        idp_id: victim.idp_id,
        type_of_event: 'loyalty',
        recurrency: 'daily',
        start_event: '2031-01-05T09:30:00Z',
        metadata: { action_type: 'daily_login' },
      },
    }),
    'event',
  ).event;
  const scan = must(
    await call('POST', '/api/ticket-scan/loyalty/ticket-scan', {
      key: victim.key,
      json: {
        user_id: victim.idp_id,
        venue_id: String(s.venue.id),
        image: (await renderReceipt(groceries('2026-11-20'))).toString('base64'),
      },
    }),
    'scan',
  );
  must(
    await call('POST', '/carina/search', { key: victim.key, json: { idp_id: victim.idp_id, query: 'soap' } }),
    'search',
  );
  const searches = must(
    await call('GET', `/carina/search-results?idp_id=${victim.idp_id}&organization_id=${a.organization_id}`, {
      key: victim.key,
    }),
    'search history',
  );
  const image = must(
    await call('POST', '/process_image', {
      key: victim.key,
      form: fileForm(
        { user_id: victim.idp_id, session_id: session.session_id, conversation_id: session.conversation_id },
        { data: jpeg, name: 'photo.jpg', type: 'image/jpeg' },
      ),
    }),
    'image',
  );
  const referral = must(
    await call('POST', '/loyalty/generate-referral-qr', { key: victim.key, json: { idp_id: victim.idp_id } }),
    'referral code',
  );
  const text = must(
    await call('POST', '/process_text', {
      key: victim.key,
      json: {
        text: 'My order arrived late and cold.',
        user_id: victim.idp_id,
        conversation_id: session.conversation_id,
      },
    }),
    'text',
  );
  must(
    await call('POST', '/api/feedback/submit', {
      key: victim.key,
      json: { user_id: victim.user_id, feedback_type: 'general', rating: 4, title: 'ok', comment: 'fine' },
    }),
    'feedback',
  );
  const template = must(
    await call('POST', '/api/email/templates', {
      ...admin,
      json: {
        template_id: 'security-welcome',
        name: 'Welcome',
        default_locale: 'en',
        versions: [{ locale: 'en', subject: 'Hi {{first_name}}', text: 'Hello {{first_name}}' }],
      },
    }),
    'template',
    201,
  ).template;
  must(
    await call('POST', '/api/email/suppressions', {
      ...admin,
      json: { address: 'suppressed@example.com', reason: 'manual' },
    }),
    'suppression',
  );
  const curated = must(
    await call('POST', '/api/support/curated', {
      ...admin,
      json: { question: 'How do I change my address?', answer: 'Open Orders and tap Change address.' },
    }),
    'curated answer',
    201,
  ).curated;
  // asking for a person opens a handoff at once, whatever the knowledge base holds
  const handoff = must(
    await call('POST', '/support', {
      key: victim.key,
      json: {
        prompt: 'I want to talk to a real person about my refund',
        user_id: victim.user_id,
        conversation_id: session.conversation_id,
      },
    }),
    'handoff',
  ).metadata.handoff_id;
  const keyId = must(await call('GET', `/list_api_keys/${victim.user_id}`, admin), 'keys').api_keys[0].key_id;
  // Its analysis runs in the background: the victim's world is snapshot once it is done, so only
  // what the attacker's requests change can differ afterwards.
  await until(
    "the victim's feedback to be analysed",
    () => call('GET', '/api/feedback/stats', admin),
    (r) => r.status === 200 && r.body.stats.pending_analysis === 0,
    120_000,
  );
  const ids: World['ids'] = {
    organization_id: a.organization_id,
    session_id: session.session_id,
    conversation_id: session.conversation_id,
    brand_id: brand.id,
    product_id: product.id,
    venue_id: s.venue.id,
    barcode: '4006381333931',
    gift_id: gift.id,
    redemption_id: redemption.id,
    article_id: article.id,
    event_id: event.id,
    ticket_id: scan.id,
    search_id: (Array.isArray(searches) ? searches : (searches.results ?? searches.history))[0].id,
    filename: String(image.thumbnail_path).split('/').pop()!,
    code: referral.referral_code,
    embedding_id: text.embedding_id,
    agent_name: 'support',
    api_key: victim.key,
    action_type: 'daily_login',
    latitude: 39.8,
    longitude: -89.64,
    template_id: template.template_id,
    address: 'suppressed@example.com',
    curated_id: curated.curated_id,
    handoff_id: handoff,
    key_id: keyId,
  };
  return {
    a,
    b,
    victim,
    attacker,
    ids,
    owned: new Set([
      'session_id',
      'conversation_id',
      'event_id',
      'ticket_id',
      'search_id',
      'filename',
      'embedding_id',
      'api_key',
      'redemption_id',
      'key_id',
    ]),
  };
}

/** What the victim's organization looks like, read by its admin (volatile fields dropped). */
async function snapshot(): Promise<Json> {
  const k = { key: w.a.adminKey };
  const { victim, ids } = w;
  const org = w.a.organization_id;
  const reads: Record<string, Promise<Res>> = {
    history: call('GET', `/loyalty/points/${victim.user_id}/history?limit=100`, k),
    keys: call('GET', `/list_api_keys/${victim.user_id}`, k),
    attacker_keys: call('GET', `/list_api_keys/${w.attacker.user_id}`, k),
    admin_keys: call('GET', `/list_api_keys/${w.a.admin.user_id}`, k),
    user: call('GET', `/api/users/${victim.user_id}`, k),
    member: call('GET', `/api/users?q=${victim.user_id}`, k),
    org_keys: call('GET', `/api/keys?user_ref=${victim.user_id}`, k),
    events: call('GET', `/scheduler/events?idp_id=${victim.idp_id}`, k),
    runs: call('GET', `/scheduler/events/${ids.event_id}/runs`, k),
    scan: call('GET', `/api/ticket-scan/loyalty/ticket-scan/${ids.ticket_id}`, k),
    searches: call('GET', `/carina/search-results?idp_id=${victim.idp_id}&organization_id=${org}`, k),
    responses: call('GET', `/get_response/${ids.conversation_id}?user_id=${victim.user_id}`, k),
    session: call('POST', '/verify_session', {
      ...k,
      json: { user_id: victim.user_id, conversation_id: ids.conversation_id },
    }),
    rules: call('GET', '/loyalty/rules', k),
    gifts: call('GET', '/api/gifts/gifts', k),
    redemptions: call('GET', `/api/gifts/redemptions?user_id=${victim.user_id}`, k),
    brands: call('GET', '/retail/brands', k),
    products: call('GET', '/retail/products', k),
    venues: call('GET', '/retail/venues', k),
    venue: call('GET', `/retail/venues/${ids.venue_id}/details`, k),
    knowledge: call('GET', '/support/knowledge', k),
    feedback: call('GET', '/api/feedback/stats', k),
    usage: call('GET', `/api/billing/usage/${victim.user_id}`, k),
    llm: call('GET', '/api/llm-config/llm-configs?agent_name=support', k),
    organization: call('GET', `/api/organizations/${org}`, k),
    templates: call('GET', '/api/email/templates', k),
    suppressions: call('GET', '/api/email/suppressions', k),
    curated: call('GET', '/api/support/curated', k),
    handoffs: call('GET', '/api/support/handoffs', k),
    sessions: call('GET', `/api/users/${victim.user_id}/sessions`, k),
    session_policy: call('GET', '/api/sessions/policy', k),
    unknown_items: call('GET', '/retail/admin/unknown-items', k),
    referral: fetch(`${inject('edgeUrl')}/referral/${ids.code}`).then(
      async (r) => ({ status: r.status, body: await r.json() }) as Res,
    ),
    victim_key: call('POST', '/verify_api_key', { json: { api_key: victim.key } }),
  };
  const out: Json = {};
  for (const [name, p] of Object.entries(reads)) {
    const res = await p;
    out[name] = { status: res.status, body: scrub(res.body) };
  }
  out.mails = fs.existsSync(inject('smtpDir')) ? fs.readdirSync(inject('smtpDir')).length : 0;
  return out;
}

/** Drops what changes by merely being read (last_used, last_activity, timings). */
function scrub(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(scrub);
  if (v && typeof v === 'object') {
    const out: Json = {};
    for (const [k, x] of Object.entries(v))
      if (!/^(last_used|last_activity|last_updated_activity|checked_at|timings|places_cached_at)$/.test(k))
        out[k] = scrub(x);
    return out;
  }
  return v;
}

async function operations(): Promise<Op[]> {
  const doc = (await call('GET', '/openapi.json')).body as Json;
  const out: Op[] = [];
  for (const [p, ops] of Object.entries<Json>(doc.paths)) {
    for (const [method, op] of Object.entries<Json>(ops)) out.push({ method: method.toUpperCase(), path: p, op });
  }
  return out;
}

const label = (o: Op) => `${o.method} ${o.path}`;

/** A value for a schema, by the field's name first (the victim's world), else a valid sample. */
function sample(schema: Json | undefined, name: string, values: Json): unknown {
  if (name in values) return values[name];
  if (!schema) return 'x';
  if (schema.const !== undefined) return schema.const;
  if (schema.default !== undefined) return schema.default;
  if (schema.enum) return schema.enum[0];
  const alt = schema.anyOf ?? schema.oneOf;
  if (alt) return sample(alt.find((s: Json) => s.type !== 'null') ?? alt[0], name, values);
  switch (schema.type) {
    case 'string':
      if (schema.format === 'date-time') return '2031-01-05T09:30:00Z';
      return 'x'.repeat(Math.max(1, schema.minLength ?? 1));
    case 'integer':
    case 'number':
      return schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 1);
    case 'boolean':
      return false;
    case 'array':
      return schema.minItems ? Array.from({ length: schema.minItems }, () => sample(schema.items, '', values)) : [];
    case 'object': {
      const o: Json = {};
      for (const [k, s] of Object.entries<Json>(schema.properties ?? {})) {
        if ((schema.required ?? []).includes(k) || k in values) o[k] = sample(s, k, values);
      }
      return o;
    }
    default:
      return 'x';
  }
}

/** Bodies the schema alone cannot make valid (free-form JSON text, cross-field rules). */
const BODIES: Record<string, (v: Json) => Json> = {
  'POST /scheduler/events': (v) => ({
    event_type: 'loyalty',
    schedule_time: '2031-01-05T09:30:00Z',
    user_id: v.user_id,
    organization_id: v.organization_id,
    metadata: { action_type: 'daily_login' },
  }),
  'PUT /scheduler/events/{event_id}': (v) => ({
    event_type: 'loyalty',
    schedule_time: '2031-01-06T09:30:00Z',
    organization_id: v.organization_id,
    metadata: { action_type: 'daily_login' },
  }),
  'POST /api/scheduler-service/events': (v) => ({
    idp_id: v.idp_id,
    organization_id: v.organization_id,
    type_of_event: 'loyalty',
    recurrency: 'daily',
    start_event: '2031-01-05T09:30:00Z',
    metadata: { action_type: 'daily_login' },
  }),
  'PUT /api/scheduler-service/events/{event_id}': (v) => ({
    idp_id: v.idp_id,
    organization_id: v.organization_id,
    type_of_event: 'loyalty',
    recurrency: 'daily',
    start_event: '2031-01-06T09:30:00Z',
    metadata: { action_type: 'daily_login' },
  }),
  'POST /api/llm-config/update-llm-config': (v) => ({
    agent_name: 'support',
    organization_id: v.organization_id,
    config_json: { model: 'gpt-4o-mini', temperature: 0.2 },
  }),
  'POST /api/llm-config/update-provider-config': () => ({
    agent_name: 'support',
    config_json: { provider: 'openai', base_url: 'https://api.openai.com/v1', api_key: 'sk-test-1234567890' },
  }),
  'POST /api/llm-config/default-config': () => ({ config: JSON.stringify({ model: 'gpt-4o-mini' }) }),
  'POST /email/send': (v) => ({
    user_id: v.user_id,
    organization_id: v.organization_id,
    conversation_id: v.conversation_id,
    email_type: 'notification',
    metadata: { template: 'welcome' },
  }),
  'POST /api/ticket-scan/loyalty/ticket-scan': (v) => ({
    user_id: v.user_id,
    organization_id: v.organization_id,
    venue_id: String(v.venue_id),
    image: jpeg.toString('base64'),
  }),
  'POST /api/billing/purchase-tokens': (v) => ({
    user_id: v.user_id,
    organization_id: v.organization_id,
    package_id: 'starter',
    payment_method: { type: 'card', token: 'pm_card_visa' },
  }),
  'POST /api/gifts/gifts': (v) => ({
    gift_name: 'x',
    gift_type: 'electronic_pins',
    country: 'US',
    supplier: 'S',
    electronic_pin_amount: 5,
    points_value: 1,
    organization_id: v.organization_id,
  }),
  'PUT /api/gifts/gifts/{gift_id}': () => ({
    gift_name: 'x',
    gift_type: 'electronic_pins',
    country: 'US',
    supplier: 'S',
    electronic_pin_amount: 5,
    points_value: 1,
  }),
  'POST /retail/admin/venues': () => ({ name: 'x', address: 'y', latitude: 1, longitude: 1 }),
  'PUT /retail/admin/venues/{venue_id}': () => ({ name: 'x', address: 'y', latitude: 1, longitude: 1 }),
  'POST /retail/admin/venues/{venue_id}/products': (v) => ({ product_id: v.product_id, price: 1, status: 'active' }),
  'POST /api/ticket-scan/loyalty/ticket-scan/{ticket_id}/validate': (v) => ({
    validations: [{ product_id: String(v.product_id), is_valid: true }],
  }),
  'POST /revoke_api_key': (v) => ({ user_id: v.user_id, api_key: v.api_key, organization_id: v.organization_id }),
  'POST /generate_api_key': (v) => ({ user_id: v.user_id, organization_id: v.organization_id, permissions: ['basic'] }),
  'POST /update_session_status': (v) => ({
    user_id: v.user_id,
    session_id: v.session_id,
    status: 'ended',
    organization_id: v.organization_id,
  }),
  'POST /loyalty/process-referral': (v) => ({
    referred_internal_id: v.user_id,
    referrer_internal_id: v.referrer,
    organization_id: v.organization_id,
  }),
  'POST /api/feedback/submit': (v) => ({
    user_id: v.user_id,
    organization_id: v.organization_id,
    feedback_type: 'general',
    rating: 1,
    title: 'x',
    comment: 'x',
  }),
  'PUT /loyalty/rules': (v) => ({ organization_id: v.organization_id, referral_points: 100000 }),
  'POST /support': (v) => ({
    prompt: 'How long do refunds take?',
    user_id: v.user_id,
    organization_id: v.organization_id,
    conversation_id: v.conversation_id,
    session_id: v.session_id,
  }),
  'POST /api/organizations': () => ({ name: 'x', tier: 'free' }),
};

/** Fields of the world an operation takes one of, not both (the other is left out of its request). */
const ONE_OF: Record<string, string[]> = {
  'GET /retail/venues/nearby': ['product_id'],
  'POST /rotate_api_key': ['key_id'],
  'POST /api/session-service/rotate_api_key': ['key_id'],
};

/** Builds the request of an operation from the given values (the victim's world as seen by a caller). */
function request(
  o: Op,
  v: Json,
  opts: { withOrganization: boolean },
): { url: string; init: { json?: unknown; form?: FormData } } {
  const values = { ...v };
  if (!opts.withOrganization) delete values.organization_id;
  for (const name of ONE_OF[label(o)] ?? []) delete values[name];
  let url = o.path.replace(/\{(\w+)\}/g, (_m, name) => encodeURIComponent(String(sample(undefined, name, values))));
  const query = new URLSearchParams();
  for (const p of o.op.parameters ?? []) {
    if (p.in !== 'query') continue;
    if (p.required || p.name in values) {
      const val = sample(p.schema, p.name, values);
      if (val !== undefined) query.set(p.name, String(val));
    }
  }
  if ([...query.keys()].length) url += `?${query}`;
  const content = o.op.requestBody?.content ?? {};
  const key = label(o);
  if (BODIES[key]) {
    const body = BODIES[key](values);
    if (!opts.withOrganization) delete body.organization_id;
    return { url, init: { json: body } };
  }
  if (content['application/json'])
    return { url, init: { json: sample(content['application/json'].schema, '', values) } };
  if (content['multipart/form-data']) {
    const schema = content['multipart/form-data'].schema;
    const fields: Record<string, string> = {};
    for (const [k, s] of Object.entries<Json>(schema.properties ?? {})) {
      if (k === 'file') continue;
      if ((schema.required ?? []).includes(k) || k in values) fields[k] = String(sample(s, k, values));
    }
    return { url, init: { form: fileForm(fields, { data: jpeg, name: 'photo.jpg', type: 'image/jpeg' }) } };
  }
  return { url, init: {} };
}

/** Does the operation name a user, or a resource owned by one? */
function namesUser(o: Op): boolean {
  const names = new Set<string>();
  for (const p of o.op.parameters ?? []) names.add(p.name);
  const json =
    o.op.requestBody?.content?.['application/json']?.schema ??
    o.op.requestBody?.content?.['multipart/form-data']?.schema;
  for (const k of Object.keys(json?.properties ?? {})) names.add(k);
  return [...names].some((n) => USER_FIELDS.has(n));
}
function namesOwned(o: Op): boolean {
  return (
    (o.op.parameters ?? []).some((p: Json) => w.owned.has(p.name)) ||
    Object.keys(o.op.requestBody?.content?.['application/json']?.schema?.properties ?? {}).some((n) => w.owned.has(n))
  );
}

const requiresAdmin = (o: Op) => /Requires the (admin|system_admin)/.test(o.op.description ?? '');

async function attack(o: Op, key: string | undefined, values: Json, withOrganization: boolean): Promise<Res> {
  const { url, init } = request(o, values, { withOrganization });
  return call(o.method, url, { key, ...init });
}

describe('security: every route of the OpenAPI document', () => {
  let ops: Op[];
  let before: Json;
  const outcomes: string[] = [];

  afterAll(stopEdges);

  beforeAll(async () => {
    w = await buildWorld();
    ops = (await operations()).filter((o) => !OPEN.has(label(o)));
    before = await snapshot();
  }, 180_000);

  it('covers every operation the document lists, and knows the open ones', async () => {
    const all = await operations();
    expect(all.length).toBeGreaterThan(90);
    for (const o of all)
      expect(OPEN.has(label(o)) || Array.isArray(o.op.security), `${label(o)} needs a key or belongs to OPEN`).toBe(
        true,
      );
  });

  it('no key: 401 on every operation that needs one', async () => {
    const wrong: string[] = [];
    for (const o of ops) {
      const res = await attack(
        o,
        undefined,
        { ...w.ids, user_id: w.victim.user_id, idp_id: w.victim.idp_id, referrer: w.attacker.user_id },
        true,
      );
      if (res.status !== 401) wrong.push(`${label(o)} → ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`);
    }
    expect(wrong).toEqual([]);
  }, 300_000);

  it("another organization's admin key: 403 or 404 on everything of the victim's organization", async () => {
    const wrong: string[] = [];
    const values = { ...w.ids, user_id: w.victim.user_id, idp_id: w.victim.idp_id, referrer: w.victim.user_id };
    for (const o of ops) {
      if (GLOBAL.has(label(o))) continue;
      // Naming the victim's organization outright, then (where the route takes one) leaving it out
      // so the ids alone must not reach across.
      for (const withOrganization of [true, false]) {
        const res = await attack(o, w.b.adminKey, values, withOrganization);
        // Without it the request acts in the caller's own organization: any answer but a server
        // error is fine there, as long as the victim's organization is untouched (last test).
        const ok = withOrganization ? [403, 404].includes(res.status) : res.status < 500;
        if (!ok) {
          wrong.push(
            `${label(o)}${withOrganization ? '' : ' (no organization_id)'} → ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`,
          );
        }
        outcomes.push(`${label(o)} b-admin${withOrganization ? '' : '-noorg'} ${res.status}`);
      }
    }
    expect(wrong).toEqual([]);
  }, 300_000);

  it('a basic key naming another user of its organization: 403 (404 for their resources), admin operations 403', async () => {
    const wrong: string[] = [];
    const values = { ...w.ids, user_id: w.victim.user_id, idp_id: w.victim.idp_id, referrer: w.attacker.user_id };
    for (const o of ops) {
      const admin = requiresAdmin(o);
      const user = namesUser(o);
      const owned = namesOwned(o);
      if (!admin && !user && !owned) continue;
      // The victim by platform id and by identity-provider id.
      // (POST /api/users takes only an identity-provider id: a usr_… value there is invalid input.)
      const refs =
        admin || !user
          ? [w.victim.user_id]
          : label(o) === 'POST /api/users'
            ? [w.victim.idp_id]
            : [w.victim.user_id, w.victim.idp_id];
      for (const ref of refs) {
        const res = await attack(o, w.attacker.key, { ...values, user_id: ref, idp_id: ref }, true);
        const expected = admin || (user && !owned) ? [403] : [403, 404];
        if (!expected.includes(res.status))
          wrong.push(
            `${label(o)} as ${ref === w.victim.user_id ? 'user_id' : 'idp_id'} → ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`,
          );
        outcomes.push(`${label(o)} basic ${res.status}`);
      }
    }
    expect(wrong).toEqual([]);
  }, 300_000);

  it('keys that no longer work (expired, rotated past their grace, revoked): 401 on every operation', async () => {
    // Admin keys of the victim's organization, each dead a different way. The probes go to an edge
    // without the failure limiter, so 300 refusals from this address leave the suite's edge alone.
    const idp = `dead-admin-${Date.now()}`;
    const admin = { key: w.a.adminKey };
    const mint = async (expires_at?: string) =>
      must(
        await call('POST', '/generate_api_key', {
          ...admin,
          json: { user_id: idp, permissions: ['admin'], ...(expires_at ? { expires_at } : {}) },
        }),
        'dead key',
      ).api_key as string;
    const expired = await mint(new Date(Date.now() + 3000).toISOString());
    const rotated = await mint();
    must(
      await call('POST', '/rotate_api_key', { key: rotated, json: { api_key: rotated, grace_seconds: 0 } }),
      'rotation',
    );
    const revoked = await mint();
    must(await call('POST', '/revoke_api_key', { ...admin, json: { user_id: idp, api_key: revoked } }), 'revocation');
    const url = await startExtraEdge({ AUTH_FAILURES_PER_MINUTE: '0' });
    await new Promise((r) => setTimeout(r, 4500)); // past the expiry and the edge's 1 s key cache
    const values = { ...w.ids, user_id: w.victim.user_id, idp_id: w.victim.idp_id, referrer: w.attacker.user_id };
    const wrong: string[] = [];
    for (const [name, key] of Object.entries({ expired, rotated, revoked })) {
      for (const o of ops) {
        const { url: path, init } = request(o, values, { withOrganization: true });
        const headers: Record<string, string> = { authorization: `Bearer ${key}` };
        if (init.json !== undefined) headers['content-type'] = 'application/json';
        const res = await fetch(`${url}${path}`, {
          method: o.method,
          headers,
          body: init.json !== undefined ? JSON.stringify(init.json) : init.form,
        });
        await res.arrayBuffer();
        if (res.status !== 401) wrong.push(`${name}: ${label(o)} → ${res.status}`);
      }
    }
    expect(wrong).toEqual([]);
  }, 300_000);

  it("nothing of the victim's organization changed", async () => {
    const after = await snapshot();
    for (const k of Object.keys(before)) expect({ [k]: after[k] }, k).toEqual({ [k]: before[k] });
  });
});
