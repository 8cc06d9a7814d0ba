/**
 * The points economy under load: 1,000 concurrent mixed operations (awards, redemptions through
 * the sandbox gift provider with some refusals, reversals, expiries) over 100 users, then the
 * ledger's invariants checked for every user from the stored entries:
 * - entries dense from seq 1, `balance_after` = the running sum of amounts, never below zero;
 * - every redemption ended `completed` with one hold and no refund, or `refunded` with one hold
 *   and one refund (a top-up to a number ending 0000 is always refused by the sandbox);
 * - at most one reversal per reversed operation and one expiry entry per credit;
 * - the balance the API answers equals the stored one, and its spendable points are never negative.
 * Expiries are written by the activity the daily maintenance run uses, with a clock two days
 * ahead, so credits written with a one-day expiry lapse during the run.
 */
import mongoose from 'mongoose';

import { parseEnv } from '../../activities/core/config.ts';
import { initRuntime } from '../../activities/core/runtime.ts';
import { expireCredit } from '../../activities/loyalty/expiry.ts';

const USERS = 100;
const OPERATIONS = 1000;
const CONCURRENCY = 50;

interface Ctx {
  base: string;
  adminKey: string;
  mongoUri: string;
  /** with 5 tiers, purchases earning by amount and budgeted, limited and exclusive campaigns active */
  engine?: boolean;
}

const TIERS = [
  { tier_id: 'bronze', name: 'Bronze', threshold: 0, multiplier: '1' },
  { tier_id: 'silver', name: 'Silver', threshold: 150, multiplier: '1.2' },
  { tier_id: 'gold', name: 'Gold', threshold: 250, multiplier: '1.5' },
  { tier_id: 'platinum', name: 'Platinum', threshold: 400, multiplier: '2' },
  { tier_id: 'diamond', name: 'Diamond', threshold: 800, multiplier: '3' },
];

/** Campaigns that race for budgets, limits and first place while the mix runs (the seeds' credits take shares too). */
const CAMPAIGNS = [
  { name: 'Budgeted bonus', effect: { type: 'bonus', points: 15 }, budget: 3000 },
  { name: 'Twice a day', effect: { type: 'bonus', points: 4 }, limit_per_member: { max: 2, per: 'day' } },
  {
    name: 'Double',
    effect: { type: 'multiplier', factor: '2' },
    conditions: { action_types: ['purchase'] },
    budget: 4000,
  },
  {
    name: 'Big basket',
    effect: { type: 'per_amount', rate: '0.5' },
    conditions: { action_types: ['purchase'], min_amount: '40' },
    stacking: 'exclusive',
    priority: 10,
    budget: 2500,
  },
  {
    name: 'Second purchase',
    effect: { type: 'bonus', points: 25 },
    conditions: { action_types: ['purchase'], nth: 2 },
  },
];

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};

export async function benchEconomy({ base, adminKey, mongoUri, engine = false }: Ctx): Promise<string[]> {
  const headers = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };
  const send = async (method: string, p: string, body?: unknown, extra: Record<string, string> = {}) => {
    const res = await fetch(`${base}${p}`, {
      method,
      headers: { ...headers, ...extra },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  // A fresh organization so earlier sections' users and rules don't mix in.
  const org = (await send('POST', '/api/organizations', { name: `Economy bench ${Date.now()}`, tier: 'enterprise' }))
    .body;
  const organization_id: string = org.organization.organization_id;
  const orgKey = (
    await send('POST', '/generate_api_key', { user_id: 'economy-admin', organization_id, permissions: ['admin'] })
  ).body.api_key as string;
  headers.authorization = `Bearer ${orgKey}`;

  const must = (r: { status: number; body: any }, what: string) => {
    if (r.status >= 300) throw new Error(`${what} answered ${r.status}: ${JSON.stringify(r.body)}`);
    return r.body;
  };
  must(
    await send('PUT', '/loyalty/rules', { actions: { purchase: 10, bonus: 60 }, points_expire_after_days: 1 }),
    'rules',
  );
  const campaignIds: string[] = [];
  if (engine) {
    must(
      await send('PUT', '/loyalty/rules', {
        earning: { purchase: { rate: '1', currency: 'EUR', rounding: 'nearest', categories: { wine: '2' } } },
      }),
      'earning rule',
    );
    must(
      await send('PUT', '/loyalty/tiers', { window: { type: 'rolling_months', months: 12 }, tiers: TIERS }),
      'tiers',
    );
    for (const c of CAMPAIGNS) {
      const made = must(
        await send('POST', '/loyalty/campaigns', { ...c, starts_at: new Date(Date.now() - 60_000).toISOString() }),
        'campaign',
      );
      must(await send('PATCH', `/loyalty/campaigns/${made.campaign_id}`, { status: 'active' }), 'campaign start');
      campaignIds.push(made.campaign_id);
    }
  }
  const users: string[] = [];
  const expiring: { user_id: string; entry_id: string }[] = [];
  for (let i = 0; i < USERS; i += 1) {
    for (let k = 0; k < 3; k += 1) {
      const a = must(
        await send('POST', `/loyalty/award-points/economy-${i}`, { action_type: 'bonus', operation_id: `seed-${k}` }),
        'seed award',
      );
      if (k === 0) users.push(a.user_id);
      expiring.push({ user_id: a.user_id, entry_id: a.entry_id });
    }
  }
  must(await send('PUT', '/loyalty/rules', { points_expire_after_days: null }), 'rules');
  const gift = must(
    await send('POST', '/api/gifts/gifts', {
      gift_name: 'Economy top-up',
      gift_type: 'mobile_top-ups',
      telco_supplier: 'Bench',
      recharge_amount: 5,
      points_value: 40,
    }),
    'gift',
  ).gift;

  // Expiries run in this process, through the same activity the maintenance run uses.
  await initRuntime(parseEnv({ ...process.env, MONGODB_URI: mongoUri }));
  const conn = await mongoose.createConnection(mongoUri).asPromise();
  const entries = conn.collection('ledger_entries');
  const seedOps = new Map<string, string>();
  for (const e of await entries.find({ organization_id, reason: 'action' }).toArray())
    seedOps.set(e.entry_id as string, e.operation_id as string);

  // The mix, shuffled deterministically: 45% awards, 30% redemptions (1 in 5 refused), 15% reversals, 10% expiries.
  const kinds: string[] = [];
  for (let i = 0; i < OPERATIONS; i += 1)
    kinds.push(i % 20 < 9 ? 'award' : i % 20 < 15 ? 'redeem' : i % 20 < 18 ? 'reverse' : 'expire');
  let seed = 42;
  const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  for (let i = kinds.length - 1; i > 0; i -= 1) {
    const j = rand(i + 1);
    [kinds[i], kinds[j]] = [kinds[j], kinds[i]];
  }
  const future = new Date(Date.now() + 2 * 86_400_000);
  const counts = new Map<string, number>();
  const statuses = new Map<string, number>();
  const latency: number[] = [];
  const processing: string[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < kinds.length) {
        const i = next++;
        const kind = kinds[i];
        const u = rand(USERS);
        const t = performance.now();
        let status: number;
        if (kind === 'award') {
          const amount = engine
            ? {
                amount_minor: 500 + rand(8000),
                currency: 'EUR',
                items: rand(2) ? [{ category: 'wine', amount: '3.50' }] : [],
              }
            : {};
          status = (await send('POST', `/loyalty/award-points/economy-${u}`, { action_type: 'purchase', ...amount }))
            .status;
        } else if (kind === 'redeem') {
          const phone = rand(5) === 0 ? '+15550000000' : `+1555${String(1_000_000 + i).slice(1)}2`;
          const r = await send(
            'POST',
            `/api/gifts/gifts/${gift.id}/redeem`,
            { user_id: users[u], phone_number: phone },
            { 'idempotency-key': `eco-${i}` },
          );
          status = r.status;
          if (status === 202) processing.push(r.body.redemption.id);
        } else if (kind === 'reverse') {
          const credit = expiring[rand(expiring.length)];
          status = (
            await send('POST', '/loyalty/reverse', { operation_id: seedOps.get(credit.entry_id), reason: 'bench' })
          ).status;
        } else {
          const credit = expiring[rand(expiring.length)];
          try {
            await expireCredit({ organization_id, user_id: credit.user_id, entry_id: credit.entry_id }, future);
            status = 200;
          } catch (err) {
            status = (err as { status?: number }).status ?? 500;
          }
        }
        latency.push(performance.now() - t);
        counts.set(kind, (counts.get(kind) ?? 0) + 1);
        statuses.set(`${kind} ${status}`, (statuses.get(`${kind} ${status}`) ?? 0) + 1);
      }
    }),
  );
  const wall = (performance.now() - t0) / 1000;

  // Redemptions still with the provider settle by themselves; wait for them.
  for (const id of processing) {
    for (let tries = 0; tries < 120; tries += 1) {
      const r = await send('GET', `/api/gifts/redemptions/${id}`);
      if (r.body?.redemption?.status !== 'processing') break;
      await new Promise((res) => setTimeout(res, 500));
    }
  }

  let violations = 0;
  const problems: string[] = [];
  const violation = (what: string) => {
    violations += 1;
    if (problems.length < 10) problems.push(what);
  };
  let total = 0;
  try {
    for (const user_id of users) {
      const rows = await entries.find({ organization_id, user_id }).sort({ seq: 1 }).toArray();
      total += rows.length;
      let sum = 0;
      const ops = new Set<string>();
      rows.forEach((r, i) => {
        sum += r.amount as number;
        if (r.seq !== i + 1) violation(`${user_id}: entry ${r.seq} at position ${i + 1}`);
        if (r.balance_after !== sum) violation(`${user_id}: balance_after ${r.balance_after} ≠ running sum ${sum}`);
        if (sum < 0) violation(`${user_id}: balance ${sum} after entry ${r.seq}`);
        if (ops.has(r.operation_id as string)) violation(`${user_id}: operation ${r.operation_id} applied twice`);
        ops.add(r.operation_id as string);
      });
      if (engine) {
        // earned_after: the running sum of earned credits less reversals (tiers read it).
        let earned = 0;
        for (const r of rows) {
          if (['action', 'referral', 'receipt', 'ticket_scan', 'reversal'].includes(r.reason as string))
            earned += r.amount as number;
          if (r.earned_after !== earned)
            violation(`${user_id}: earned_after ${r.earned_after} ≠ ${earned} at ${r.seq}`);
        }
        // No upgrade missed: the member's tier is at least the one their points earned reach.
        const standing = await conn
          .collection('loyalty_members')
          .findOne({ _id: `${organization_id}|${user_id}` as never });
        const reached = TIERS.filter((t) => earned >= t.threshold).length - 1;
        const held = TIERS.findIndex((t) => t.tier_id === (standing?.tier_id ?? 'bronze'));
        // Reversals lower what was earned without a downgrade (that waits for the review): only upward is checked.
        if (held < reached)
          violation(
            `${user_id}: tier ${standing?.tier_id ?? 'none'} below ${TIERS[reached].tier_id} (earned ${earned})`,
          );
      }
      const answered = (await send('GET', `/loyalty/points/${user_id}`)).body;
      if (rows.length && answered?.points > sum)
        violation(`${user_id}: API spendable ${answered.points} > stored balance ${sum}`);
      if (rows.length && !(answered?.points >= 0)) violation(`${user_id}: API spendable ${answered?.points}`);
    }
    const redemptions = await conn.collection('gift_redemptions').find({ organization_id }).toArray();
    const byStatus = new Map<string, number>();
    for (const r of redemptions) {
      byStatus.set(r.status as string, (byStatus.get(r.status as string) ?? 0) + 1);
      const holds = await entries.countDocuments({ organization_id, operation_id: `redemption:${r._id}:hold` });
      const refunds = await entries.countDocuments({ organization_id, operation_id: `redemption:${r._id}:refund` });
      const ok =
        (r.status === 'completed' && holds === 1 && refunds === 0) ||
        (r.status === 'refunded' && holds === 1 && refunds === 1) ||
        (r.status === 'failed' && holds === 0 && refunds === 0);
      if (!ok) violation(`redemption ${r._id}: ${r.status} with ${holds} hold(s) and ${refunds} refund(s)`);
      if (String(r.phone_number ?? '').endsWith('0000') && r.status !== 'refunded')
        violation(`redemption ${r._id} to a refused number ended ${r.status}`);
    }
    // Budgets: what each campaign's entries took from its budget (less what reversals gave back) is
    // what the budget lost, never more than the budget; limits: no member past a campaign's limit.
    const engineLines: string[] = [];
    for (const id of campaignIds) {
      const c = await conn.collection('loyalty_campaigns').findOne({ _id: id as never });
      let given = 0;
      let budgeted = 0;
      for (const e of await entries.find({ organization_id, 'breakdown.campaigns.campaign_id': id }).toArray())
        for (const share of e.breakdown.campaigns)
          if (share.campaign_id === id) {
            given += share.points;
            if (share.budgeted) budgeted += share.points;
          }
      if (c?.budget !== null && c?.budget !== undefined) {
        if (c.budget - c.budget_left !== budgeted)
          violation(`campaign ${c.name}: budget ${c.budget} − left ${c.budget_left} ≠ ${budgeted} taken by entries`);
        if (budgeted > c.budget) violation(`campaign ${c.name}: ${budgeted} given over its budget ${c.budget}`);
      }
      const max = c?.conditions?.nth ? 1 : c?.limit_per_member?.max;
      if (max)
        for (const u of await conn.collection('loyalty_campaign_uses').find({ campaign_id: id }).toArray())
          if ((u.used as number) > max)
            violation(`campaign ${c?.name}: ${u.user_id} used it ${u.used} times (limit ${max})`);
      engineLines.push(`${c?.name} ${given}${c?.budget ? `/${c.budget}` : ''}`);
    }
    const lines = [
      `Economy${engine ? ' with the engine (5 tiers, 5 campaigns: budgets, limits, exclusive, n-th)' : ''}: ${OPERATIONS} concurrent mixed operations (${CONCURRENCY} at a time) over ${USERS} users in ${wall.toFixed(1)} s = ${(OPERATIONS / wall).toFixed(0)} ops/s; latency p50 ${pct(latency, 50).toFixed(0)} ms, p99 ${pct(latency, 99).toFixed(0)} ms`,
      `  answers: ${[...statuses]
        .sort()
        .map(([k, n]) => `${k} × ${n}`)
        .join(', ')}`,
      `  redemptions: ${[...byStatus].map(([k, n]) => `${n} ${k}`).join(', ')} (${processing.length} answered 202 first); ${total} ledger entries checked`,
      `economy${engine ? ' (engine)' : ''}: ${violations} invariant violations (balance = Σ entries, never negative, each redemption debited once or refunded once, one reversal/expiry per credit${engine ? '; earned_after = Σ earned, no upgrade missed, each budget: taken by entries = budget − left ≤ budget, no member past a limit' : ''})`,
    ];
    if (engine) lines.splice(3, 0, `  campaigns (points given/budget): ${engineLines.join(', ')}`);
    for (const p of problems) lines.push(`  violation: ${p}`);
    return lines;
  } finally {
    await conn.close();
  }
}
