/** A key's credits: one spent per request, atomically; refused with 429 when none is left; refilled lazily. */
import { describe, expect, it } from 'vitest';

import { basicUser, call, newTenant, type Tenant } from '../helpers/api.ts';
import { useSuiteClients } from '../helpers/runtime.ts';

const suite = useSuiteClients();

async function keyWithCredits(t: Tenant, credits: object) {
  const u = await basicUser(t);
  const key_id = (await call('GET', `/list_api_keys/${u.user_id}`, { key: t.adminKey })).body.api_keys[0]
    .key_id as string;
  const res = await call('PATCH', `/api/keys/${key_id}`, { key: t.adminKey, json: { credits } });
  expect(res.status).toBe(200);
  return { ...u, key_id, set: res.body };
}

const use = (u: { key: string; user_id: string }) => call('GET', `/api/users/${u.user_id}`, { key: u.key });

describe('key credits', () => {
  it('spends one per request, says what remains, then refuses with 429 no_credits and counts it', async () => {
    const t = await newTenant();
    const u = await keyWithCredits(t, { remaining: 2 });
    expect(u.set.credits).toEqual({ remaining: 2, refill: null });
    const first = await use(u);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-credits-remaining')).toBe('1');
    expect((await use(u)).headers.get('x-credits-remaining')).toBe('0');
    const refused = await use(u);
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toContain('no credits left (no_credits)');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    const listedKey = (await call('GET', `/list_api_keys/${u.user_id}`, { key: t.adminKey })).body.api_keys[0];
    expect(listedKey.credits).toEqual({ remaining: 0, refill: null });
    const usage = (await call('GET', `/api/keys/${u.key_id}/usage?days=1`, { key: t.adminKey })).body;
    expect(usage.totals).toMatchObject({ success: 2, no_credits: 1 });
  });

  it('a key a metered basic key makes for itself spends the same credits, so minting is no way out', async () => {
    const t = await newTenant();
    const u = await keyWithCredits(t, { remaining: 3 });
    const minted = await call('POST', '/generate_api_key', { key: u.key, json: { user_id: u.user_id } });
    expect(minted.status).toBe(200);
    expect(minted.headers.get('x-credits-remaining')).toBe('2');
    const child = { key: minted.body.api_key as string, user_id: u.user_id };
    expect((await use(child)).headers.get('x-credits-remaining')).toBe('1');
    expect((await use(u)).headers.get('x-credits-remaining')).toBe('0');
    const refused = await use(child);
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toContain('no_credits');
  });

  it('lets exactly as many concurrent requests pass as there are credits', async () => {
    const t = await newTenant();
    const one = await keyWithCredits(t, { remaining: 1 });
    const pair = await Promise.all([use(one), use(one)]);
    expect(pair.map((r) => r.status).sort()).toEqual([200, 429]);
    const five = await keyWithCredits(t, { remaining: 5 });
    const burst = await Promise.all(Array.from({ length: 12 }, () => use(five)));
    expect(burst.filter((r) => r.status === 200)).toHaveLength(5);
    expect(burst.filter((r) => r.status === 429)).toHaveLength(7);
    const doc = await suite.db.collection('api_key_credits').findOne({ _id: five.key_id as never });
    expect(doc!.remaining).toBe(0);
  });

  it('refills to its amount at the next day once due, one refill for concurrent requests', async () => {
    const t = await newTenant();
    const u = await keyWithCredits(t, { remaining: 0, refill: { amount: 3, interval: 'daily' } });
    const nextDay = new Date();
    nextDay.setUTCHours(24, 0, 0, 0);
    expect(u.set.credits).toEqual({
      remaining: 0,
      refill: { amount: 3, interval: 'daily', next_refill_at: nextDay.toISOString() },
    });
    const refused = await use(u);
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toContain(`refilled to 3 at ${nextDay.toISOString()}`);
    // As if the last refill were yesterday's.
    await suite.db
      .collection('api_key_credits')
      .updateOne({ _id: u.key_id as never }, { $set: { refilled_at: new Date(Date.now() - 86_400_000 - 1000) } });
    const burst = await Promise.all(Array.from({ length: 5 }, () => use(u)));
    expect(burst.filter((r) => r.status === 200)).toHaveLength(3);
    expect((await use(u)).status).toBe(429);
  });

  it('null removes the credits: the key is unlimited again; a key never given credits spends none', async () => {
    const t = await newTenant();
    const u = await keyWithCredits(t, { remaining: 0 });
    expect((await use(u)).status).toBe(429);
    const res = await call('PATCH', `/api/keys/${u.key_id}`, { key: t.adminKey, json: { credits: null } });
    expect(res.body.credits).toBeNull();
    const ok = await use(u);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-credits-remaining')).toBeNull();
    expect(await suite.db.collection('api_key_credits').findOne({ _id: u.key_id as never })).toBeNull();
    const plain = await basicUser(t);
    expect((await use(plain)).headers.get('x-credits-remaining')).toBeNull();
  });
});
