/**
 * Outgoing events against a hostile organization: a receiver that never answers must not hold up
 * another organization's deliveries, and test pings are rationed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { call, newTenant, unique, until } from '../helpers/api.ts';
import { addEndpoint, receivedAt, type Receiver, startReceiver } from '../helpers/receiver.ts';

let rx: Receiver;

beforeAll(async () => {
  rx = await startReceiver();
});
afterAll(() => rx.close());

describe('events security', () => {
  it("one organization's receiver that never answers does not hold up another organization's deliveries", async () => {
    const attacker = await newTenant();
    const victim = await newTenant();
    const tarpit = unique('/tarpit');
    const victimPath = unique('/victim');
    rx.plan(
      tarpit,
      Array.from({ length: 5000 }, () => 'hang' as const),
    );
    await addEndpoint(attacker, rx, tarpit);
    const good = await addEndpoint(victim, rx, victimPath);

    // The attacker: 150 awards (one admin key, within its rate limit), each an event whose
    // attempt would hold a worker slot for the whole 10 s timeout, then be retried.
    const awards = await Promise.all(
      Array.from({ length: 150 }, (_, i) =>
        call('POST', `/loyalty/award-points/${unique('u')}`, {
          key: attacker.adminKey,
          json: { action_type: 'purchase' },
          headers: { 'idempotency-key': `a-${i}` },
        }),
      ),
    );
    expect(awards.every((a) => a.status === 200)).toBe(true);
    await until(
      'the tarpit holding attempts',
      async () => rx.received(tarpit).length,
      (n) => n >= 8,
      20_000,
      100,
    );

    const t0 = Date.now();
    expect((await call('POST', `/api/webhooks/endpoints/${good.id}/test`, { key: victim.adminKey })).status).toBe(202);
    await receivedAt(rx, victimPath, 1, 20_000);
    const latency = Date.now() - t0;
    // The attacker holds at most its share of attempts at once.
    await new Promise((r) => setTimeout(r, 2000));
    expect(rx.received(tarpit).length).toBeLessThanOrEqual(8 * (Number(process.env.WORKER_COUNT ?? 1) + 1));
    // Held behind a tarpit slot, the delivery would wait out a hung attempt's 10 s timeout; below
    // that it went around them (on a loaded 2-core machine it takes 1-6 s).
    expect(latency).toBeLessThan(9_000);
  }, 120_000);

  it('sends one test ping per endpoint every 10 s (429 with Retry-After otherwise)', async () => {
    const t = await newTenant();
    const ep = await addEndpoint(t, rx, unique('/pings'));
    const pings = await Promise.all(
      Array.from({ length: 20 }, () => call('POST', `/api/webhooks/endpoints/${ep.id}/test`, { key: t.adminKey })),
    );
    expect(pings.filter((p) => p.status === 202)).toHaveLength(1);
    const refused = pings.filter((p) => p.status === 429);
    expect(refused).toHaveLength(19);
    expect(refused[0].headers.get('retry-after')).toBe('10');
    expect((await call('GET', '/api/events?type=ping', { key: t.adminKey })).body.events).toHaveLength(1);
  });

  it('takes one manual retry of a delivery at a time (409 while one is due)', async () => {
    const t = await newTenant();
    const path = unique('/retry-once');
    const ep = await addEndpoint(t, rx, path);
    await call('POST', `/api/webhooks/endpoints/${ep.id}/test`, { key: t.adminKey });
    await receivedAt(rx, path, 1);
    const [d] = await until(
      'the ping delivered',
      async () =>
        (await call('GET', `/api/webhooks/deliveries?endpoint_id=${ep.id}`, { key: t.adminKey })).body.deliveries,
      (x) => x[0]?.status === 'succeeded',
      10_000,
    );
    rx.plan(path, ['hang']);
    const retries = await Promise.all(
      Array.from({ length: 10 }, () => call('POST', `/api/webhooks/deliveries/${d.id}/retry`, { key: t.adminKey })),
    );
    expect(retries.filter((r) => r.status === 202)).toHaveLength(1);
    expect(retries.filter((r) => r.status === 409)).toHaveLength(9);
  });
});
