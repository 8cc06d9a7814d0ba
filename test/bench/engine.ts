/**
 * The loyalty engine's cost: the same award by amount, one after another, in three organizations
 * measured in turn (so the machine's noise falls on all): one with no tiers and no campaigns;
 * one with 5 tiers and 50 active campaigns, 10 of which apply to the award (bonuses, multipliers,
 * points per amount) while 40 miss on action, amount, day, tier or category; and the same with
 * 3 of the 10 on a budget and 2 limited per member, which each award takes from (one round of
 * conditional updates). The p50 differences are the engine's cost per award.
 */
const AWARDS = 1500;
const USERS = 200;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};

interface Org {
  send: (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;
}

async function organization(base: string, adminKey: string, name: string): Promise<Org> {
  const call = (key: string) => async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const out = { status: res.status, body: text ? JSON.parse(text) : null };
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
    return out;
  };
  const root = call(adminKey);
  const org = (await root('POST', '/api/organizations', { name: `${name} ${Date.now()}`, tier: 'enterprise' })).body;
  const organization_id: string = org.organization.organization_id;
  const key = (
    await root('POST', '/generate_api_key', { user_id: `${name}-admin`, organization_id, permissions: ['admin'] })
  ).body.api_key as string;
  const send = call(key);
  await send('PUT', '/loyalty/rules', {
    earning: { purchase: { rate: '1', currency: 'EUR', rounding: 'down', categories: { wine: '2' } } },
  });
  return { send };
}

const started = new Date(Date.now() - 3_600_000).toISOString();

/** 5 tiers and 50 active campaigns: 10 apply to `purchase` of 20-60 EUR for a bronze member, 40 miss. */
async function engineSetup(o: Org, takes: boolean): Promise<void> {
  await o.send('PUT', '/loyalty/tiers', {
    window: { type: 'rolling_months', months: 12 },
    tiers: [
      { tier_id: 'bronze', name: 'Bronze', threshold: 0, multiplier: '1' },
      { tier_id: 'silver', name: 'Silver', threshold: 1_000_000, multiplier: '1.25' },
      { tier_id: 'gold', name: 'Gold', threshold: 2_000_000, multiplier: '1.5' },
      { tier_id: 'platinum', name: 'Platinum', threshold: 5_000_000, multiplier: '2' },
      { tier_id: 'diamond', name: 'Diamond', threshold: 10_000_000, multiplier: '3' },
    ],
  });
  const day = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'][(new Date().getUTCDay() + 6) % 7];
  const otherDays = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].filter((d) => d !== day);
  const campaigns: Record<string, unknown>[] = [];
  for (let i = 0; i < 10; i += 1)
    campaigns.push(
      i % 4 === 0
        ? { effect: { type: 'bonus', points: 2 }, ...(takes && { budget: 100_000_000 }) }
        : i % 4 === 1
          ? { effect: { type: 'multiplier', factor: '1.1' } }
          : i % 4 === 2
            ? { effect: { type: 'bonus', points: 1 }, ...(takes && { limit_per_member: { max: 1000, per: 'day' } }) }
            : { effect: { type: 'per_amount', rate: '0.1' }, conditions: { action_types: ['purchase'] } },
    );
  const misses: Record<string, unknown>[] = [
    { conditions: { action_types: ['review'] } },
    { conditions: { action_types: ['purchase'], min_amount: '1000' } },
    { schedule: { days: otherDays } },
    { conditions: { tiers: ['gold'] } },
    { conditions: { categories: ['tobacco'] } },
  ];
  for (let i = 0; i < 40; i += 1)
    campaigns.push({ effect: { type: 'bonus', points: 5 }, ...misses[i % misses.length] });
  for (const [i, c] of campaigns.entries()) {
    const made = await o.send('POST', '/loyalty/campaigns', { name: `Bench ${i}`, starts_at: started, ...c });
    await o.send('PATCH', `/loyalty/campaigns/${made.body.campaign_id}`, { status: 'active' });
  }
}

export async function benchEngine(base: string, adminKey: string): Promise<string[]> {
  const orgs = {
    none: await organization(base, adminKey, 'Engine bench plain'),
    evaluated: await organization(base, adminKey, 'Engine bench campaigns'),
    taking: await organization(base, adminKey, 'Engine bench budgets'),
  };
  await engineSetup(orgs.evaluated, false);
  await engineSetup(orgs.taking, true);
  const names = Object.keys(orgs) as (keyof typeof orgs)[];
  const lat = Object.fromEntries(names.map((n) => [n, [] as number[]])) as Record<keyof typeof orgs, number[]>;
  const applied = Object.fromEntries(names.map((n) => [n, 0])) as Record<keyof typeof orgs, number>;
  const one = async (o: Org, i: number) => {
    const cents = 2000 + ((i * 7919) % 4000);
    const t = performance.now();
    const r = await o.send('POST', `/loyalty/award-points/engine-${i % USERS}`, {
      action_type: 'purchase',
      amount_minor: cents,
      currency: 'EUR',
      items: [{ category: 'wine', amount_minor: 500 }],
    });
    return { ms: performance.now() - t, body: r.body };
  };
  // Warm-up: creates the users everywhere and fills the caches.
  for (let i = 0; i < USERS; i += 1) for (const n of names) await one(orgs[n], i);
  for (let i = 0; i < AWARDS; i += 1) {
    // Turn by turn, the order rotated each time.
    for (let k = 0; k < names.length; k += 1) {
      const n = names[(i + k) % names.length];
      const r = await one(orgs[n], i);
      lat[n].push(r.ms);
      applied[n] += r.body.breakdown.campaigns.length;
    }
  }
  const p50 = (n: keyof typeof orgs) => pct(lat[n], 50);
  const line = (n: keyof typeof orgs) =>
    `p50 ${p50(n).toFixed(2)} ms, p99 ${pct(lat[n], 99).toFixed(2)} ms (${(applied[n] / AWARDS).toFixed(1)} campaigns applied per award)`;
  return [
    `Loyalty engine: ${AWARDS} awards by amount in each organization, one at a time, turn by turn`,
    `  no tiers, no campaigns: ${line('none')}`,
    `  5 tiers, 50 active campaigns: ${line('evaluated')}`,
    `  the same, 3 applying on budgets and 2 limited per member: ${line('taking')}`,
    `engine: evaluation +${(p50('evaluated') - p50('none')).toFixed(2)} ms p50 per award (${(p50('evaluated') / p50('none')).toFixed(2)}×); with budgets and limits taken +${(p50('taking') - p50('none')).toFixed(2)} ms (${(p50('taking') / p50('none')).toFixed(2)}×)`,
  ];
}
