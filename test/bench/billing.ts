/**
 * Billing part of `npm run bench`: payment webhook acknowledgements per second when every event
 * arrives several times at once (the dedupe path), and a check that each purchase was credited once.
 */
import Stripe from 'stripe';

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

export async function benchBilling(base: string, adminKey: string, webhookSecret: string): Promise<string[]> {
  const headers = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };
  const post = async (p: string, body: unknown) => {
    const res = await fetch(`${base}${p}`, { method: 'POST', headers, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as any };
  };
  await post('/api/billing/packages', {
    id: 'bench-pack',
    name: 'Bench',
    tokens: 1000,
    price: 1,
    currency: 'USD',
    validity_days: 30,
  });
  const USERS = Number(process.env.BENCH_PURCHASES ?? 50);
  const COPIES = 4;
  const pending: Array<{ user: string; txn: string; pi: string }> = [];
  for (let i = 0; i < USERS; i += 1) {
    const user = `bench-buyer-${i}`;
    const res = await post('/api/billing/purchase-tokens', {
      user_id: user,
      package_id: 'bench-pack',
      payment_method: { type: 'card', token: 'pm_card_authenticationRequired' },
    });
    pending.push({ user, txn: res.body.transaction_id, pi: res.body.payment_intent_id });
  }
  const stripe = new Stripe('sk_test_unused');
  const requests = pending.flatMap((p, i) => {
    const payload = JSON.stringify({
      id: `evt_bench_${Date.now()}_${i}`,
      object: 'event',
      type: 'payment_intent.succeeded',
      livemode: false,
      created: Math.floor(Date.now() / 1000),
      data: { object: { id: p.pi, object: 'payment_intent', metadata: { transaction_id: p.txn } } },
    });
    const signature = stripe.webhooks.generateTestHeaderString({ payload, secret: webhookSecret });
    return Array.from({ length: COPIES }, () => ({ payload, signature }));
  });
  const latency: number[] = [];
  let next = 0;
  let failures = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 20 }, async () => {
      while (next < requests.length) {
        const r = requests[next++];
        const t = performance.now();
        const res = await fetch(`${base}/api/billing/webhooks/payment`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'payment-signature': r.signature },
          body: r.payload,
        });
        await res.arrayBuffer();
        latency.push(performance.now() - t);
        if (res.status !== 200) failures += 1;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  // acknowledged once started: give the runs a moment to credit
  await new Promise((r) => setTimeout(r, 5000));
  let wrong = 0;
  for (const p of pending) {
    const usage = (await (await fetch(`${base}/api/billing/usage/${p.user}`, { headers })).json()) as any;
    if (usage.usage.remaining_tokens !== 1000) wrong += 1;
  }
  return [
    `Payment webhooks: ${requests.length} signed payment_intent.succeeded deliveries (${USERS} events × ${COPIES} copies, 20 at a time): ${(requests.length / seconds).toFixed(0)} acknowledgements/s, p50 ${pct(latency, 50).toFixed(0)} ms, p99 ${pct(latency, 99).toFixed(0)} ms, ${failures} non-200; purchases credited exactly once: ${USERS - wrong}/${USERS}`,
  ];
}
