/**
 * Outgoing webhooks: the URL check (https and public addresses unless WEBHOOK_ALLOW_PRIVATE is
 * set: then http and private addresses are allowed too, for development and tests), the name's
 * lookup, the POST to the checked addresses, and scheduled webhooks' signature, like Stripe's
 * (`t=<unix>,v1=<HMAC-SHA256 of "t.body">`) with the organization's secrets the caller gives.
 */
import { createHmac } from 'node:crypto';
import { Resolver as DnsResolver } from 'node:dns/promises';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net, { type LookupFunction } from 'node:net';

import { busy, PlatformError } from '../core/errors.ts';
import { webhooksSettings } from './settings.ts';

const V4_BLOCKED: [string, number][] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];
const v4 = (ip: string) => ip.split('.').reduce((n, o) => (n << 8) + Number(o), 0) >>> 0;
const v4Blocked = (n: number) => V4_BLOCKED.some(([base, bits]) => n >>> (32 - bits) === v4(base) >>> (32 - bits));

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
  return (
    (g[0] & 0xfe00) === 0xfc00 || (g[0] & 0xffc0) === 0xfe80 || (g[0] & 0xffc0) === 0xfec0 || (g[0] & 0xff00) === 0xff00
  );
}

export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

/** How the platform's own resolver looks a webhook's name up (tests point it at their own name server). */
export interface LookupOptions {
  /** name servers (`ip` or `ip:port`); default: the system's (/etc/resolv.conf) */
  servers?: string[];
  /** the whole lookup's deadline, its wait for a slot included (ms) */
  timeout_ms?: number;
  /** lookups in flight at once in this process */
  max_concurrent?: number;
  /** lookups that may wait for a slot; one more is refused at once (503) */
  max_waiting?: number;
  /** the hosts file, read for the names it lists (c-ares does not read it) */
  hosts_file?: string;
}

const LOOKUP_TIMEOUT_MS = 5000;
const LOOKUP_DEFAULTS = {
  timeout_ms: LOOKUP_TIMEOUT_MS,
  max_concurrent: 16,
  max_waiting: 64,
  hosts_file: '/etc/hosts',
};
/** Once one family answered, how long the other may still take. */
const OTHER_FAMILY_GRACE_MS = 1000;

/** The lookup ran out of time (its wait for a slot included): the name server did not answer. */
class LookupTimeout extends Error {
  constructor(host: string, ms: number) {
    super(`${host}: no answer from the name server within ${ms / 1000} s`);
    this.name = 'LookupTimeout';
  }
}

/** A bound on lookups at once: a slot, a short queue, and a refusal beyond it. */
class Slots {
  private used = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(
    private readonly max: number,
    private readonly maxWaiting: number,
  ) {}

  /** A slot before `deadline` (its release), or null when the deadline passed first; throws 503 when the queue is full. */
  async take(deadline: number): Promise<(() => void) | null> {
    if (this.used < this.max) return this.hold();
    if (this.waiting.length >= this.maxWaiting) {
      throw busy('Too many webhook address lookups at once; try again shortly', 5);
    }
    return new Promise((resolve) => {
      const turn = () => {
        clearTimeout(timer);
        resolve(this.hold());
      };
      const timer = setTimeout(
        () => {
          const i = this.waiting.indexOf(turn);
          if (i >= 0) this.waiting.splice(i, 1);
          resolve(null);
        },
        Math.max(0, deadline - Date.now()),
      );
      this.waiting.push(turn);
    });
  }

  private hold(): () => void {
    this.used += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used -= 1;
      this.waiting.shift()?.();
    };
  }
}

let hostsCache:
  { file: string; read_at: number; names: Map<string, { address: string; family: number }[]> } | undefined;

/** The hosts file's names and their addresses, read at most every 5 s. */
async function hostsEntries(file: string): Promise<Map<string, { address: string; family: number }[]>> {
  if (hostsCache?.file === file && Date.now() - hostsCache.read_at < 5000) return hostsCache.names;
  const names = new Map<string, { address: string; family: number }[]>();
  const text = await readFile(file, 'utf8').catch(() => '');
  for (const line of text.split('\n')) {
    const [address, ...aliases] = line.replace(/#.*/, '').trim().split(/\s+/);
    const family = net.isIP(address ?? '');
    if (!family) continue;
    for (const name of aliases) {
      const key = name.toLowerCase();
      const list = names.get(key) ?? [];
      if (!list.some((a) => a.address === address)) list.push({ address, family });
      names.set(key, list);
    }
  }
  hostsCache = { file, read_at: Date.now(), names };
  return names;
}

/**
 * The platform's resolver of webhook names. c-ares (`dns.promises.Resolver`: resolve4 and
 * resolve6) asks the name servers itself, off libuv's thread pool, so a slow name server holds
 * no thread that file I/O, zip packing, hashing or an upload needs (`dns.lookup`, getaddrinfo,
 * runs on that pool and a timeout does not free its thread). Each lookup has its own channel,
 * cancelled at its deadline; at most `max_concurrent` run at once in the process, `max_waiting`
 * more wait within their deadline, and another is refused at once (503). `localhost` and the
 * names the hosts file lists answer from there (c-ares reads neither); the address check applies
 * to them like to any answer.
 */
export function webhookResolver(options: LookupOptions = {}): Resolver {
  const o = { ...LOOKUP_DEFAULTS, ...options };
  const slots = new Slots(o.max_concurrent, o.max_waiting);
  return async (rawHost) => {
    const host = rawHost.toLowerCase().replace(/\.$/, '');
    if (host === 'localhost' || host.endsWith('.localhost'))
      return [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ];
    const listed = (await hostsEntries(o.hosts_file)).get(host);
    if (listed?.length) return listed;
    const deadline = Date.now() + o.timeout_ms;
    const release = await slots.take(deadline);
    if (!release) throw new LookupTimeout(host, o.timeout_ms);
    // Its own channel: cancel() ends this lookup's queries and no other's. c-ares' own timeout
    // covers a lost datagram (a second try); the deadline below ends the lookup whatever it does.
    const budget = Math.max(1, deadline - Date.now());
    const channel = new DnsResolver({ timeout: Math.max(250, Math.floor(budget / 2)), tries: 2 });
    if (o.servers) channel.setServers(o.servers);
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    const cancelAt = (ms: number) => {
      clearTimeout(timer);
      timer = setTimeout(
        () => {
          timedOut = true;
          channel.cancel();
        },
        Math.max(0, ms),
      );
    };
    cancelAt(budget);
    try {
      const asked = [channel.resolve4(host), channel.resolve6(host)].map((p, i) =>
        p.then((found) => {
          // One family answered: the other gets a short grace, not the whole deadline.
          if (found.length) cancelAt(Math.min(deadline - Date.now(), OTHER_FAMILY_GRACE_MS));
          return found.map((address) => ({ address, family: i === 0 ? 4 : 6 }));
        }),
      );
      const settled = await Promise.allSettled(asked);
      const addresses = settled.flatMap((s) => (s.status === 'fulfilled' ? s.value : []));
      if (!addresses.length && timedOut) throw new LookupTimeout(host, o.timeout_ms);
      return addresses;
    } finally {
      clearTimeout(timer);
      release();
    }
  };
}

let platformResolver: Resolver | undefined;
/** The process's resolver (one bound for the whole process), made on first use. */
const systemResolver: Resolver = (host) => (platformResolver ??= webhookResolver())(host);

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
export async function resolveWebhookTarget(
  raw: unknown,
  allowPrivate = webhooksSettings().WEBHOOK_ALLOW_PRIVATE,
  resolve: Resolver = systemResolver,
  field = 'metadata.url',
): Promise<WebhookTarget> {
  const refuse = (why: string) => new PlatformError('invalid', `${field}: ${why}`, field);
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
  let addresses: WebhookTarget['addresses'] = family ? [{ address: host, family }] : [];
  if (!family) {
    // A name server that never answers must not hold the caller (an endpoint's save, an attempt)
    // for long: the platform's resolver ends at its deadline; this bounds any other one too.
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>(
      (_, reject) =>
        (timer = setTimeout(() => reject(new LookupTimeout(host, LOOKUP_TIMEOUT_MS)), LOOKUP_TIMEOUT_MS + 500)),
    );
    try {
      addresses = await Promise.race([resolve(host), late]);
    } catch (err) {
      if (err instanceof PlatformError) throw err; // too many lookups at once (503): not the URL's fault
      if (err instanceof LookupTimeout)
        throw refuse(`${host} does not resolve (${err.message.slice(host.length + 2)})`);
      addresses = [];
    } finally {
      clearTimeout(timer);
    }
  }
  if (!addresses.length) throw refuse(`${host} does not resolve`);
  if (!allowPrivate && addresses.some((a) => isPrivateAddress(a.address)))
    throw refuse(`${host} is a private or local address`);
  return { url, addresses };
}

/** Refuses a target the platform must not call (422, the reason named after `field`). */
export async function checkWebhookTarget(
  raw: unknown,
  allowPrivate = webhooksSettings().WEBHOOK_ALLOW_PRIVATE,
  resolve?: Resolver,
  field?: string,
): Promise<URL> {
  return (await resolveWebhookTarget(raw, allowPrivate, resolve, field)).url;
}

/** A `lookup` for the socket that answers only the checked addresses. */
function pinnedLookup(addresses: WebhookTarget['addresses']): LookupFunction {
  return (_host, options, callback) => {
    const wanted =
      options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
    if (!wanted.length)
      return callback(
        Object.assign(new Error('no checked address of the requested family'), { code: 'ENOTFOUND' }),
        '',
        0,
      );
    if (options.all) return (callback as unknown as (e: null, a: typeof wanted) => void)(null, wanted);
    callback(null, wanted[0].address, wanted[0].family);
  };
}

/**
 * `t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, the key being the secret's text; several secrets
 * (a rotation's grace) give one `v1=` each, the current one first (Stripe's libraries accept any).
 */
export function signature(
  secrets: string | readonly string[],
  body: string,
  at = Math.floor(Date.now() / 1000),
): string {
  const list = typeof secrets === 'string' ? [secrets] : secrets;
  return [
    `t=${at}`,
    ...list.map((secret) => `v1=${createHmac('sha256', secret).update(`${at}.${body}`).digest('hex')}`),
  ].join(',');
}

/**
 * One POST of `body` to the checked target: the status it answered and how long it took, whatever
 * the status; a network failure or the timeout throws. Redirects are not followed (a 3xx is an
 * answer like any other). The socket connects to the addresses the check resolved; the Host
 * header and TLS server name (certificate check included) stay those of the URL.
 */
export async function postJson(
  target: WebhookTarget,
  body: string,
  headers: Record<string, string>,
  timeout_ms = 10_000,
): Promise<{ status: number; duration_ms: number }> {
  const { url, addresses } = target;
  const started = performance.now();
  const signal = AbortSignal.timeout(timeout_ms);
  const send = (fresh: boolean) =>
    new Promise<number>((done, fail) => {
      const req = (url.protocol === 'https:' ? https : http).request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
        lookup: pinnedLookup(addresses),
        agent: fresh ? false : agentFor(url, addresses),
        signal,
      });
      let answered = false;
      req.on('response', (res) => {
        answered = true;
        res.resume();
        res.on('end', () => done(res.statusCode ?? 0));
        res.on('error', fail);
      });
      req.on('error', (err: NodeJS.ErrnoException) =>
        // A kept connection the receiver closed just as it was reused, before any answer: once
        // more on a new one, as Node's documentation advises (the same webhook-id, should the
        // receiver have seen the first).
        req.reusedSocket && err.code === 'ECONNRESET' && !answered && !fresh ? send(true).then(done, fail) : fail(err),
      );
      req.end(body);
    });
  const status = await send(false);
  return { status, duration_ms: Math.round(performance.now() - started) };
}

/**
 * Connections kept open between attempts, one agent per URL origin and checked addresses: a
 * socket is reused only for the same origin resolved to the same addresses (a name that resolves
 * elsewhere now gets new connections, to addresses checked again). Idle sockets close after 4 s,
 * before a receiver's usual keep-alive timeout (5 s in Node) closes them under a request; no cap
 * on sockets per agent, so endpoints on one host never wait for each other (each endpoint's actor
 * bounds its own sends). The least recently used of MAX_AGENTS destinations is closed.
 */
const MAX_AGENTS = 256;
const agents = new Map<string, http.Agent>();
function agentFor(url: URL, addresses: WebhookTarget['addresses']): http.Agent {
  const key = `${url.protocol}//${url.host}|${addresses
    .map((a) => a.address)
    .sort()
    .join(',')}`;
  const known = agents.get(key);
  if (known) {
    agents.delete(key);
    agents.set(key, known);
    return known;
  }
  const options = { keepAlive: true, maxFreeSockets: 16, timeout: 4000, scheduling: 'lifo' as const };
  const agent = url.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
  agents.set(key, agent);
  if (agents.size > MAX_AGENTS) {
    const [oldest, old] = agents.entries().next().value!;
    agents.delete(oldest);
    // Its idle sockets close now; those in use finish their request and close once idle (4 s).
    for (const list of Object.values(old.freeSockets)) for (const socket of list ?? []) socket.destroy();
  }
  return agent;
}

/**
 * One delivery attempt of a scheduled event's webhook, signed with `secrets` (its organization's:
 * the current one and a rotated one in its grace). A 2xx is success; 4xx (but 408/429) is the
 * receiver refusing: final; anything else (5xx, timeouts, network) throws a plain Error so the
 * activity is retried.
 */
export async function deliverWebhook(
  target: unknown,
  payload: Record<string, unknown>,
  delivery_id: string,
  secrets: readonly string[],
  resolve?: Resolver,
): Promise<{ status: number }> {
  if (!secrets.length) throw new Error('a webhook delivery needs its signing secret');
  const checked = await resolveWebhookTarget(target, undefined, resolve);
  const body = JSON.stringify(payload);
  const { status } = await postJson(checked, body, {
    'x-platform-signature': signature(secrets, body),
    'x-platform-delivery': delivery_id,
  });
  if (status >= 200 && status < 300) return { status };
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) {
    throw new PlatformError('invalid', `webhook receiver answered ${status}`);
  }
  throw new Error(`webhook receiver answered ${status}`);
}
