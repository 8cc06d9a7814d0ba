/**
 * The gateway's reservations on the suite's real MongoDB-wire server: several processes reserving
 * for one user at once never hold more than the balance; a crashed call's hold expires; budgets
 * turn over with their UTC window (a fixed clock, passed in); each meter's newest entry is read
 * through the (key, seq) index, so a long chain (one an earlier version wrote included) costs one read.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import mongoose from 'mongoose';
import { describe, expect, inject, it } from 'vitest';

import { createPackage, purchaseTokens } from '../../activities/billing/billing.ts';
import { type Caller, HOLD_MS, reserve, settle } from '../../activities/llm/reservations.ts';
import type { Budget } from '../../activities/llm/settings.ts';
import { unique } from '../helpers/api.ts';
import { queriesOf, scans, show } from '../helpers/queries.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();

const LIMITS = { rpm: 10_000, tpm: 100_000_000 };
const BIG: Budget = { tokens: 100_000_000, period: 'monthly' };

/** A user of a new organization holding `tokens`. */
async function funded(tokens: number): Promise<Caller> {
  const who = { organization_id: unique('res-org'), user_id: unique('usr') };
  const pkg = await createPackage({ name: 'test', tokens, price: 1, currency: 'USD', validity_days: 30 });
  await purchaseTokens({ ...who, package_id: pkg.id, token: 'pm_card_visa' });
  return who;
}

const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (err) => String((err as { status?: number }).status ?? (err as Error).message),
  );

/** Starts `n` processes that each reserve `each` times at once for `who`, all released together. */
async function reserveElsewhere(who: Caller, n: number, each: number, tokens: number): Promise<string[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reserve-'));
  const script = path.join(dir, 'reserve.ts');
  fs.writeFileSync(
    script,
    `import { parseEnv, setConfig } from ${JSON.stringify(path.resolve('activities/core/config.ts'))};
import { closeRuntime, initRuntime } from ${JSON.stringify(path.resolve('activities/core/runtime.ts'))};
import { reserve } from ${JSON.stringify(path.resolve('activities/llm/reservations.ts'))};
async function main() {
  setConfig(parseEnv(process.env));
  await initRuntime();
  process.stdout.write('ready\\n');
  await new Promise((r) => process.stdin.once('data', r));
  const out = await Promise.all(Array.from({ length: ${each} }, () => reserve(${JSON.stringify(who)}, 'support', { limits: ${JSON.stringify(LIMITS)}, budget: ${JSON.stringify(BIG)} }, ${tokens}).then(() => 'ok', (e) => String(e.status ?? e.message))));
  process.stdout.write('result ' + JSON.stringify(out) + '\\n');
  await closeRuntime();
}
main().catch((e) => { process.stderr.write(String(e)); process.exit(1); });
`,
  );
  const env = { ...process.env, ...inject('platformEnv') };
  try {
    const children = Array.from({ length: n }, () =>
      spawn(path.resolve('node_modules/.bin/tsx'), [script], { env, stdio: ['pipe', 'pipe', 'pipe'] }),
    );
    const lines = children.map((c) => {
      let out = '';
      let err = '';
      c.stderr.on('data', (d) => (err += d));
      const ready = new Promise<void>((resolve) =>
        c.stdout.on('data', (d) => ((out += d), out.includes('ready') && resolve())),
      );
      const done = new Promise<string[]>((resolve, reject) =>
        c.on('exit', (code) =>
          code === 0 ? resolve(JSON.parse(out.split('result ')[1])) : reject(new Error(`exit ${code}: ${err}`)),
        ),
      );
      return { c, ready, done };
    });
    await Promise.all(lines.map((l) => l.ready));
    for (const l of lines) l.c.stdin.end('go\n');
    return (await Promise.all(lines.map((l) => l.done))).flat();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('reservations', () => {
  it('4 processes × 5 concurrent reservations against a balance for 5: exactly 5 hold, 15 are 402', async () => {
    const who = await funded(5 * 100 + 50);
    const out = await reserveElsewhere(who, 4, 5, 100);
    expect(out).toHaveLength(20);
    expect(out.filter((o) => o === 'ok')).toHaveLength(5);
    expect(out.filter((o) => o === '402')).toHaveLength(15);
  }, 120_000);

  it("a crashed call's hold stops counting when it expires", async () => {
    const who = await funded(150);
    const t0 = new Date();
    await reserve(who, 'support', { limits: LIMITS, budget: BIG }, 100, t0); // never settled: the call "crashed"
    expect(
      await outcome(reserve(who, 'support', { limits: LIMITS, budget: BIG }, 100, new Date(t0.getTime() + 60_000))),
    ).toBe('402');
    expect(
      await outcome(
        reserve(who, 'support', { limits: LIMITS, budget: BIG }, 100, new Date(t0.getTime() + HOLD_MS + 1000)),
      ),
    ).toBe('ok');
  });

  it('a settled call releases what it did not use', async () => {
    const who = await funded(150);
    const r = await reserve(who, 'support', { limits: LIMITS, budget: BIG }, 100);
    expect(await outcome(reserve(who, 'support', { limits: LIMITS, budget: BIG }, 100))).toBe('402');
    await settle(r, 0, false); // nothing recorded as used: all 150 free again
    expect(await outcome(reserve(who, 'support', { limits: LIMITS, budget: BIG }, 140))).toBe('ok');
  });

  it.each([
    ['daily', '2031-03-09T23:59:30Z', '2031-03-10T00:00:00Z', '2031-03-09T00:00:10Z'],
    ['weekly', '2031-03-09T23:59:30Z', '2031-03-10T00:00:00Z', '2031-03-03T00:00:00Z'],
    ['monthly', '2031-01-31T23:59:30Z', '2031-02-01T00:00:00Z', '2031-01-01T00:00:00Z'],
  ] as const)('a %s budget is spent until its window ends (%s), then resets', async (period, late, next, early) => {
    const who = await funded(100_000);
    const budget: Budget = { tokens: 250, period };
    for (const t of [early, late]) {
      const r = await reserve(who, 'support', { limits: LIMITS, budget }, 100, new Date(t));
      await settle(r, 100, true, new Date(t));
    }
    const refused = await reserve(who, 'support', { limits: LIMITS, budget }, 100, new Date(late)).catch((e) => e);
    expect(refused).toMatchObject({ status: 429, headers: { 'Retry-After': '30' } });
    expect(refused.message).toContain(`it resets at ${new Date(next).toISOString()}`);
    expect(await outcome(reserve(who, 'support', { limits: LIMITS, budget }, 100, new Date(next)))).toBe('ok');
  });
  it("reads each meter's newest entry through the (key, seq) index: no query of a reservation or its settling reads a collection", async () => {
    const who = await funded(1000);
    const qs = await queriesOf(async () => {
      for (let i = 0; i < 3; i += 1)
        await settle(await reserve(who, 'support', { limits: LIMITS, budget: BIG }, 100), 10, true);
    });
    const meters = qs.filter((q) => q.collection.startsWith('llm_'));
    expect(show(meters.filter((q) => q.method === 'findOne'))).toContain(
      `llm_balance_holds.findOne(${JSON.stringify({ key: `${who.organization_id}|${who.user_id}` })}, sort {"seq":-1})`,
    );
    expect(await scans(meters)).toEqual([]);
  });

  it('continues a chain an earlier version wrote: its newest entry decides', async () => {
    const who = await funded(100_000);
    const budget: Budget = { tokens: 250, period: 'daily' };
    const at = new Date('2031-05-05T12:00:00Z');
    const key = `${who.organization_id}|support|daily|2031-05-05T00:00:00.000Z`;
    // 40 entries as the earlier version appended them (`<key>|<seq>`), 6 tokens settled by each
    await mongoose.connection.collection('llm_budget_meters').insertMany(
      Array.from({ length: 40 }, (_, i) => ({
        _id: `${key}|${i + 1}` as never,
        key,
        seq: i + 1,
        op: `settle:old${i}`,
        used: 6 * (i + 1),
        requests: i + 1,
        open: [],
        ends_at: new Date('2031-05-06T00:00:00Z'),
        created_at: at,
      })),
    );
    expect(await outcome(reserve(who, 'support', { limits: LIMITS, budget }, 20, at))).toBe('429'); // 240 used + 20 > 250
    const r = await reserve(who, 'support', { limits: LIMITS, budget }, 10, at);
    await settle(r, 10, true, at);
    const head = await mongoose.connection
      .collection('llm_budget_meters')
      .find({ key })
      .sort({ seq: -1 })
      .limit(1)
      .next();
    expect(head).toMatchObject({ seq: 42, used: 250 });
  });
});
