/**
 * Outgoing webhooks: a JSON POST signed like Stripe's (`t=<unix>,v1=<HMAC-SHA256 of "t.body">`),
 * only to https URLs on public addresses unless WEBHOOK_ALLOW_PRIVATE is set (then http and
 * private addresses are allowed too: development and tests).
 */
import { createHmac } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import net from 'node:net';
import { config } from '../config';
import { PlatformError } from '../errors';

const V4_BLOCKED: [string, number][] = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
];
const v4 = (ip: string) => ip.split('.').reduce((n, o) => (n << 8) + Number(o), 0) >>> 0;

export function isPrivateAddress(ip: string): boolean {
  if (net.isIPv4(ip)) return V4_BLOCKED.some(([base, bits]) => (v4(ip) >>> (32 - bits)) === (v4(base) >>> (32 - bits)));
  const lower = ip.toLowerCase();
  if (lower.startsWith('::ffff:')) return isPrivateAddress(lower.slice(7));
  return lower === '::' || lower === '::1' || /^f[cd]/.test(lower) || /^fe[89ab]/.test(lower) || lower.startsWith('ff');
}

/** Refuses a target the platform must not call (422, the reason named). */
export async function checkWebhookTarget(raw: unknown, allowPrivate = config().WEBHOOK_ALLOW_PRIVATE): Promise<URL> {
  if (typeof raw !== 'string') throw new PlatformError(422, 'metadata.url: a webhook needs metadata.url', 'metadata.url');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new PlatformError(422, 'metadata.url: not a URL', 'metadata.url');
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) throw new PlatformError(422, 'metadata.url: must be an https URL', 'metadata.url');
  if (url.username || url.password) throw new PlatformError(422, 'metadata.url: must not carry credentials', 'metadata.url');
  if (!allowPrivate) {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const addresses = net.isIP(host) ? [host] : (await lookup(host, { all: true }).catch(() => [])).map((a) => a.address);
    if (!addresses.length) throw new PlatformError(422, `metadata.url: ${host} does not resolve`, 'metadata.url');
    if (addresses.some(isPrivateAddress)) throw new PlatformError(422, `metadata.url: ${host} is a private or local address`, 'metadata.url');
  }
  return url;
}

export function signature(secret: string, body: string, at = Math.floor(Date.now() / 1000)): string {
  return `t=${at},v1=${createHmac('sha256', secret).update(`${at}.${body}`).digest('hex')}`;
}

/**
 * One delivery attempt. A 2xx is success; 4xx (but 408/429) is the receiver refusing: final;
 * anything else (5xx, timeouts, network) throws a plain Error so the activity is retried.
 */
export async function deliverWebhook(target: unknown, payload: Record<string, unknown>, delivery_id: string): Promise<{ status: number }> {
  const secret = config().WEBHOOK_SIGNING_SECRET;
  if (!secret) throw new PlatformError(501, 'webhook signing secret not configured (WEBHOOK_SIGNING_SECRET)');
  const url = await checkWebhookTarget(target);
  const body = JSON.stringify(payload);
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-platform-signature': signature(secret, body), 'x-platform-delivery': delivery_id },
    body,
    redirect: 'manual',
    signal: AbortSignal.timeout(10_000),
  });
  await res.arrayBuffer().catch(() => undefined);
  if (res.ok) return { status: res.status };
  if (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429) {
    throw new PlatformError(422, `webhook receiver answered ${res.status}`);
  }
  throw new Error(`webhook receiver answered ${res.status}`);
}
