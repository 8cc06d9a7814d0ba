/**
 * The provider's gift catalogue: synced by an admin over HTTP on the sandbox (created, then
 * unchanged; a basic key and another organization's admin refused, nothing created), changes and
 * withdrawals applied in process on the suite's database (a withdrawn gift kept, marked
 * unavailable and refused at redemption), the scheduled sync for the organizations that ask for
 * it, and the Reloadly adapter against a local fake HTTP server of Reloadly's endpoints (balance,
 * paged gift-card products FIXED and RANGE, operator auto-detection).
 */
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

import { httpProvider, SANDBOX_PRODUCTS } from '../../activities/adapters/gift-provider.ts';
import { parseEnv, setConfig } from '../../activities/core/config.ts';
import { applyCatalogue } from '../../activities/gifts/catalogue.ts';
import { checkFunding } from '../../activities/gifts/funding.ts';
import { syncScheduledCatalogues } from '../../activities/gifts/index.ts';
import { basicUser, call, newTenant, type Tenant } from '../helpers/api.ts';
import { jsonServer } from '../helpers/json-server.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();

const ok = <T extends { status: number; body: unknown }>(what: string, res: T, status = 200): T => {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(status);
  return res;
};

const giftsOf = async (t: Tenant) =>
  ok('gifts', await call('GET', '/api/gifts/gifts?limit=100', { key: t.adminKey })).body.gifts as Record<string, any>[];
const sync = (t: Tenant, json: object = { points_per_unit: 100 }, key = t.adminKey) =>
  call('POST', '/api/gifts/catalogue/sync', { key, json });

describe('gift catalogue sync', () => {
  it('an admin imports the sandbox catalogue: products become gifts with denominations; again: unchanged; a basic key and another organization admin: 403, nothing created', async () => {
    const t = await newTenant();
    const ana = await basicUser(t);
    const other = await newTenant();
    for (const key of [ana.key, other.adminKey]) {
      const res = await sync(t, { organization_id: t.organization_id, points_per_unit: 100 }, key);
      expect(res.status).toBe(403);
      expect(res.body.success).toBe(false);
    }
    expect(await giftsOf(t)).toHaveLength(0);
    const noPrice = await sync(t, {});
    expect(noPrice.status).toBe(400);
    expect(noPrice.body.error).toMatch(/^points_per_unit: required/);
    const badPrice = await sync(t, { points_per_unit: -3 });
    expect(badPrice.status).toBe(400);
    expect(badPrice.body.error).toMatch(/^points_per_unit/);
    expect(await giftsOf(t)).toHaveLength(0);

    const first = ok('sync', await sync(t));
    expect(first.body).toEqual({
      success: true,
      provider: 'sandbox',
      products: SANDBOX_PRODUCTS.length,
      created: 2,
      updated: 0,
      withdrawn: 0,
      unchanged: 0,
      skipped: 0,
    });
    const gifts = await giftsOf(t);
    const books = gifts.find((g) => g.provider_product_id === 'sbx-1001')!;
    const music = gifts.find((g) => g.provider_product_id === 'sbx-1002')!;
    expect(books).toMatchObject({
      gift_type: 'electronic_pins',
      gift_name: 'Sandbox Books 10 USD',
      denominations: { type: 'fixed', currency: 'USD', amounts: [10, 25, 50] },
      points_per_unit: 100,
      provider_currency: 'USD',
      provider_rate: 1,
      available: true,
    });
    // 100 points per USD of cost, at 0.05 USD per MXN: 5 points per MXN.
    expect(music).toMatchObject({ denominations: { type: 'range', min: 100, max: 2000 }, points_per_unit: 5 });
    const again = ok('sync again', await sync(t));
    expect(again.body).toMatchObject({ created: 0, updated: 0, withdrawn: 0, unchanged: 2 });
    expect(await giftsOf(t)).toHaveLength(2);
    const audit = ok('audit', await call('GET', '/api/audit?action=gift_catalogue.sync', { key: t.adminKey }));
    expect(audit.body.records).toHaveLength(2);
    const settings = ok('settings', await call('GET', '/api/gifts/settings', { key: t.adminKey }));
    expect(settings.body.last_sync).toMatchObject({ created: 0, unchanged: 2 });
    // Another organization saw none of it.
    expect(await giftsOf(other)).toHaveLength(0);

    // An imported range gift: an amount outside it is 400 naming amount; within it, priced in points.
    ok('rules', await call('PUT', '/loyalty/rules', { key: t.adminKey, json: { actions: { grant: 5000 } } }));
    ok(
      'grant',
      await call('POST', `/loyalty/award-points/${ana.user_id}`, { key: t.adminKey, json: { action_type: 'grant' } }),
    );
    const out = await call('POST', `/api/gifts/gifts/${music.id}/redeem`, {
      key: ana.key,
      json: { user_id: ana.user_id, amount: 99 },
    });
    expect(out.status).toBe(400);
    expect(out.body.error).toMatch(/^amount: 99 is outside/);
    const r = ok(
      'redeem',
      await call('POST', `/api/gifts/gifts/${music.id}/redeem`, {
        key: ana.key,
        json: { user_id: ana.user_id, amount: 200 },
      }),
    );
    expect(r.body.redemption).toMatchObject({ status: 'completed', points_spent: 1000, amount: 200, currency: 'MXN' });
    // Paid from the sandbox account in its currency: 200 MXN at 0.05 is 10 USD.
    expect((await call('GET', '/api/gifts/provider/balance', { key: t.adminKey })).body.balance).toBe(999_990);
  });

  it('changed products are updated and withdrawn ones marked unavailable, never deleted: past redemptions keep them, new ones are refused 409', async () => {
    const t = await newTenant();
    ok('sync', await sync(t));
    const [books, music] = SANDBOX_PRODUCTS.map((p) => structuredClone(p));
    ok('rules', await call('PUT', '/loyalty/rules', { key: t.adminKey, json: { actions: { grant: 5000 } } }));
    const ana = await basicUser(t);
    ok(
      'grant',
      await call('POST', `/loyalty/award-points/${ana.user_id}`, { key: t.adminKey, json: { action_type: 'grant' } }),
    );
    const musicGift = (await giftsOf(t)).find((g) => g.provider_product_id === music.product_id)!;
    const past = ok(
      'redeem',
      await call('POST', `/api/gifts/gifts/${musicGift.id}/redeem`, {
        key: ana.key,
        json: { user_id: ana.user_id, amount: 100 },
      }),
    );

    books.name = 'Sandbox Books (new name)';
    books.denominations = { type: 'fixed', amounts: [10, 20] };
    const counts = await applyCatalogue(t.organization_id, 'sandbox', [books], 100);
    expect(counts).toEqual({ created: 0, updated: 1, withdrawn: 1, unchanged: 0, skipped: 0 });
    const gifts = await giftsOf(t);
    expect(gifts).toHaveLength(2);
    expect(gifts.find((g) => g.provider_product_id === books.product_id)).toMatchObject({
      gift_name: 'Sandbox Books (new name)',
      denominations: { amounts: [10, 20] },
      available: true,
    });
    expect(gifts.find((g) => g.id === musicGift.id)).toMatchObject({ available: false });
    const refused = await call('POST', `/api/gifts/gifts/${musicGift.id}/redeem`, {
      key: ana.key,
      json: { user_id: ana.user_id, amount: 100 },
    });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatch(/withdrawn by the gift provider/);
    const kept = ok('past', await call('GET', `/api/gifts/redemptions/${past.body.redemption.id}`, { key: ana.key }));
    expect(kept.body.redemption).toMatchObject({ gift_id: musicGift.id, status: 'completed' });

    // Withdrawn twice counts once; back in the catalogue, available again; unpriceable: skipped.
    expect(await applyCatalogue(t.organization_id, 'sandbox', [books], 100)).toMatchObject({
      withdrawn: 0,
      unchanged: 1,
    });
    const back = await applyCatalogue(
      t.organization_id,
      'sandbox',
      [books, music, { ...music, product_id: 'sbx-9', rate: null, sender_currency: 'EUR' }],
      100,
    );
    expect(back).toEqual({ created: 0, updated: 1, withdrawn: 0, unchanged: 1, skipped: 1 });
    expect((await giftsOf(t)).find((g) => g.id === musicGift.id)).toMatchObject({ available: true });
  });

  it('the scheduled sync imports the catalogue of the organizations whose settings ask for it, and only theirs', async () => {
    const asked = await newTenant();
    const notAsked = await newTenant();
    ok(
      'settings',
      await call('PUT', '/api/gifts/settings', {
        key: asked.adminKey,
        json: { low_balance_threshold: null, catalogue_sync: { scheduled: true, points_per_unit: 10 } },
      }),
    );
    const run = await syncScheduledCatalogues();
    expect(run.organizations).toBeGreaterThanOrEqual(1);
    expect(run.failed).toBe(0);
    expect((await giftsOf(asked)).map((g) => g.provider_product_id).sort()).toEqual(['sbx-1001', 'sbx-1002']);
    expect(await giftsOf(notAsked)).toHaveLength(0);
  });
});

describe('the Reloadly adapter against a local fake HTTP server of Reloadly', () => {
  const seen: string[] = [];
  const account = { balance: 1234.5 };
  const products = [
    {
      productId: 5,
      productName: 'Amazon US',
      denominationType: 'FIXED',
      recipientCurrencyCode: 'USD',
      senderCurrencyCode: 'EUR',
      fixedRecipientDenominations: [25, 10, 10, 50],
      fixedRecipientToSenderDenominationsMap: { '10.0': 9.2 },
      logoUrls: ['https://cdn.example.com/amazon.png'],
      brand: { brandId: 2, brandName: 'Amazon' },
      country: { isoName: 'US', name: 'United States' },
    },
    {
      productId: 6,
      productName: 'Netflix MX',
      denominationType: 'RANGE',
      recipientCurrencyCode: 'MXN',
      senderCurrencyCode: 'EUR',
      minRecipientDenomination: 150,
      maxRecipientDenomination: 3000,
      recipientCurrencyToSenderCurrencyExchangeRate: 0.046,
      logoUrls: [],
      brand: { brandName: 'Netflix' },
      country: { isoName: 'MX' },
    },
    { productId: 7, productName: 'Broken', denominationType: 'RANGE', recipientCurrencyCode: 'USD' },
  ];
  const server = jsonServer(({ req, url, body, send }) => {
    seen.push(`${req.method} ${url.pathname}${url.search}`);
    if (url.pathname === '/oauth/token')
      return body.client_id === 'id' ? send(200, { access_token: 'tok', expires_in: 3600 }) : send(401, {});
    if (req.headers.authorization !== 'Bearer tok') return send(401, { message: 'no token' });
    if (url.pathname === '/accounts/balance')
      return send(200, {
        balance: account.balance,
        currencyCode: 'EUR',
        currencyName: 'Euro',
        updatedAt: '2026-11-28',
      });
    if (url.pathname === '/products') {
      const page = Number(url.searchParams.get('page'));
      // Two pages of the three products: the adapter must read both.
      const content = page === 1 ? products.slice(0, 2) : page === 2 ? products.slice(2) : [];
      return send(200, { content, totalPages: 2, number: page - 1, last: page >= 2 });
    }
    const detect = /^\/operators\/auto-detect\/phone\/([^/]+)\/countries\/([A-Z]{2})$/.exec(url.pathname);
    if (detect) {
      const phone = decodeURIComponent(detect[1]);
      if (phone.endsWith('0000')) return send(404, { errorCode: 'COULD_NOT_AUTO_DETECT_OPERATOR' });
      return send(200, { operatorId: 341, name: 'Telcel Mexico', countryCode: detect[2] });
    }
    send(404, { message: 'no such route' });
  });
  let base: string;
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));
  const provider = () =>
    httpProvider({ url: base, auth_url: `${base}/oauth/token`, client_id: 'id', client_secret: 's' });

  it('fake Reloadly server: balance from GET /accounts/balance, every page of GET /products (FIXED and RANGE, unusable products left out), operator from auto-detect (404: not detected)', async () => {
    const p = provider();
    expect(await p.balance('ignored')).toEqual({ balance: 1234.5, currency: 'EUR' });
    const catalogue = await p.catalogue();
    expect(catalogue).toEqual([
      {
        product_id: '5',
        name: 'Amazon US',
        brand: 'Amazon',
        country: 'US',
        logo_url: 'https://cdn.example.com/amazon.png',
        currency: 'USD',
        denominations: { type: 'fixed', amounts: [10, 25, 50] },
        sender_currency: 'EUR',
        rate: 0.92,
      },
      {
        product_id: '6',
        name: 'Netflix MX',
        brand: 'Netflix',
        country: 'MX',
        logo_url: null,
        currency: 'MXN',
        denominations: { type: 'range', min: 150, max: 3000 },
        sender_currency: 'EUR',
        rate: 0.046,
      },
    ]);
    expect(seen.filter((s) => s.startsWith('GET /products'))).toEqual([
      'GET /products?page=1&size=200',
      'GET /products?page=2&size=200',
    ]);
    expect(await p.detectOperator('+525512345678', 'MX')).toEqual({ operator_id: '341', name: 'Telcel Mexico' });
    expect(await p.detectOperator('+525512340000', 'MX')).toBeNull();
    expect(seen).toContain('GET /operators/auto-detect/phone/%2B525512345678/countries/MX');
    // One token for all of it.
    expect(seen.filter((s) => s === 'POST /oauth/token')).toHaveLength(1);
  });

  it('fake Reloadly server: the funding check refuses a cost over the balance (409), lets a cached figure through only when it covers the cost, and reads again before refusing on a cached figure', async () => {
    const env = { ...process.env, ...inject('platformEnv') };
    const reloadly = {
      GIFT_PROVIDER: 'reloadly',
      GIFT_PROVIDER_URL: base,
      GIFT_PROVIDER_AUTH_URL: `${base}/oauth/token`,
      GIFT_PROVIDER_CLIENT_ID: 'id',
      GIFT_PROVIDER_CLIENT_SECRET: 's',
      GIFT_BALANCE_CACHE_SECONDS: '600',
    };
    setConfig(parseEnv({ ...env, ...reloadly }));
    const reads = () => seen.filter((x) => x === 'GET /accounts/balance').length;
    try {
      const t = await newTenant();
      const org = t.organization_id;
      account.balance = 1234.5;
      const before = reads();
      await expect(checkFunding(org, { amount: 2000, currency: 'EUR' })).rejects.toMatchObject({ kind: 'conflict' });
      await checkFunding(org, { amount: 1000, currency: 'EUR' }); // cached: 234.5 left after this one
      expect(reads() - before).toBeGreaterThanOrEqual(1);
      // The provider was funded meanwhile: the cached 234.5 looks short, so it is read again, not refused.
      account.balance = 5000;
      const r = reads();
      await checkFunding(org, { amount: 500, currency: 'EUR' });
      expect(reads()).toBe(r + 1);
      // Another currency than the account's is not judged here (the provider's refusal is the net).
      await checkFunding(org, { amount: 1e9, currency: 'USD' });
      // Drained at the provider while the cache says 4500: let through on the cache, as documented.
      account.balance = 0;
      await checkFunding(org, { amount: 100, currency: 'EUR' });
      await expect(checkFunding(org, { amount: 4500, currency: 'EUR' })).rejects.toMatchObject({ kind: 'conflict' });
    } finally {
      setConfig(parseEnv(env));
    }
  });

  it('fake Reloadly server: a failing balance or catalogue is an upstream error (502), not a zero balance or an empty catalogue', async () => {
    const broken = httpProvider({
      url: `${base}/nowhere`,
      auth_url: `${base}/oauth/token`,
      client_id: 'id',
      client_secret: 's',
    });
    await expect(broken.balance('x')).rejects.toMatchObject({ kind: 'upstream_failed' });
    await expect(broken.catalogue()).rejects.toMatchObject({ kind: 'upstream_failed' });
  });
});
