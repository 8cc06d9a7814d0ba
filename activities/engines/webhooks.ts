/**
 * Outgoing webhooks: a JSON POST signed like Stripe's (`t=<unix>,v1=<HMAC-SHA256 of "t.body">`),
 * only to https URLs on public addresses unless WEBHOOK_ALLOW_PRIVATE is set (then http and
 * private addresses are allowed too: development and tests).
 */
import { createHmac } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import net, { type LookupFunction } from 'node:net';
import { config } from '../core/config.ts';
import { PlatformError } from '../core/errors.ts';

const V4_BLOCKED: [string, number][] = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
];
const v4 = (ip: string) => ip.split('.').reduce((n, o) => (n << 8) + Number(o), 0) >>> 0;
const v4Blocked = (n: number) => V4_BLOCKED.some(([base, bits]) => (n >>> (32 - bits)) === (v4(base) >>> (32 - bits)));

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part included). */
function v6Groups(ip: string): number[] | undefined {
  let text = ip.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    if (!net.isIPv4(dotted[1])) return undefined;
    const n = v4(dotted[1]);
    text = `${text.slice(0, dotted.index)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head, tail, ...rest] = text.split('::');
  if (rest.length) return undefined;
  const parse = (part: string | undefined) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  const groups = tail === undefined ? left : [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

/**
 * Loopback, private, link-local, shared, documentation, multicast and reserved ranges, in IPv4
 * and IPv6, including every IPv6 form that carries an IPv4 address the network may route to it
 * (mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`).
 * Anything unparseable counts as private.
 */
export function isPrivateAddress(ip: string): boolean {
  if (net.isIPv4(ip)) return v4Blocked(v4(ip));
  if (!net.isIPv6(ip)) return true;
  const g = v6Groups(ip);
  if (!g) return true;
  const embedded = (hi: number, lo: number) => v4Blocked(((hi << 16) | lo) >>> 0);
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 6)) return true; // ::, ::1 and the deprecated IPv4-compatible ::a.b.c.d
  if (zeros(0, 5) && g[5] === 0xffff) return embedded(g[6], g[7]); // IPv4-mapped
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return embedded(g[6], g[7]); // ::ffff:0:a.b.c.d (SIIT)
  if (g[0] === 0x64 && g[1] === 0xff9b) return zeros(2, 6) ? embedded(g[6], g[7]) : true; // NAT64, and its local-use /48
  if (g[0] === 0x2002) return embedded(g[1], g[2]); // 6to4
  if (g[0] === 0x2001 && (g[1] === 0 || g[1] === 0xdb8)) return true; // Teredo (the IPv4 inside is obfuscated), documentation
  if (g[0] === 0x100 && zeros(1, 4)) return true; // discard-only
  return (g[0] & 0xfe00) === 0xfc00 || (g[0] & 0xffc0) === 0xfe80 || (g[0] & 0xffc0) === 0xfec0 || (g[0] & 0xff00) === 0xff00;
}

export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;
const systemResolver: Resolver = (host) => lookup(host, { all: true });

export interface WebhookTarget {
  url: URL;
  /** The addresses checked; the delivery connects to these and nothing else. */
  addresses: { address: string; family: number }[];
}

/**
 * Resolves the target once and checks every address it resolves to (422, the reason named). The
 * delivery connects to these very addresses: a second lookup could answer differently (DNS
 * rebinding) after the check.
 */
export async function resolveWebhookTarget(raw: unknown, allowPrivate = config().WEBHOOK_ALLOW_PRIVATE, resolve: Resolver = systemResolver, field = 'metadata.url'): Promise<WebhookTarget> {
  const refuse = (why: string) => new PlatformError(422, `${field}: ${why}`, field);
  if (typeof raw !== 'string') throw refuse(`a webhook needs ${field}`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('not a URL');
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) throw refuse('must be an https URL');
  if (url.username || url.password) throw refuse('must not carry credentials');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const family = net.isIP(host);
  // A name server that never answers must not hold the caller (an endpoint's save, an attempt) for long.
  const lookupTimeout = new Promise<[]>((r) => setTimeout(() => r([]), 5000).unref());
  const addresses = family ? [{ address: host, family }] : await Promise.race([resolve(host).catch(() => [] as []), lookupTimeout]);
  if (!addresses.length) throw refuse(`${host} does not resolve`);
  if (!allowPrivate && addresses.some((a) => isPrivateAddress(a.address))) throw refuse(`${host} is a private or local address`);
  return { url, addresses };
}

/** Refuses a target the platform must not call (422, the reason named after `field`). */
export async function checkWebhookTarget(raw: unknown, allowPrivate = config().WEBHOOK_ALLOW_PRIVATE, resolve?: Resolver, field?: string): Promise<URL> {
  return (await resolveWebhookTarget(raw, allowPrivate, resolve, field)).url;
}

/** A `lookup` for the socket that answers only the checked addresses. */
function pinnedLookup(addresses: WebhookTarget['addresses']): LookupFunction {
  return (_host, options, callback) => {
    const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
    if (!wanted.length) return callback(Object.assign(new Error('no checked address of the requested family'), { code: 'ENOTFOUND' }), '', 0);
    if (options.all) return (callback as unknown as (e: null, a: typeof wanted) => void)(null, wanted);
    callback(null, wanted[0].address, wanted[0].family);
  };
}

export function signature(secret: string, body: string, at = Math.floor(Date.now() / 1000)): string {
  return `t=${at},v1=${createHmac('sha256', secret).update(`${at}.${body}`).digest('hex')}`;
}

/**
 * One POST of `body` to the checked target: the status it answered and how long it took, whatever
 * the status; a network failure or the timeout throws. Redirects are not followed (a 3xx is an
 * answer like any other). The socket connects to the addresses the check resolved; the Host
 * header and TLS server name (certificate check included) stay those of the URL.
 */
export async function postJson(target: WebhookTarget, body: string, headers: Record<string, string>, timeout_ms = 10_000): Promise<{ status: number; duration_ms: number }> {
  const { url, addresses } = target;
  const started = performance.now();
  const status = await new Promise<number>((done, fail) => {
    const req = (url.protocol === 'https:' ? https : http).request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
      lookup: pinnedLookup(addresses),
      agent: false,
      signal: AbortSignal.timeout(timeout_ms),
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode ?? 0));
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end(body);
  });
  return { status, duration_ms: Math.round(performance.now() - started) };
}

/**
 * One delivery attempt of a scheduled event's webhook. A 2xx is success; 4xx (but 408/429) is the
 * receiver refusing: final; anything else (5xx, timeouts, network) throws a plain Error so the
 * activity is retried.
 */
export async function deliverWebhook(target: unknown, payload: Record<string, unknown>, delivery_id: string, resolve?: Resolver): Promise<{ status: number }> {
  const secret = config().WEBHOOK_SIGNING_SECRET;
  if (!secret) throw new PlatformError(501, 'webhook signing secret not configured (WEBHOOK_SIGNING_SECRET)');
  const checked = await resolveWebhookTarget(target, undefined, resolve);
  const body = JSON.stringify(payload);
  const { status } = await postJson(checked, body, { 'x-platform-signature': signature(secret, body), 'x-platform-delivery': delivery_id });
  if (status >= 200 && status < 300) return { status };
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) {
    throw new PlatformError(422, `webhook receiver answered ${status}`);
  }
  throw new Error(`webhook receiver answered ${status}`);
}
