/**
 * Outgoing events against hostile organizations: receivers that never answer hold only their own
 * endpoints' sends, never another organization's deliveries, and test pings are rationed.
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
  it("four organizations' receivers that never answer hold only their own endpoints: a healthy one's events still arrive at once", async () => {
    const attackers = await Promise.all([1, 2, 3, 4].map(() => newTenant()));
    const victim = await newTenant();
    const tarpits = attackers.map(() => unique('/tarpit'));
    const victimPath = unique('/victim');
    for (const [i, a] of attackers.entries()) {
      rx.plan(
        tarpits[i],
        Array.from({ length: 5000 }, () => 'hang' as const),
      );
      await addEndpoint(a, rx, tarpits[i]);
    }
    const good = await addEndpoint(victim, rx, victimPath);

    // Each attacker: 40 awards (one admin key, within its rate limit), each an event whose
    // attempt holds a send for the whole 10 s timeout, then is retried.
    const awards = await Promise.all(
      attackers.flatMap((a, k) =>
        Array.from({ length: 40 }, (_, i) =>
          call('POST', `/loyalty/award-points/${unique('u')}`, {
            key: a.adminKey,
            json: { action_type: 'purchase' },
            headers: { 'idempotency-key': `a-${k}-${i}` },
          }),
        ),
      ),
    );
    expect(awards.every((a) => a.status === 200)).toBe(true);
    await until(
      'every tarpit holding attempts',
      async () => Math.min(...tarpits.map((t) => rx.received(t).length)),
      (n) => n >= 8,
      30_000,
      100,
    );

    // The healthy organization: a ping and five awards' events, each on its way at once.
    const t0 = Date.now();
    expect((await call('POST', `/api/webhooks/endpoints/${good.id}/test`, { key: victim.adminKey })).status).toBe(202);
    for (let i = 0; i < 5; i += 1)
      await call('POST', `/loyalty/award-points/${unique('v')}`, {
        key: victim.adminKey,
        json: { action_type: 'purchase' },
      });
    await receivedAt(rx, victimPath, 6, 20_000);
    const latency = Date.now() - t0;
    console.log(
      `fairness: the healthy organization's 6 events arrived ${latency} ms after the first, beside 4 hanging receivers`,
    );
    // Each attacker's endpoint holds at most its own sends at once (8 per endpoint and process).
    await new Promise((r) => setTimeout(r, 2000));
    for (const t of tarpits)
      expect(rx.received(t).length).toBeLessThanOrEqual(8 * (Number(process.env.WORKER_COUNT ?? 1) + 1));
    // Held behind a hung send, a delivery would wait out its 10 s timeout; it went around them
    // (on a loaded 2-core machine in 1-3 s).
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
