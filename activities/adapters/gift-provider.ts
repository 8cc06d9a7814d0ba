/**
 * Gift fulfilment: the provider that actually delivers a redeemed gift (a mobile top-up, an
 * electronic PIN, a bill payment). Two providers with one interface:
 *
 * - `sandbox` (default): behaves like a real provider, offline. A top-up to a number ending in
 *   0000 is refused, one ending in 0001 stays PROCESSING for 30 s then succeeds, anything else
 *   succeeds; a PIN is derived from the order's id. Its transactions are documents (kept by the
 *   caller's store), so "processing for 30 s" is computed from their creation time and survives a
 *   worker restart, and a retried order finds its first transaction.
 * - `reloadly`: a Reloadly-style HTTP API. OAuth client credentials (the token is cached until
 *   shortly before it expires, and fetched again on a 401); every order carries
 *   `customIdentifier` = the redemption id, so a retried call never delivers twice: a retry first
 *   looks the transaction up by that identifier, and a "duplicate" answer is read as the existing
 *   transaction. PROCESSING answers are polled by the caller (check) until final.
 *
 * Both also answer the account's balance, the provider's gift-card catalogue and the operator a
 * phone number belongs to (docs/components/gifts.md#funding, #the-providers-catalogue).
 *
 * The engine imports no component: storage, secrets and settings come in as arguments.
 */
import { createHmac } from 'node:crypto';

import { upstreamFailed } from '../core/errors.ts';

type GiftKind = 'mobile_top-ups' | 'electronic_pins' | 'service_payments';

export interface GiftOrder {
  /** the redemption id, sent as the provider's customIdentifier */
  custom_identifier: string;
  kind: GiftKind;
  /** the operator, PIN supplier or biller */
  product: string;
  amount: number | null;
  country: string | null;
  phone_number?: string | null;
  account_reference?: string | null;
  /** the provider's product id (a gift imported from its catalogue) */
  product_id?: string | null;
  /** the sandbox account the order is paid from (the organization); Reloadly has one account */
  account?: string | null;
  /** what the order costs in the account's currency, when known: the sandbox spends it */
  cost?: { amount: number; currency: string } | null;
}

/** The provider account's funds, in its own currency. */
export interface ProviderBalance {
  balance: number;
  currency: string;
}

/** One gift card of the provider's catalogue, as the gifts component imports it. */
export interface ProviderProduct {
  product_id: string;
  name: string;
  brand: string | null;
  country: string | null;
  logo_url: string | null;
  /** the recipient's currency: the denominations' */
  currency: string;
  denominations: { type: 'fixed'; amounts: number[] } | { type: 'range'; min: number; max: number };
  /** the account's currency, and what one unit of `currency` costs in it (null: not told) */
  sender_currency: string | null;
  rate: number | null;
}

/** The operator the provider says a number belongs to. */
interface DetectedOperator {
  operator_id: string;
  name: string;
}

type Fulfilment =
  | { state: 'delivered'; transaction_id: string; pin: string | null }
  | { state: 'processing'; transaction_id: string }
  | { state: 'refused'; transaction_id: string | null; reason: string };

export interface GiftProvider {
  readonly name: 'sandbox' | 'reloadly';
  /** Places the order, once per custom_identifier; `retry`: an earlier attempt may have reached the provider. */
  order(o: GiftOrder, opts?: { retry?: boolean }): Promise<Fulfilment>;
  /**
   * The current state of an order: one that answered `processing`, or (an admin's review) one
   * whose transaction id is unknown (null: it is looked up by its customIdentifier; no such
   * order is an error, not a refusal, since the provider's records say nothing final).
   */
  check(o: GiftOrder, transaction_id: string | null): Promise<Fulfilment>;
  /** The account's balance (`account`: the sandbox's per-organization account; Reloadly has one). */
  balance(account: string): Promise<ProviderBalance>;
  /** The whole gift-card catalogue, every page. */
  catalogue(): Promise<ProviderProduct[]>;
  /** The operator of a mobile number (E.164) in a country; null when the provider cannot tell. */
  detectOperator(phone: string, country: string): Promise<DetectedOperator | null>;
}

/** A provider that cannot be reached or answers 5xx: the caller retries (the order is idempotent). */
const unavailable = (what: string) => upstreamFailed(`The gift provider failed: ${what}`);

// ---------------------------------------------------------------- sandbox

const SANDBOX_PROCESSING_MS = 30_000;

export interface SandboxTransaction {
  custom_identifier: string;
  transaction_id: string;
  rule: 'deliver' | 'refuse' | 'delay' | 'unfunded';
  kind: GiftKind;
  created_at: Date;
}

export interface SandboxTransactions {
  /** Stores tx unless a transaction with its custom_identifier exists; answers the stored one (`inserted`: this one). */
  once(tx: SandboxTransaction): Promise<SandboxTransaction & { inserted: boolean }>;
  get(custom_identifier: string): Promise<SandboxTransaction | null>;
}

/** The sandbox's accounts, one per organization, so tenants sharing a sandbox never drain each other. */
export interface SandboxAccounts {
  balance(account: string): Promise<ProviderBalance>;
  /** Takes `cost` from the account when it holds that much (one atomic write); false when it does not. */
  spend(account: string, cost: { amount: number; currency: string }): Promise<boolean>;
  /** Gives back what spend took (an order that turned out to be a retry). */
  refund(account: string, cost: { amount: number; currency: string }): Promise<void>;
}

/** The sandbox's gift-card catalogue: one fixed and one range product, so a sync has something to import. */
export const SANDBOX_PRODUCTS: readonly ProviderProduct[] = [
  {
    product_id: 'sbx-1001',
    name: 'Sandbox Books 10 USD',
    brand: 'Sandbox Books',
    country: 'US',
    logo_url: null,
    currency: 'USD',
    denominations: { type: 'fixed', amounts: [10, 25, 50] },
    sender_currency: 'USD',
    rate: 1,
  },
  {
    product_id: 'sbx-1002',
    name: 'Sandbox Music MXN',
    brand: 'Sandbox Music',
    country: 'MX',
    logo_url: null,
    currency: 'MXN',
    denominations: { type: 'range', min: 100, max: 2000 },
    sender_currency: 'USD',
    rate: 0.05,
  },
];

/** A number the sandbox detects as another operator's (as 0000 and 0001 have their own rules). */
const SANDBOX_OTHER_OPERATOR: DetectedOperator = { operator_id: 'sbx-other', name: 'Sandbox Other Mobile' };

function sandboxRule(o: GiftOrder): SandboxTransaction['rule'] {
  if (o.kind !== 'mobile_top-ups') return 'deliver';
  const phone = o.phone_number ?? '';
  if (phone.endsWith('0000')) return 'refuse';
  if (phone.endsWith('0001')) return 'delay';
  return 'deliver';
}

export function sandboxProvider(opts: {
  transactions: SandboxTransactions;
  accounts: SandboxAccounts;
  secret: string;
  now?: () => number;
}): GiftProvider {
  const now = opts.now ?? Date.now;
  const digest = (id: string) => createHmac('sha256', opts.secret).update(`sandbox-gift:${id}`).digest();
  // 16 digits in groups of four, the same for every read of the order.
  const pinOf = (id: string) =>
    Array.from(digest(id).subarray(0, 16), (b) => String(b % 10))
      .join('')
      .replace(/(\d{4})(?=\d)/g, '$1-');
  const outcome = (tx: SandboxTransaction): Fulfilment => {
    if (tx.rule === 'unfunded')
      return {
        state: 'refused',
        transaction_id: tx.transaction_id,
        reason: "The gift provider refused the order: the account's balance does not cover it",
      };
    if (tx.rule === 'refuse')
      return {
        state: 'refused',
        transaction_id: tx.transaction_id,
        reason:
          'The operator refused the top-up: the number cannot receive recharges (sandbox rule: numbers ending in 0000)',
      };
    if (tx.rule === 'delay' && now() - tx.created_at.getTime() < SANDBOX_PROCESSING_MS)
      return { state: 'processing', transaction_id: tx.transaction_id };
    return {
      state: 'delivered',
      transaction_id: tx.transaction_id,
      pin: tx.kind === 'electronic_pins' ? pinOf(tx.custom_identifier) : null,
    };
  };
  return {
    name: 'sandbox',
    async order(o) {
      const first = await opts.transactions.get(o.custom_identifier);
      if (first) return outcome(first);
      // Paid first, then recorded: when an order is found recorded meanwhile (a concurrent retry)
      // the payment goes back, so an order is paid once (a crash between the two loses sandbox money only).
      let rule = sandboxRule(o);
      const cost = o.account && o.cost && o.cost.amount > 0 && rule !== 'refuse' ? o.cost : null;
      let paid = false;
      if (cost) {
        const account = await opts.accounts.balance(o.account!);
        // Another currency: the sandbox does not convert, and does not charge.
        if (account.currency === cost.currency) {
          paid = await opts.accounts.spend(o.account!, cost);
          if (!paid) rule = 'unfunded';
        }
      }
      const tx = await opts.transactions.once({
        custom_identifier: o.custom_identifier,
        transaction_id: `sbx_${digest(o.custom_identifier).subarray(16, 28).toString('hex')}`,
        rule,
        kind: o.kind,
        created_at: new Date(now()),
      });
      if (paid && !tx.inserted) await opts.accounts.refund(o.account!, cost!);
      return outcome(tx);
    },
    async check(o) {
      const tx = await opts.transactions.get(o.custom_identifier);
      if (!tx) throw unavailable(`sandbox transaction ${o.custom_identifier} not found`);
      return outcome(tx);
    },
    balance: (account) => opts.accounts.balance(account),
    catalogue: async () => SANDBOX_PRODUCTS.map((p) => structuredClone(p)),
    async detectOperator(phone) {
      return phone.endsWith('0002') ? { ...SANDBOX_OTHER_OPERATOR } : null;
    },
  };
}

// ---------------------------------------------------------------- Reloadly-style HTTP API

export interface HttpProviderSettings {
  /** the API's base URL (GIFT_PROVIDER_URL) */
  url: string;
  /** the OAuth token endpoint (GIFT_PROVIDER_AUTH_URL) */
  auth_url: string;
  client_id: string;
  client_secret: string;
  timeout_ms?: number;
}

interface ProviderTx {
  transactionId?: string | number;
  id?: string | number;
  status?: string;
  customIdentifier?: string;
  errorMessage?: string;
  message?: string;
  pinCode?: string;
}

/**
 * What the provider's JSON may be (each field may be missing; every use checks it): a transaction,
 * a page of them (`content`), a wrapped one (`transaction`), an error, a list of cards.
 */
type ProviderAnswer =
  (ProviderTx & { content?: ProviderTx[]; transaction?: ProviderTx; errorCode?: string }) | ProviderTx[] | null;

/** The answer as one object (a list's first item), or an empty one. */
const single = (json: ProviderAnswer): ProviderTx & { errorCode?: string; transaction?: ProviderTx } =>
  (Array.isArray(json) ? json[0] : json) ?? {};

const PATHS: Record<GiftKind, string> = {
  'mobile_top-ups': '/topups',
  electronic_pins: '/orders',
  service_payments: '/pay',
};
const FINAL_OK = new Set(['SUCCESSFUL', 'SUCCESS', 'COMPLETED', 'DELIVERED']);
const FINAL_FAILED = new Set(['FAILED', 'REFUNDED', 'CANCELLED', 'CANCELED', 'REJECTED', 'DECLINED']);
const text = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim().slice(0, 300) : null);

/** Body of an order; numbers are sent in the provider's local currency of the gift. */
function orderBody(o: GiftOrder): Record<string, unknown> {
  const common = {
    customIdentifier: o.custom_identifier,
    countryCode: o.country,
    amount: o.amount,
    useLocalAmount: true,
  };
  if (o.kind === 'mobile_top-ups')
    return { ...common, operatorName: o.product, recipientPhone: { countryCode: o.country, number: o.phone_number } };
  if (o.kind === 'electronic_pins')
    return {
      ...common,
      ...(o.product_id ? { productId: Number(o.product_id) || o.product_id } : {}),
      productName: o.product,
      quantity: 1,
      unitPrice: o.amount,
    };
  return {
    ...common,
    billerName: o.product,
    subscriberAccountNumber: o.account_reference,
    referenceId: o.custom_identifier,
  };
}

/** A finite, non-negative number out of the provider's JSON (strings included), else null. */
const amountOf = (v: unknown): number | null => {
  const n = typeof v === 'string' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? n : null;
};
const codeOf = (v: unknown): string | null =>
  typeof v === 'string' && /^[A-Za-z]{3}$/.test(v.trim()) ? v.trim().toUpperCase() : null;

/** The catalogue is read a page at a time; past this many pages it is cut (and the sync says so by failing). */
const CATALOGUE_PAGE_SIZE = 200;
const CATALOGUE_MAX_PAGES = 100;

type ReloadlyProduct = Record<string, unknown> & {
  brand?: { brandName?: unknown };
  country?: { isoName?: unknown };
};

/**
 * A Reloadly gift card as a ProviderProduct; null when it cannot be offered (no id, no currency,
 * no usable denomination). FIXED: `fixedRecipientDenominations`; RANGE: the recipient's min and
 * max. The rate is `recipientCurrencyToSenderCurrencyExchangeRate`, else read off the fixed map.
 */
function productOf(p: ReloadlyProduct): ProviderProduct | null {
  const product_id = p.productId ?? p.id;
  const currency = codeOf(p.recipientCurrencyCode);
  if ((typeof product_id !== 'number' && typeof product_id !== 'string') || !currency) return null;
  const name = text(p.productName) ?? `Product ${product_id}`;
  let denominations: ProviderProduct['denominations'];
  if (String(p.denominationType).toUpperCase() === 'RANGE') {
    const min = amountOf(p.minRecipientDenomination);
    const max = amountOf(p.maxRecipientDenomination);
    if (min === null || max === null || min <= 0 || max < min) return null;
    denominations = { type: 'range', min, max };
  } else {
    const list = Array.isArray(p.fixedRecipientDenominations) ? p.fixedRecipientDenominations : [];
    const amounts = [...new Set(list.map(amountOf).filter((n): n is number => n !== null && n > 0))].sort(
      (a, b) => a - b,
    );
    if (!amounts.length) return null;
    denominations = { type: 'fixed', amounts };
  }
  let rate = amountOf(p.recipientCurrencyToSenderCurrencyExchangeRate);
  const map = p.fixedRecipientToSenderDenominationsMap;
  if (!rate && map && typeof map === 'object') {
    const [k, v] = Object.entries(map as Record<string, unknown>)[0] ?? [];
    const r = amountOf(k);
    const sd = amountOf(v);
    if (r && sd) rate = Math.round((sd / r) * 1e8) / 1e8; // no binary noise in a stored rate
  }
  const logos = Array.isArray(p.logoUrls) ? p.logoUrls : [];
  const logo = logos.find((u): u is string => typeof u === 'string' && /^https?:\/\//.test(u)) ?? null;
  return {
    product_id: String(product_id),
    name,
    brand: text(p.brand?.brandName),
    country: typeof p.country?.isoName === 'string' && /^[A-Z]{2}$/.test(p.country.isoName) ? p.country.isoName : null,
    logo_url: logo && logo.length <= 2000 ? logo : null,
    currency,
    denominations,
    sender_currency: codeOf(p.senderCurrencyCode),
    rate: rate || null,
  };
}

export function httpProvider(s: HttpProviderSettings): GiftProvider {
  const base = s.url.replace(/\/+$/, '');
  const timeout = s.timeout_ms ?? 15_000;
  let token: { value: string; expires_at: number } | undefined;

  async function fetchToken(): Promise<string> {
    let res: Response;
    try {
      res = await fetch(s.auth_url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({
          client_id: s.client_id,
          client_secret: s.client_secret,
          grant_type: 'client_credentials',
          audience: base,
        }),
        signal: AbortSignal.timeout(timeout),
      });
    } catch (err) {
      throw unavailable(`token request: ${(err as Error).message}`);
    }
    const body = (await res.json().catch(() => ({}))) as { access_token?: string; expires_in?: number };
    if (!res.ok || !body.access_token) throw unavailable(`token request answered HTTP ${res.status}`);
    // Renewed a minute before it expires, so a token never lapses in the middle of an order.
    const lifetime = Math.max(0, (Number(body.expires_in) || 3600) - 60) * 1000;
    token = { value: body.access_token, expires_at: Date.now() + lifetime };
    return body.access_token;
  }

  async function request(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
  ): Promise<{ status: number; json: ProviderAnswer }> {
    for (let attempt = 0; ; attempt += 1) {
      const bearer = token && token.expires_at > Date.now() ? token.value : await fetchToken();
      let res: Response;
      try {
        res = await fetch(`${base}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${bearer}`,
            accept: 'application/json',
            ...(body ? { 'content-type': 'application/json' } : {}),
          },
          body: body ? JSON.stringify(body) : undefined,
          signal: AbortSignal.timeout(timeout),
        });
      } catch (err) {
        throw unavailable(`${method} ${path}: ${(err as Error).message}`);
      }
      const json = (await res.json().catch(() => null)) as ProviderAnswer;
      if (res.status === 401 && attempt === 0) {
        token = undefined; // revoked or expired early: one new token, then the answer stands
        continue;
      }
      if (res.status >= 500 || res.status === 401 || res.status === 429)
        throw unavailable(`${method} ${path} answered HTTP ${res.status}`);
      return { status: res.status, json };
    }
  }

  async function lookup(custom_identifier: string): Promise<ProviderTx | null> {
    const { status, json } = await request(
      'GET',
      `/transactions?customIdentifier=${encodeURIComponent(custom_identifier)}`,
    );
    if (status === 404) return null;
    if (status >= 400) throw unavailable(`transaction lookup answered HTTP ${status}`);
    const list: ProviderTx[] = Array.isArray(json) ? json : (json?.content ?? []);
    return list.find((tx) => tx.customIdentifier === custom_identifier) ?? null;
  }

  async function fulfilment(o: GiftOrder, tx: ProviderTx): Promise<Fulfilment> {
    const transaction_id = String(tx.transactionId ?? tx.id ?? '');
    if (!transaction_id) throw unavailable('an answer without a transaction id');
    const status = String(tx.status ?? '').toUpperCase();
    if (FINAL_FAILED.has(status))
      return {
        state: 'refused',
        transaction_id,
        reason: text(tx.errorMessage) ?? text(tx.message) ?? `The provider answered ${status}`,
      };
    if (!FINAL_OK.has(status)) return { state: 'processing', transaction_id };
    if (o.kind !== 'electronic_pins') return { state: 'delivered', transaction_id, pin: null };
    let pin = text(tx.pinCode);
    if (!pin) {
      const cards = await request('GET', `/orders/transactions/${encodeURIComponent(transaction_id)}/cards`);
      if (cards.status >= 400)
        throw unavailable(`the PIN of transaction ${transaction_id} answered HTTP ${cards.status}`);
      pin = text(single(cards.json).pinCode);
      if (!pin) throw unavailable(`transaction ${transaction_id} has no PIN yet`);
    }
    return { state: 'delivered', transaction_id, pin };
  }

  return {
    name: 'reloadly',
    async order(o, opts) {
      if (opts?.retry) {
        const first = await lookup(o.custom_identifier);
        if (first) return fulfilment(o, first);
      }
      const { status, json } = await request('POST', PATHS[o.kind], orderBody(o));
      const answer = single(json);
      const code = String(answer.errorCode ?? '').toUpperCase();
      if (status === 409 || code.includes('DUPLICATE')) {
        const first = await lookup(o.custom_identifier);
        if (!first) throw unavailable(`a duplicate answer for ${o.custom_identifier} but no such transaction`);
        return fulfilment(o, first);
      }
      if (status >= 400)
        return {
          state: 'refused',
          transaction_id: null,
          reason:
            text(answer.message) ?? text(answer.errorMessage) ?? `The provider refused the order (HTTP ${status})`,
        };
      return fulfilment(o, answer);
    },
    async check(o, transaction_id) {
      if (transaction_id === null) {
        const found = await lookup(o.custom_identifier);
        if (!found) throw unavailable(`no order ${o.custom_identifier} found with the provider`);
        return fulfilment(o, found);
      }
      const { status, json } = await request('GET', `/transactions/${encodeURIComponent(transaction_id)}`);
      if (status >= 400) throw unavailable(`transaction ${transaction_id} answered HTTP ${status}`);
      const answer = single(json);
      return fulfilment(o, answer.transaction ?? answer);
    },
    async balance() {
      const { status, json } = await request('GET', '/accounts/balance');
      const body = (json ?? {}) as Record<string, unknown>;
      const balance = typeof body.balance === 'number' && Number.isFinite(body.balance) ? body.balance : null;
      const currency = codeOf(body.currencyCode);
      if (status >= 400 || balance === null || !currency)
        throw unavailable(`the account balance answered HTTP ${status} without a balance and currency`);
      return { balance, currency };
    },
    async catalogue() {
      const products: ProviderProduct[] = [];
      for (let page = 1; ; page += 1) {
        if (page > CATALOGUE_MAX_PAGES) throw unavailable(`the catalogue has more than ${CATALOGUE_MAX_PAGES} pages`);
        const { status, json } = await request('GET', `/products?page=${page}&size=${CATALOGUE_PAGE_SIZE}`);
        if (status >= 400) throw unavailable(`the catalogue's page ${page} answered HTTP ${status}`);
        const body = json as unknown as { content?: ReloadlyProduct[]; last?: boolean; totalPages?: number } | null;
        const items: ReloadlyProduct[] = Array.isArray(json) ? (json as ReloadlyProduct[]) : (body?.content ?? []);
        for (const item of items) {
          const product = productOf(item);
          if (product) products.push(product);
        }
        const last =
          Array.isArray(json) ||
          !items.length ||
          body?.last === true ||
          (typeof body?.totalPages === 'number' && page >= body.totalPages);
        if (last) return products;
      }
    },
    async detectOperator(phone, country) {
      const { status, json } = await request(
        'GET',
        `/operators/auto-detect/phone/${encodeURIComponent(phone)}/countries/${encodeURIComponent(country)}`,
      );
      if (status === 404) return null;
      if (status >= 400) throw unavailable(`operator detection answered HTTP ${status}`);
      const body = (json ?? {}) as Record<string, unknown>;
      const id = body.operatorId ?? body.id;
      if (typeof id !== 'number' && typeof id !== 'string') return null;
      return { operator_id: String(id), name: text(body.name) ?? String(id) };
    },
  };
}
