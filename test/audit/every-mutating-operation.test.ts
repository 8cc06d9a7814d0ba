/**
 * Every operation of the OpenAPI document that can change something (POST, PUT, PATCH, DELETE,
 * keyed) has an entry here: a minimal successful call with an admin key (the system admin's for
 * system-admin routes) under its own X-Request-Id, and the record it must leave: exactly one,
 * with that request id, the right organization, actor, action and target, and no secret of the
 * request or the answer in `changes`. Operations whose routes say `audit: false` (they change
 * nothing: analysis, search, previews) are in NOT_AUDITED: called, and no record may appear.
 *
 * A new mutating route fails "every mutating operation has an entry" until it gets one here.
 */
import fs from 'node:fs';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { AuditRecord } from '../../activities/audit/models.ts';
import {
  adminKey,
  basicUser,
  call,
  fileForm,
  newTenant,
  type Res,
  type Tenant,
  unique,
  until,
} from '../helpers/api.ts';
import { renderReceipt } from '../helpers/receipts.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';
import { groceries, type Shop, shop } from '../helpers/shop.ts';

useSuiteRuntime();

type Json = Record<string, any>;
type User = { key: string; user_id: string; idp_id: string };

interface World {
  s: Shop;
  t: Tenant;
  biz: Tenant;
  u: User;
  keyId: string;
  bizKeyId: string;
  sysOrg: string;
  /** a token package the system admin created for purchases */
  packageId: string;
}

interface Call {
  params?: Record<string, string | number>;
  query?: Record<string, string | number>;
  json?: unknown;
  form?: FormData;
  /** default: the tenant's admin key */
  key?: string;
}

interface Audited extends Call {
  action: string;
  /** the expected target; a function reads it from the answer */
  target: { type: string; id: string } | ((body: Json) => { type: string; id: string });
  /** default: the tenant's organization */
  org?: string | ((body: Json) => string);
  /** who calls: the tenant's admin (default), the business tenant's admin, the system admin */
  as?: 'admin' | 'biz' | 'sys';
  /** secret values (of the request or the answer) that must not appear in the record */
  secrets?: string[] | ((body: Json) => string[]);
}

type Entry = (w: World) => Promise<Audited>;

const jpeg = fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'photo.jpg'));
const heic = fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'photo.heic'));
const gift = (points_value = 1) => ({
  gift_name: 'Audit voucher',
  gift_type: 'electronic_pins',
  country: 'US',
  supplier: 'Steam',
  electronic_pin_amount: 5,
  points_value,
});

function must(res: Res, what: string, ok = [200, 201, 202]) {
  if (!ok.includes(res.status)) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

// ---- seeds each entry makes for itself (their own records carry other request ids) ----

const admin = (w: World, method: string, p: string, json?: unknown) => call(method, p, { key: w.t.adminKey, json });
const mintKey = async (w: World) =>
  must(await admin(w, 'POST', '/generate_api_key', { user_id: w.u.user_id }), 'mint').api_key as string;
const newGift = async (w: World, points = 1) =>
  must(await admin(w, 'POST', '/api/gifts/gifts', gift(points)), 'gift').gift.id as string;
const newBrand = async (w: World) =>
  must(await admin(w, 'POST', '/retail/admin/brands', { name: unique('Brand') }), 'brand').brand.id as number;
const newProduct = async (w: World) =>
  must(
    await admin(w, 'POST', '/retail/admin/products', { name: unique('Product'), brand_id: await newBrand(w) }),
    'product',
  ).product.id as number;
const newVenue = async (w: World) =>
  must(
    await admin(w, 'POST', '/retail/admin/venues', {
      name: unique('Venue'),
      address: '1 Audit Road',
      latitude: 10,
      longitude: 10,
    }),
    'venue',
  ).venue.id as number;
const newSession = async (w: World) =>
  must(await call('POST', '/initialize_session', { key: w.u.key, json: { user_id: w.u.user_id } }), 'session');
const eventA = (w: World) => ({
  event_type: 'loyalty',
  schedule_time: '2031-01-05T09:30:00Z',
  user_id: w.u.user_id,
  metadata: { action_type: 'daily_login' },
});
const eventB = (w: World) => ({
  idp_id: w.u.user_id,
  type_of_event: 'loyalty',
  recurrency: 'daily',
  start_event: '2031-01-05T09:30:00Z',
  metadata: { action_type: 'daily_login' },
});
const newEvent = async (w: World) =>
  must(await admin(w, 'POST', '/scheduler/events', eventA(w)), 'event').event_id as string;
const newEndpoint = async (w: World) =>
  must(
    await admin(w, 'POST', '/api/webhooks/endpoints', { url: 'http://127.0.0.1:9/audit', events: ['*'] }),
    'endpoint',
  ).endpoint.id as string;
const newTemplate = async (w: World) => {
  const template_id = unique('tpl').toLowerCase();
  must(
    await admin(w, 'POST', '/api/email/templates', {
      template_id,
      name: 'Audit template',
      default_locale: 'en',
      versions: [{ locale: 'en', subject: 'Hi {{first_name}}', text: 'Hello {{first_name}}' }],
    }),
    'template',
  );
  return template_id;
};
/** A handoff of the tenant's user: asking for a person opens one at once. */
const newHandoff = async (w: World, claim = false) => {
  const s = await newSession(w);
  const id = must(
    await call('POST', '/support', {
      key: w.u.key,
      json: { prompt: 'I want to talk to a real person', user_id: w.u.user_id, conversation_id: s.conversation_id },
    }),
    'handoff',
  ).metadata.handoff_id as string;
  if (claim) must(await admin(w, 'POST', `/api/support/handoffs/${id}/claim`), 'claim');
  return id;
};
const newCurated = async (w: World) =>
  must(
    await admin(w, 'POST', '/api/support/curated', { question: unique('How do I audit'), answer: 'Like this.' }),
    'curated',
  ).curated.curated_id as string;
const receipt = async (total?: number) =>
  (await renderReceipt({ ...groceries('2026-10-05'), ...(total ? { total } : {}) })).toString('base64');

const sessionRoutes: Record<string, Entry> = {
  'POST /initialize_session': async (w) => ({
    json: { user_id: w.u.user_id },
    action: 'session.create',
    target: (b) => ({ type: 'session', id: b.session_id }),
  }),
  'POST /new_conversation': async (w) => ({
    json: { user_id: w.u.user_id },
    action: 'conversation.create',
    target: (b) => ({ type: 'conversation', id: b.conversation_id }),
  }),
  'POST /generate_api_key': async (w) => ({
    json: { user_id: w.u.user_id },
    action: 'api_key.create',
    target: (b) => ({ type: 'api_key', id: b.metadata.key_id }),
    secrets: (b) => [b.api_key],
  }),
  'POST /revoke_api_key': async (w) => {
    const key = await mintKey(w);
    return {
      json: { user_id: w.u.user_id, api_key: key },
      action: 'api_key.revoke',
      target: (b) => ({ type: 'api_key', id: b.key_id }),
      secrets: [key],
    };
  },
  'POST /rotate_api_key': async (w) => {
    const key = await mintKey(w);
    return {
      json: { user_id: w.u.user_id, api_key: key, grace_seconds: 0 },
      action: 'api_key.rotate',
      target: (b) => ({ type: 'api_key', id: b.previous.key_id }),
      secrets: (b) => [key, b.api_key],
    };
  },
  'POST /update_session_status': async (w) => {
    const s = await newSession(w);
    return {
      json: { user_id: w.u.user_id, session_id: s.session_id, status: 'paused' },
      action: 'session.update_status',
      target: { type: 'session', id: s.session_id },
    };
  },
};

const TABLE: Record<string, Entry> = {
  ...sessionRoutes,
  // The same operations under /api/session-service.
  ...Object.fromEntries(Object.entries(sessionRoutes).map(([k, v]) => [k.replace(' /', ' /api/session-service/'), v])),

  // identity
  'POST /api/organizations': async () => ({
    as: 'sys',
    json: { name: unique('Audited org'), tier: 'free' },
    action: 'organization.create',
    target: (b) => ({ type: 'organization', id: b.organization.organization_id }),
    org: (b) => b.organization.organization_id,
  }),
  'PATCH /api/organizations/{organization_id}': async (w) => ({
    as: 'sys',
    params: { organization_id: w.t.organization_id },
    json: { name: unique('Renamed') },
    action: 'organization.update',
    target: { type: 'organization', id: w.t.organization_id },
    org: w.t.organization_id,
  }),
  'POST /api/users': async () => ({
    json: { idp_id: unique('idp'), email: 'new.user@example.com' },
    action: 'user.upsert',
    target: (b) => ({ type: 'user', id: b.user.user_id }),
  }),
  'PATCH /api/users/{user_ref}': async (w) => ({
    params: { user_ref: w.u.user_id },
    json: { display_name: 'Audited name' },
    action: 'user.update',
    target: { type: 'user', id: w.u.user_id },
  }),
  'PATCH /api/keys/{key_id}': async (w) => ({
    params: { key_id: w.keyId },
    json: { name: 'Audited key' },
    action: 'api_key.update',
    target: { type: 'api_key', id: w.keyId },
  }),
  'DELETE /api/sessions/{session_id}': async (w) => {
    const s = await newSession(w);
    return {
      params: { session_id: s.session_id },
      action: 'session.end',
      target: { type: 'session', id: s.session_id },
    };
  },
  'POST /api/users/{user_ref}/sessions/end-others': async (w) => {
    const s = await newSession(w);
    return {
      params: { user_ref: w.u.user_id },
      json: { current_session_id: s.session_id },
      action: 'session.end_others',
      target: { type: 'user', id: w.u.user_id },
    };
  },
  'PUT /api/sessions/policy': async (w) => ({
    json: { idle_timeout_seconds: 86_400 },
    action: 'session_policy.update',
    target: { type: 'organization', id: w.t.organization_id },
  }),

  // privacy (edge/routes/privacy.ts): the actions derived from the paths
  'POST /api/users/{user_ref}/export': async (w) => {
    const v = await basicUser(w.t);
    return { params: { user_ref: v.user_id }, action: 'user.export', target: { type: 'user', id: v.user_id } };
  },
  'DELETE /api/users/{user_ref}': async (w) => {
    const v = await basicUser(w.t);
    return {
      params: { user_ref: v.user_id },
      json: { reason: 'asked to be forgotten' },
      action: 'user.erase',
      target: { type: 'user', id: v.user_id },
    };
  },

  // loyalty and referrals
  'POST /loyalty/award-points/{idp_id}': async (w) => ({
    params: { idp_id: w.u.user_id },
    json: { action_type: 'purchase' },
    action: 'points.award',
    target: { type: 'user', id: w.u.user_id },
  }),
  'PUT /loyalty/rules': async () => ({
    json: { referral_points: 55 },
    action: 'loyalty_rules.update',
    target: (b) => ({ type: 'loyalty_rules', id: b.organization_id }),
  }),
  'POST /loyalty/reverse': async (w) => {
    const op = unique('order');
    must(
      await admin(w, 'POST', `/loyalty/award-points/${w.u.user_id}`, { action_type: 'purchase', operation_id: op }),
      'award',
    );
    return {
      json: { operation_id: op, user_id: w.u.user_id, reason: 'given in error', allow_negative: true },
      action: 'points.reverse',
      target: (b) => ({ type: 'ledger_operation', id: b.credit_operation_id }),
    };
  },
  'PUT /loyalty/tiers': async () => ({
    json: { window: { type: 'calendar_year' }, tiers: [{ tier_id: 'silver', name: 'Silver', threshold: 100 }] },
    action: 'loyalty_tiers.update',
    target: (b) => ({ type: 'loyalty_tiers', id: b.organization_id }),
  }),
  'PUT /loyalty/members/{user_ref}/tier': async (w) => {
    must(
      await admin(w, 'PUT', '/loyalty/tiers', {
        window: { type: 'calendar_year' },
        tiers: [{ tier_id: 'gold', name: 'Gold', threshold: 500 }],
      }),
      'tiers',
    );
    return {
      params: { user_ref: w.u.user_id },
      json: { tier_id: 'gold', reason: 'a goodwill gesture', until: new Date(Date.now() + 86_400_000).toISOString() },
      action: 'member_tier.set',
      target: { type: 'user', id: w.u.user_id },
    };
  },
  'PUT /loyalty/members/{user_ref}/attributes': async (w) => ({
    params: { user_ref: w.u.user_id },
    json: { attributes: { country: 'FR' } },
    action: 'member_attributes.set',
    target: { type: 'user', id: w.u.user_id },
  }),
  'POST /loyalty/campaigns': async () => ({
    json: { name: 'Audited campaign', starts_at: new Date().toISOString(), effect: { type: 'bonus', points: 5 } },
    action: 'campaign.create',
    target: (b) => ({ type: 'campaign', id: b.campaign_id }),
  }),
  'PATCH /loyalty/campaigns/{campaign_id}': async (w) => {
    const c = must(
      await admin(w, 'POST', '/loyalty/campaigns', {
        name: 'Audited',
        starts_at: new Date().toISOString(),
        effect: { type: 'bonus', points: 5 },
      }),
      'campaign',
    );
    return {
      params: { campaign_id: c.campaign_id },
      json: { status: 'active' },
      action: 'campaign.update',
      target: { type: 'campaign', id: c.campaign_id },
    };
  },
  'DELETE /loyalty/campaigns/{campaign_id}': async (w) => {
    const c = must(
      await admin(w, 'POST', '/loyalty/campaigns', {
        name: 'Audited',
        starts_at: new Date().toISOString(),
        effect: { type: 'bonus', points: 5 },
      }),
      'campaign',
    );
    return {
      params: { campaign_id: c.campaign_id },
      action: 'campaign.delete',
      target: { type: 'campaign', id: c.campaign_id },
    };
  },
  'POST /loyalty/process-referral': async (w) => {
    const referred = await basicUser(w.t);
    return {
      json: { referred_internal_id: referred.user_id, referrer_internal_id: w.u.user_id },
      action: 'referral.process',
      target: (b) => ({ type: 'referral', id: b.referral_id }),
    };
  },

  // gifts
  'POST /api/gifts/gifts': async () => ({
    json: gift(),
    action: 'gift.create',
    target: (b) => ({ type: 'gift', id: b.gift.id }),
  }),
  'PUT /api/gifts/gifts/{gift_id}': async (w) => {
    const id = await newGift(w);
    return { params: { gift_id: id }, json: gift(2), action: 'gift.update', target: { type: 'gift', id } };
  },
  'DELETE /api/gifts/gifts/{gift_id}': async (w) => {
    const id = await newGift(w);
    return { params: { gift_id: id }, action: 'gift.delete', target: { type: 'gift', id } };
  },
  'POST /api/gifts/gifts/{gift_id}/redeem': async (w) => {
    const id = await newGift(w, 1);
    return {
      params: { gift_id: id },
      json: { user_id: w.u.user_id },
      action: 'gift.redeem',
      target: (b) => ({ type: 'redemption', id: b.redemption.id }),
      secrets: (b) => (b.redemption.pin_code ? [b.redemption.pin_code] : []),
    };
  },

  // llm configuration (organization settings: a business organization)
  'POST /api/llm-config/update-llm-config': async () => ({
    as: 'biz',
    json: { agent_name: 'support', config_json: { model: 'gpt-4o-mini', temperature: 0.3 } },
    action: 'llm_config.update',
    target: { type: 'llm_agent_config', id: 'support' },
  }),
  'POST /api/llm-config/rollback': async (w) => {
    const set = must(
      await call('POST', '/api/llm-config/update-llm-config', {
        key: w.biz.adminKey,
        json: { agent_name: 'documents', config_json: { model: 'gpt-4o-mini', temperature: 0.1 } },
      }),
      'llm set',
    );
    return {
      as: 'biz',
      json: { agent_name: 'documents', version: set.version },
      action: 'llm_config.rollback',
      target: { type: 'llm_agent_config', id: 'documents' },
    };
  },
  'POST /api/llm-config/update-provider-config': async () => {
    const secret = `sk-audit-${unique('secret')}`;
    return {
      as: 'sys',
      json: {
        agent_name: 'transcription',
        config_json: { provider: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: secret },
      },
      action: 'llm_provider.update',
      target: { type: 'llm_provider', id: 'transcription' },
      secrets: [secret],
    };
  },
  'POST /api/llm-config/default-config': async () => {
    const current = must(await call('GET', '/api/llm-config/default-config', { key: adminKey() }), 'default config');
    return {
      as: 'sys',
      json: { config: current.config },
      action: 'llm_default_config.update',
      target: { type: 'llm_default_config', id: 'default' },
    };
  },

  // retail
  'POST /retail/admin/brands': async () => ({
    json: { name: unique('Brand') },
    action: 'brand.create',
    target: (b) => ({ type: 'brand', id: String(b.brand.id) }),
  }),
  'PUT /retail/admin/brands/{brand_id}': async (w) => {
    const id = await newBrand(w);
    return {
      params: { brand_id: id },
      json: { name: unique('Brand') },
      action: 'brand.update',
      target: { type: 'brand', id: String(id) },
    };
  },
  'DELETE /retail/admin/brands/{brand_id}': async (w) => {
    const id = await newBrand(w);
    return { params: { brand_id: id }, action: 'brand.delete', target: { type: 'brand', id: String(id) } };
  },
  'POST /retail/admin/products': async (w) => ({
    json: { name: unique('Product'), brand_id: await newBrand(w) },
    action: 'product.create',
    target: (b) => ({ type: 'product', id: String(b.product.id) }),
  }),
  'PUT /retail/admin/products/{product_id}': async (w) => {
    const id = await newProduct(w);
    return {
      params: { product_id: id },
      json: { name: unique('Product'), brand_id: await newBrand(w) },
      action: 'product.update',
      target: { type: 'product', id: String(id) },
    };
  },
  'DELETE /retail/admin/products/{product_id}': async (w) => {
    const id = await newProduct(w);
    return { params: { product_id: id }, action: 'product.delete', target: { type: 'product', id: String(id) } };
  },
  'POST /retail/admin/venues': async () => ({
    json: { name: unique('Venue'), address: '2 Audit Road', latitude: 11, longitude: 11 },
    action: 'venue.create',
    target: (b) => ({ type: 'venue', id: String(b.venue.id) }),
  }),
  'PUT /retail/admin/venues/{venue_id}': async (w) => {
    const id = await newVenue(w);
    return {
      params: { venue_id: id },
      json: { name: unique('Venue'), address: '3 Audit Road', latitude: 12, longitude: 12 },
      action: 'venue.update',
      target: { type: 'venue', id: String(id) },
    };
  },
  'DELETE /retail/admin/venues/{venue_id}': async (w) => {
    const id = await newVenue(w);
    return { params: { venue_id: id }, action: 'venue.delete', target: { type: 'venue', id: String(id) } };
  },
  'POST /retail/admin/venues/{venue_id}/products': async (w) => {
    const venue = await newVenue(w);
    const product = await newProduct(w);
    return {
      params: { venue_id: venue },
      json: { product_id: product, price: 2.5, status: 'active' },
      action: 'venue_product.map',
      target: { type: 'venue_product', id: `${venue}:${product}` },
    };
  },

  // scans
  'POST /api/ticket-scan/loyalty/ticket-scan': async (w) => ({
    json: { user_id: w.u.user_id, venue_id: String(w.s.venue.id), image: await receipt() },
    action: 'ticket_scan.create',
    target: (b) => ({ type: 'ticket_scan', id: b.id }),
  }),
  'POST /retail/receipts': async (w) => {
    const png = await renderReceipt(groceries('2026-10-07'));
    return {
      query: { venue_id: w.s.venue.id },
      form: fileForm({ user_id: w.u.user_id }, { data: png, name: 'receipt.png', type: 'image/png' }),
      action: 'receipt_scan.create',
      target: (b) => ({ type: 'ticket_scan', id: b.id }),
    };
  },
  'POST /api/ticket-scan/loyalty/ticket-scan/{ticket_id}/validate': async (w) => {
    const scan = must(
      await call('POST', '/api/ticket-scan/loyalty/ticket-scan', {
        key: w.u.key,
        json: { user_id: w.u.user_id, venue_id: String(w.s.venue.id), image: await receipt(5.0) },
      }),
      'pending scan',
    );
    expect(scan.status).toBe('pending_validation');
    const validations = scan.products.map((p: Json) => ({ product_id: String(p.product_id ?? p.id), is_valid: true }));
    return {
      params: { ticket_id: scan.id },
      json: { validations },
      action: 'ticket_scan.validate',
      target: { type: 'ticket_scan', id: scan.id },
    };
  },

  // support, search, responses, email, feedback
  'POST /support/knowledge': async () => ({
    json: { title: 'Audit', body: 'Audited articles are recorded.' },
    action: 'knowledge_article.create',
    target: (b) => ({ type: 'knowledge_article', id: b.article.id }),
  }),
  'DELETE /support/knowledge/{article_id}': async (w) => {
    const id = must(await admin(w, 'POST', '/support/knowledge', { title: 'Gone', body: 'To be deleted.' }), 'article')
      .article.id;
    return {
      params: { article_id: id },
      action: 'knowledge_article.delete',
      target: { type: 'knowledge_article', id },
    };
  },
  'DELETE /carina/search-results/{search_id}': async (w) => {
    const s = must(
      await call('POST', '/carina/search', { key: w.u.key, json: { idp_id: w.u.idp_id, query: 'soap' } }),
      'search',
    );
    return {
      params: { search_id: s.id },
      query: { idp_id: w.u.idp_id, organization_id: w.t.organization_id },
      action: 'search_history.delete',
      target: { type: 'search', id: s.id },
    };
  },
  'DELETE /carina/search-results': async (w) => {
    must(await call('POST', '/carina/search', { key: w.u.key, json: { idp_id: w.u.idp_id, query: 'milk' } }), 'search');
    return {
      query: { idp_id: w.u.idp_id, organization_id: w.t.organization_id },
      action: 'search_history.clear',
      target: { type: 'user', id: w.u.user_id },
    };
  },
  'DELETE /conversations/{conversation_id}': async (w) => {
    const s = await newSession(w);
    must(
      await call('POST', '/process_text', {
        key: w.u.key,
        json: { text: 'A note to delete.', user_id: w.u.user_id, conversation_id: s.conversation_id },
      }),
      'text',
    );
    return {
      params: { conversation_id: s.conversation_id },
      query: { user_id: w.u.user_id },
      action: 'conversation.delete',
      target: { type: 'conversation', id: s.conversation_id },
    };
  },
  'PUT /api/gifts/provider/sandbox-balance': async (w) => ({
    json: { balance: 1_000_000, currency: 'USD' },
    action: 'gift_sandbox_balance.set',
    target: { type: 'organization', id: w.t.organization_id },
  }),
  'PUT /api/gifts/settings': async (w) => ({
    json: { low_balance_threshold: 50, catalogue_sync: null },
    action: 'gift_settings.update',
    target: { type: 'gift_settings', id: w.t.organization_id },
  }),
  'POST /api/gifts/catalogue/sync': async (w) => ({
    json: { points_per_unit: 100 },
    action: 'gift_catalogue.sync',
    target: { type: 'gift_catalogue', id: w.t.organization_id },
  }),
  'POST /api/email/templates': async () => ({
    json: {
      template_id: unique('tpl').toLowerCase(),
      name: 'Audit template',
      default_locale: 'en',
      versions: [{ locale: 'en', subject: 'Hi {{first_name}}', text: 'Hello {{first_name}}' }],
    },
    action: 'email_template.create',
    target: (b) => ({ type: 'email_template', id: b.template.template_id }),
  }),
  'PUT /api/email/templates/{template_id}': async (w) => {
    const template_id = await newTemplate(w);
    return {
      params: { template_id },
      json: {
        name: 'Audit template v2',
        default_locale: 'en',
        versions: [{ locale: 'en', subject: 'Hello {{first_name}}', text: 'Hi {{first_name}}' }],
      },
      action: 'email_template.update',
      target: { type: 'email_template', id: template_id },
    };
  },
  'DELETE /api/email/templates/{template_id}': async (w) => {
    const template_id = await newTemplate(w);
    return {
      params: { template_id },
      action: 'email_template.delete',
      target: { type: 'email_template', id: template_id },
    };
  },
  'POST /api/email/suppressions': async (w) => ({
    json: { address: `${unique('audit')}@example.com`, reason: 'manual' },
    action: 'email_suppression.create',
    target: { type: 'email_suppressions', id: w.t.organization_id },
  }),
  'DELETE /api/email/suppressions/{address}': async (w) => {
    const address = `${unique('audit')}@example.com`;
    must(await admin(w, 'POST', '/api/email/suppressions', { address, reason: 'manual' }), 'suppression');
    return {
      params: { address },
      action: 'email_suppression.delete',
      target: { type: 'email_suppressions', id: w.t.organization_id },
    };
  },
  'POST /api/files/signing-key/rotate': async (w) => ({
    action: 'file_link_key.rotate',
    target: { type: 'organization', id: w.t.organization_id },
  }),
  'POST /api/support/handoffs/{handoff_id}/claim': async (w) => {
    const handoff_id = await newHandoff(w);
    return {
      params: { handoff_id },
      action: 'support_handoff.claim',
      target: { type: 'support_handoff', id: handoff_id },
    };
  },
  'POST /api/support/handoffs/{handoff_id}/reply': async (w) => {
    const handoff_id = await newHandoff(w, true);
    return {
      params: { handoff_id },
      json: { text: 'A person answers here.' },
      action: 'support_handoff.reply',
      target: { type: 'support_handoff', id: handoff_id },
    };
  },
  'POST /api/support/handoffs/{handoff_id}/close': async (w) => {
    const handoff_id = await newHandoff(w);
    return {
      params: { handoff_id },
      action: 'support_handoff.close',
      target: { type: 'support_handoff', id: handoff_id },
    };
  },
  'POST /api/support/curated': async () => ({
    json: { question: unique('How do I audit'), answer: 'Like this.' },
    action: 'support_curated.create',
    target: (b) => ({ type: 'support_curated', id: b.curated.curated_id }),
  }),
  'PUT /api/support/curated/{curated_id}': async (w) => {
    const curated_id = await newCurated(w);
    return {
      params: { curated_id },
      json: { question: unique('How do I audit again'), answer: 'Like that.' },
      action: 'support_curated.update',
      target: { type: 'support_curated', id: curated_id },
    };
  },
  'DELETE /api/support/curated/{curated_id}': async (w) => {
    const curated_id = await newCurated(w);
    return {
      params: { curated_id },
      action: 'support_curated.delete',
      target: { type: 'support_curated', id: curated_id },
    };
  },
  'POST /email/send': async (w) => {
    const s = await newSession(w);
    return {
      json: {
        user_id: w.u.user_id,
        conversation_id: s.conversation_id,
        email_type: 'notification',
        metadata: { template: 'welcome', idempotency_key: unique('mail') },
      },
      action: 'email.send',
      target: (b) => ({ type: 'email', id: b.message_id }),
    };
  },
  'POST /api/feedback/submit': async (w) => ({
    json: { user_id: w.u.user_id, feedback_type: 'general', rating: 5, title: 'Audit', comment: 'Recorded.' },
    action: 'feedback.submit',
    target: (b) => ({ type: 'feedback', id: b.feedback_id }),
  }),

  // billing
  'POST /api/billing/packages': async () => ({
    as: 'sys',
    json: { id: unique('audit-pkg'), name: 'Audit package', tokens: 10, price: 1, currency: 'USD', validity_days: 1 },
    action: 'token_package.create',
    target: (b) => ({ type: 'token_package', id: b.package.id }),
  }),
  'POST /api/billing/purchase-tokens': async (w) => ({
    json: { user_id: w.u.user_id, package_id: w.packageId, payment_method: { type: 'card', token: 'pm_card_visa' } },
    action: 'tokens.purchase',
    target: (b) => ({ type: 'purchase', id: b.transaction_id }),
    secrets: ['pm_card_visa'],
  }),

  // scheduler (both interface variants)
  'POST /scheduler/events': async (w) => ({
    json: eventA(w),
    action: 'scheduled_event.create',
    target: (b) => ({ type: 'scheduled_event', id: b.event_id }),
  }),
  'PUT /scheduler/events/{event_id}': async (w) => {
    const id = await newEvent(w);
    const { user_id: _u, ...body } = eventA(w);
    return {
      params: { event_id: id },
      json: { ...body, schedule_time: '2031-01-06T09:30:00Z' },
      action: 'scheduled_event.update',
      target: { type: 'scheduled_event', id },
    };
  },
  'POST /api/scheduler-service/events': async (w) => ({
    json: eventB(w),
    action: 'scheduled_event.create',
    target: (b) => ({ type: 'scheduled_event', id: b.event.id }),
  }),
  'PUT /api/scheduler-service/events/{event_id}': async (w) => {
    const id = await newEvent(w);
    return {
      params: { event_id: id },
      json: { ...eventB(w), start_event: '2031-01-07T09:30:00Z' },
      action: 'scheduled_event.update',
      target: { type: 'scheduled_event', id },
    };
  },
  'POST /api/scheduler-service/webhook-secret/rotate': async (w) => ({
    json: { grace_seconds: 0 },
    action: 'scheduled_webhook_secret.rotate',
    target: { type: 'organization', id: w.t.organization_id },
    secrets: (b) => [b.secret],
  }),

  // webhooks
  'POST /api/webhooks/endpoints': async () => ({
    json: { url: 'http://127.0.0.1:9/audit', events: ['*'] },
    action: 'webhook_endpoint.create',
    target: (b) => ({ type: 'webhook_endpoint', id: b.endpoint.id }),
    secrets: (b) => [b.secret],
  }),
  'PATCH /api/webhooks/endpoints/{id}': async (w) => {
    const id = await newEndpoint(w);
    return {
      params: { id },
      json: { description: 'audited' },
      action: 'webhook_endpoint.update',
      target: { type: 'webhook_endpoint', id },
    };
  },
  'DELETE /api/webhooks/endpoints/{id}': async (w) => {
    const id = await newEndpoint(w);
    return { params: { id }, action: 'webhook_endpoint.delete', target: { type: 'webhook_endpoint', id } };
  },
  'POST /api/webhooks/endpoints/{id}/rotate-secret': async (w) => {
    const id = await newEndpoint(w);
    return {
      params: { id },
      json: { grace_seconds: 0 },
      action: 'webhook_endpoint.rotate_secret',
      target: { type: 'webhook_endpoint', id },
      secrets: (b) => [b.secret],
    };
  },
  'POST /api/webhooks/endpoints/{id}/test': async (w) => {
    const id = await newEndpoint(w);
    return { params: { id }, action: 'webhook_endpoint.ping', target: { type: 'webhook_endpoint', id } };
  },
  'POST /api/webhooks/endpoints/{id}/pause': async (w) => {
    const id = await newEndpoint(w);
    return { params: { id }, action: 'webhook_endpoint.pause', target: { type: 'webhook_endpoint', id } };
  },
  'POST /api/webhooks/endpoints/{id}/resume': async (w) => {
    const id = await newEndpoint(w);
    return { params: { id }, action: 'webhook_endpoint.resume', target: { type: 'webhook_endpoint', id } };
  },
  'POST /api/webhooks/endpoints/{id}/replay': async (w) => {
    const id = await newEndpoint(w);
    return {
      params: { id },
      json: { since: '2026-01-01T00:00:00Z' },
      action: 'webhook_endpoint.replay',
      target: { type: 'webhook_endpoint', id },
    };
  },
  'POST /api/webhooks/deliveries/{id}/retry': async (w) => {
    const endpoint = await newEndpoint(w);
    must(await admin(w, 'POST', `/api/webhooks/endpoints/${endpoint}/test`), 'ping');
    const list = await until(
      'a delivery',
      () => admin(w, 'GET', `/api/webhooks/deliveries?endpoint_id=${endpoint}`),
      (r) => r.body.deliveries?.length > 0 && r.body.deliveries[0].status !== 'pending',
      30_000,
    );
    const id = list.body.deliveries[0].id;
    return { params: { id }, action: 'webhook_delivery.retry', target: { type: 'webhook_delivery', id } };
  },
};

// Scheduler operations served at both prefixes: one entry each, run under either path.
const schedulerBoth: Record<string, Entry> = {
  'DELETE /scheduler/events/{event_id}': async (w) => {
    const id = await newEvent(w);
    return { params: { event_id: id }, action: 'scheduled_event.delete', target: { type: 'scheduled_event', id } };
  },
  'POST /scheduler/events/{event_id}/execute': async (w) => {
    const id = await newEvent(w);
    return { params: { event_id: id }, action: 'scheduled_event.execute', target: { type: 'scheduled_event', id } };
  },
  'POST /scheduler/events/{event_id}/pause': async (w) => {
    const id = await newEvent(w);
    return {
      params: { event_id: id },
      json: { note: 'audit' },
      action: 'scheduled_event.pause',
      target: { type: 'scheduled_event', id },
    };
  },
  'POST /scheduler/events/{event_id}/resume': async (w) => {
    const id = await newEvent(w);
    must(await admin(w, 'POST', `/scheduler/events/${id}/pause`, {}), 'pause');
    return {
      params: { event_id: id },
      json: {},
      action: 'scheduled_event.resume',
      target: { type: 'scheduled_event', id },
    };
  },
};
Object.assign(
  TABLE,
  schedulerBoth,
  Object.fromEntries(
    Object.entries(schedulerBoth).map(([k, v]) => [k.replace(' /scheduler/', ' /api/scheduler-service/'), v]),
  ),
);

/** Operations whose routes say `audit: false`: called with an admin key, they must leave no record. */
const NOT_AUDITED: Record<string, (w: World) => Promise<Call>> = {
  'POST /verify_session': async (w) => ({
    json: { user_id: w.u.user_id, conversation_id: (await newSession(w)).conversation_id },
  }),
  'POST /api/session-service/verify_session': async (w) => ({
    json: { user_id: w.u.user_id, conversation_id: (await newSession(w)).conversation_id },
  }),
  'POST /loyalty/generate-referral-qr': async (w) => ({ json: { idp_id: w.u.user_id } }),
  'POST /loyalty/evaluate': async (w) => ({ json: { user_id: w.u.user_id, action_type: 'purchase' } }),
  'POST /support': async (w) => ({ json: { prompt: 'How long do refunds take?', user_id: w.u.user_id } }),
  // Answered or not (speech engines vary), never recorded: the call is enough.
  'POST /support/transcribe': async (w) => ({
    form: fileForm({ user_id: w.u.user_id }, { data: jpeg, name: 'x.wav', type: 'audio/wav' }),
  }),
  'POST /carina/search': async (w) => ({ json: { idp_id: w.u.idp_id, query: 'soap' } }),
  'POST /process_text': async (w) => ({ json: { text: 'Nothing to audit here.', user_id: w.u.user_id } }),
  'POST /text/similar': async () => ({ json: { text: 'audit' } }),
  'POST /process_image': async (w) => ({
    form: fileForm({ user_id: w.u.user_id }, { data: jpeg, name: 'photo.jpg', type: 'image/jpeg' }),
  }),
  'POST /convert_heic': async (w) => ({
    form: fileForm({ user_id: w.u.user_id }, { data: heic, name: 'photo.heic', type: 'image/heic' }),
  }),
  'POST /process_document': async (w) => ({
    form: fileForm(
      { user_id: w.u.user_id },
      { data: Buffer.from('Audit notes\n\nNothing changes.'), name: 'notes.txt', type: 'text/plain' },
    ),
  }),
  'POST /generate_thumbnail': async (w) => ({
    form: fileForm({ user_id: w.u.user_id }, { data: jpeg, name: 'photo.jpg', type: 'image/jpeg' }),
  }),
  'POST /api/email/templates/{template_id}/preview': async (w) => ({
    params: { template_id: await newTemplate(w) },
    json: { variables: { first_name: 'Ada' } },
  }),
  'POST /api/files/links': async (w) => {
    const s = await newSession(w);
    const image = must(
      await call('POST', '/process_image', {
        key: w.u.key,
        form: fileForm(
          { user_id: w.u.user_id, session_id: s.session_id, conversation_id: s.conversation_id },
          { data: jpeg, name: 'photo.jpg', type: 'image/jpeg' },
        ),
      }),
      'image',
    );
    return { json: { path: image.thumbnail_path } };
  },
};

/**
 * Operations whose success needs a state this file cannot reach cheaply. Each is still called: its
 * refusal must leave no record. Say where the successful path is covered.
 */
const REFUSED_ONLY: Record<string, { why: string; call: (w: World) => Promise<Call> }> = {
  'POST /api/gifts/redemptions/{redemption_id}/settle': {
    why: 'a redemption in needs_review needs a failing provider (test/gifts/redemption-review.test.ts); here a completed one is refused (409)',
    call: async (w) => {
      const id = await newGift(w, 1);
      const r = must(
        await call('POST', `/api/gifts/gifts/${id}/redeem`, { key: w.u.key, json: { user_id: w.u.user_id } }),
        'redeem',
      );
      return { params: { redemption_id: r.redemption.id }, json: { outcome: 'completed', reason: 'audit' } };
    },
  },
};

interface Op {
  method: string;
  path: string;
  op: Json;
}
const label = (o: Op) => `${o.method} ${o.path}`;
const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function urlOf(o: Op, c: Call): string {
  let url = o.path.replace(/\{(\w+)\}/g, (_m, name) => {
    if (c.params?.[name] === undefined) throw new Error(`${label(o)}: no value for {${name}}`);
    return encodeURIComponent(String(c.params[name]));
  });
  const q = new URLSearchParams(Object.entries(c.query ?? {}).map(([k, v]): [string, string] => [k, String(v)]));
  if ([...q.keys()].length) url += `?${q}`;
  return url;
}

const send = (o: Op, c: Call, key: string, request_id: string) =>
  call(o.method, urlOf(o, c), { key, json: c.json, form: c.form, headers: { 'x-request-id': request_id } });
const recordsOf = (request_id: string) => AuditRecord.find({ request_id }).lean();

let w: World;
let ops: Op[];

async function keyIdOf(t: Tenant): Promise<string> {
  return must(await call('GET', `/list_api_keys/${t.admin.user_id}`, { key: t.adminKey }), 'keys').api_keys[0].key_id;
}

beforeAll(async () => {
  const s = await shop();
  const biz = await newTenant('business');
  const u = await basicUser(s.t);
  const w0 = { s, t: s.t, biz, u, keyId: await keyIdOf(s.t), bizKeyId: await keyIdOf(biz), sysOrg: '' } as World;
  must(
    await call('PATCH', `/api/users/${u.user_id}`, { key: s.t.adminKey, json: { email: 'audited.user@example.com' } }),
    'email',
  );
  for (let i = 0; i < 3; i++)
    must(
      await call('POST', `/loyalty/award-points/${u.user_id}`, {
        key: s.t.adminKey,
        json: { action_type: 'purchase' },
      }),
      'points',
    );
  const sys = must(await call('POST', '/verify_api_key', { json: { api_key: adminKey() } }), 'sys key');
  w0.sysOrg = sys.organization_id;
  w0.packageId = unique('audit-starter');
  must(
    await call('POST', '/api/billing/packages', {
      key: adminKey(),
      json: { id: w0.packageId, name: 'Audit starter', tokens: 100, price: 1, currency: 'USD', validity_days: 30 },
    }),
    'package',
  );
  w = w0;
  const doc = (await call('GET', '/openapi.json')).body as Json;
  ops = [];
  for (const [p, byMethod] of Object.entries<Json>(doc.paths)) {
    for (const [m, op] of Object.entries<Json>(byMethod))
      if (MUTATING.has(m.toUpperCase()) && Array.isArray(op.security))
        ops.push({ method: m.toUpperCase(), path: p, op });
  }
}, 180_000);

describe('audit: every mutating operation of the OpenAPI document', () => {
  it('every mutating operation has an entry (audited, not audited, or refused only), and no entry is stale', () => {
    const labels = new Set(ops.map(label));
    const missing = [...labels].filter((l) => !TABLE[l] && !NOT_AUDITED[l] && !REFUSED_ONLY[l]);
    expect(missing, 'add an entry to TABLE (or NOT_AUDITED for a route that says audit: false)').toEqual([]);
    const stale = [...Object.keys(TABLE), ...Object.keys(NOT_AUDITED), ...Object.keys(REFUSED_ONLY)].filter(
      (l) => !labels.has(l),
    );
    expect(stale).toEqual([]);
  });

  it('each audited operation leaves exactly one record with its request id, organization, actor, action, target, and no secret', async () => {
    const wrong: string[] = [];
    for (const o of ops) {
      const entry = TABLE[label(o)];
      if (!entry) continue;
      try {
        const e = await entry(w);
        const key = e.as === 'sys' ? adminKey() : e.as === 'biz' ? w.biz.adminKey : w.t.adminKey;
        const rid = unique('req-audit');
        const res = await send(o, e, key, rid);
        if (res.status < 200 || res.status >= 300) {
          wrong.push(`${label(o)}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
          continue;
        }
        const body = (res.body ?? {}) as Json;
        const records = await recordsOf(rid);
        if (records.length !== 1) {
          wrong.push(`${label(o)}: ${records.length} records`);
          continue;
        }
        const r = records[0] as Json;
        const org =
          typeof e.org === 'function'
            ? e.org(body)
            : (e.org ?? (e.as === 'sys' ? w.sysOrg : e.as === 'biz' ? w.biz.organization_id : w.t.organization_id));
        const target = typeof e.target === 'function' ? e.target(body) : e.target;
        const got = {
          organization_id: r.organization_id,
          action: r.action,
          target: r.target,
          level: r.actor.level,
          outcome: r.outcome,
        };
        const want = {
          organization_id: org,
          action: e.action,
          target: { type: target.type, id: String(target.id) },
          level: e.as === 'sys' ? 'system_admin' : 'admin',
          outcome: 'succeeded',
        };
        if (JSON.stringify(got) !== JSON.stringify(want))
          wrong.push(`${label(o)}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
        if (e.as !== 'sys' && r.actor.key_id !== (e.as === 'biz' ? w.bizKeyId : w.keyId))
          wrong.push(`${label(o)}: actor ${r.actor.key_id}`);
        const secrets = [key, ...(typeof e.secrets === 'function' ? e.secrets(body) : (e.secrets ?? []))].filter(
          Boolean,
        );
        const text = JSON.stringify(r);
        for (const s of secrets)
          if (text.includes(s)) wrong.push(`${label(o)}: a secret (${s.slice(0, 6)}…) is in the record`);
        if (res.headers.get('x-request-id') !== rid)
          wrong.push(`${label(o)}: answered with request id ${res.headers.get('x-request-id')}`);
      } catch (err) {
        wrong.push(`${label(o)}: ${(err as Error).message}`);
      }
    }
    expect(wrong).toEqual([]);
  }, 600_000);

  it('operations that change nothing (audit: false) and refusals leave no record', async () => {
    const wrong: string[] = [];
    for (const o of ops) {
      const l = label(o);
      const make = NOT_AUDITED[l] ?? REFUSED_ONLY[l]?.call;
      if (!make) continue;
      try {
        const c = await make(w);
        const rid = unique('req-noaudit');
        const res = await send(o, c, w.t.adminKey, rid);
        if (res.status >= 500) wrong.push(`${l}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
        if (REFUSED_ONLY[l] && res.status < 400) wrong.push(`${l}: expected a refusal, got ${res.status}`);
        const records = await recordsOf(rid);
        if (records.length) wrong.push(`${l}: ${records.length} records`);
      } catch (err) {
        wrong.push(`${l}: ${(err as Error).message}`);
      }
    }
    expect(wrong).toEqual([]);
  }, 600_000);

  it('an idempotent replay adds no second record', async () => {
    const rid1 = unique('req-replay');
    const rid2 = unique('req-replay');
    const headers = (rid: string) => ({ 'x-request-id': rid, 'idempotency-key': `audit-${rid1}` });
    const first = await call('POST', `/loyalty/award-points/${w.u.user_id}`, {
      key: w.t.adminKey,
      json: { action_type: 'purchase' },
      headers: headers(rid1),
    });
    const again = await call('POST', `/loyalty/award-points/${w.u.user_id}`, {
      key: w.t.adminKey,
      json: { action_type: 'purchase' },
      headers: headers(rid2),
    });
    expect([first.status, again.status, again.body.duplicate]).toEqual([200, 200, true]);
    expect((await recordsOf(rid1)).length).toBe(1);
    expect((await recordsOf(rid2)).length).toBe(0);
    // The upload routes' Idempotency-Key (edge/idempotency.ts): a replay answers with Idempotent-Replayed.
    const scan = (rid: string) =>
      call('POST', '/api/ticket-scan/loyalty/ticket-scan', {
        key: w.t.adminKey,
        json: { user_id: w.u.user_id, venue_id: String(w.s.venue.id), image: png64 },
        headers: { 'x-request-id': rid, 'idempotency-key': `scan-${rid1}` },
      });
    const png64 = await receipt();
    const s1 = await scan(`${rid1}-scan`);
    const s2 = await scan(`${rid2}-scan`);
    expect([s1.status, s2.status, s2.headers.get('idempotent-replayed')]).toEqual([200, 200, 'true']);
    expect((await recordsOf(`${rid1}-scan`)).length).toBe(1);
    expect((await recordsOf(`${rid2}-scan`)).length).toBe(0);
  }, 120_000);

  it("the tenant's chain verifies after all of it", async () => {
    for (const t of [w.t, w.biz])
      expect(
        (await call('GET', `/api/audit/verify?organization_id=${t.organization_id}`, { key: t.adminKey })).body,
      ).toMatchObject({ ok: true, first_break: null });
  });
});
