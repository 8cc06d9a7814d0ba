/**
 * The failed-authentication limiter slows down key guessing from one address but never refuses a
 * valid key, even one this edge has never seen (behind a proxy every user shares the address).
 * The client address is the socket's unless TRUST_PROXY says how many proxies to trust; then it is
 * taken that many hops from the right of X-Forwarded-For. Each case runs on an edge of its own, so
 * its budget is spent only by the test.
 */
import { randomBytes } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { basicUser, newTenant, type Tenant } from '../helpers/api.ts';
import { startExtraEdge, stopEdges } from '../helpers/edge-process.ts';

const garbage = () => `pk_${randomBytes(32).toString('base64url')}`;

async function get(url: string, key: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}/api/users/me-${randomBytes(3).toString('hex')}`, {
    headers: { authorization: `Bearer ${key}`, ...headers },
  });
  await res.arrayBuffer();
  return { status: res.status, retryAfter: res.headers.get('retry-after') };
}

/** Forty well-formed unknown keys from one address: the last ones are 429 with Retry-After. */
async function spendBudget(url: string, headers: Record<string, string> = {}) {
  const answers = [];
  for (let i = 0; i < 40; i += 1) answers.push(await get(url, garbage(), headers));
  expect(
    answers.slice(0, 30).every((a) => a.status === 401),
    JSON.stringify(answers.slice(0, 30)),
  ).toBe(true);
  const last = answers.at(-1)!;
  expect(last.status).toBe(429);
  expect(Number(last.retryAfter)).toBeGreaterThan(0);
}

let tenant: Tenant;
beforeAll(async () => {
  tenant = await newTenant();
}, 60_000);
afterAll(() => stopEdges());

describe('failed authentications, client address from the socket (TRUST_PROXY unset)', () => {
  let url: string;
  beforeAll(async () => {
    url = await startExtraEdge({});
  }, 120_000);

  it('after 40 garbage keys, a valid key never read by this edge is still accepted; wrong keys stay 429', async () => {
    await spendBudget(url);
    const user = await basicUser(tenant); // made on the suite's edge: this edge has never read it
    const self = await fetch(`${url}/api/users/${user.user_id}`, { headers: { authorization: `Bearer ${user.key}` } });
    expect(self.status).toBe(200);
    // a fresh wrong key and an already refused one are both still limited
    expect((await get(url, garbage())).status).toBe(429);
    const again = garbage();
    expect((await get(url, again)).status).toBe(429);
    expect((await get(url, again)).status).toBe(429);
  }, 60_000);

  it('a spoofed X-Forwarded-For does not escape the limit', async () => {
    for (let i = 0; i < 5; i += 1) {
      const res = await get(url, garbage(), { 'x-forwarded-for': `203.0.113.${i + 1}` });
      expect(res.status).toBe(429);
    }
  });
});

describe('failed authentications behind one trusted proxy (TRUST_PROXY=1)', () => {
  let url: string;
  beforeAll(async () => {
    url = await startExtraEdge({ TRUST_PROXY: '1' });
  }, 120_000);

  it('counts forwarded client addresses apart, from the right of X-Forwarded-For', async () => {
    await spendBudget(url, { 'x-forwarded-for': '198.51.100.7' });
    // another client behind the proxy still gets 401, not 429
    expect((await get(url, garbage(), { 'x-forwarded-for': '198.51.100.8' })).status).toBe(401);
    // a client putting a fake address in front of what the proxy appended stays the same client
    expect((await get(url, garbage(), { 'x-forwarded-for': '192.0.2.1, 198.51.100.7' })).status).toBe(429);
    // and the limited client's valid key still works
    const user = await basicUser(tenant);
    const self = await fetch(`${url}/api/users/${user.user_id}`, {
      headers: { authorization: `Bearer ${user.key}`, 'x-forwarded-for': '198.51.100.7' },
    });
    expect(self.status).toBe(200);
  }, 60_000);
});
