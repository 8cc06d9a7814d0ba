/**
 * The LLM gateway over HTTP (POST /support of a business organization whose support agent calls
 * a model): limits, budgets, fallbacks and reservations. The model provider is a local HTTP
 * server standing in for an OpenAI-compatible API at two base URLs (two providers); the model
 * name asked for says how it answers:
 *   ok-*      200; usage = the whole estimate (prompt characters / 4 + max_tokens), `-small`: 15
 *   broken-*  500; busy-* 429; slow-* answers after 2.5 s (past the test's 1 s timeout)
 * Every request it receives is counted per model, so a refusal "before the provider" is checked.
 */
import http from 'node:http';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { freePort } from '../../tools/infra.ts';
import { adminKey, basicUser, call, newTenant, type Tenant, unique } from '../helpers/api.ts';

const P = '/api/llm-config';
const QUESTION = 'How can I get my money back?';
const received: { base: string; model: string }[] = [];
let base: string;
let standin: http.Server;

const count = (model: string) => received.filter((r) => r.model === model).length;

beforeAll(async () => {
  standin = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      const model = String(body.model ?? '');
      received.push({ base: String(req.url).split('/')[1], model });
      const reply = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(json));
      };
      if (model.startsWith('broken')) return reply(500, { error: { message: 'provider down' } });
      if (model.startsWith('busy')) return reply(429, { error: { message: 'slow down' } });
      if (model.startsWith('slow')) await new Promise((r) => setTimeout(r, 2500));
      if (model.includes('race')) await new Promise((r) => setTimeout(r, 300));
      const chars = (body.messages ?? []).reduce(
        (n: number, m: { content: string }) => n + String(m.content).length,
        0,
      );
      const usage = model.includes('small')
        ? { prompt_tokens: 10, completion_tokens: 5 }
        : { prompt_tokens: Math.ceil(chars / 4), completion_tokens: body.max_tokens };
      reply(200, {
        id: 'c1',
        object: 'chat.completion',
        created: 0,
        model,
        choices: [
          {
            index: 0,
            finish_reason: 'stop',
            message: { role: 'assistant', content: 'Ask for a refund within 30 days [1].' },
          },
        ],
        usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
      });
    });
  });
  const port = await freePort();
  await new Promise<void>((r) => standin.listen(port, '127.0.0.1', r));
  base = `http://127.0.0.1:${port}`;
  // Provider settings are global per agent: support's calls go to stand-in "a"; the documents
  // agent's configuration makes provider "standin-b" known to fallbacks.
  for (const [agent_name, provider, path] of [
    ['support', 'standin-a', 'a'],
    ['documents', 'standin-b', 'b'],
  ]) {
    const res = await call('POST', `${P}/update-provider-config`, {
      key: adminKey(),
      json: { agent_name, config_json: { provider, base_url: `${base}/${path}/v1`, api_key: 'sk-standin-key-000' } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
});
afterAll(async () => {
  await new Promise<void>((r) => standin.close(() => r()));
});

interface World {
  t: Tenant;
  user: { key: string; user_id: string };
  conversation_id: string;
}

/** A business organization with the refund article, support settings `settings`, a user holding `tokens`. */
async function world(settings: Record<string, unknown>, tokens: number): Promise<World> {
  const t = await newTenant('business');
  expect(
    (
      await call('POST', '/support/knowledge', {
        key: t.adminKey,
        json: { title: 'Refund policy', body: 'You can request a refund within 30 days of purchase.' },
      })
    ).status,
  ).toBe(201);
  const set = await call('POST', `${P}/update-llm-config`, {
    key: t.adminKey,
    json: {
      agent_name: 'support',
      config_json: {
        provider: 'standin-a',
        max_tokens: 50,
        agent_specific_settings: { fallback_to_local: false },
        ...settings,
      },
    },
  });
  expect(set.status, JSON.stringify(set.body)).toBe(200);
  const user = await basicUser(t);
  const pkg = await call('POST', '/api/billing/packages', {
    key: adminKey(),
    json: { name: unique('pkg'), tokens, price: 1, currency: 'USD', validity_days: 30 },
  });
  const bought = await call('POST', '/api/billing/purchase-tokens', {
    key: user.key,
    json: {
      user_id: user.user_id,
      package_id: pkg.body.package.id,
      payment_method: { type: 'card', token: 'pm_card_visa' },
    },
  });
  expect(bought.status, JSON.stringify(bought.body)).toBe(200);
  const session = await call('POST', '/initialize_session', { key: user.key, json: { user_id: user.user_id } });
  return { t, user, conversation_id: session.body.conversation_id };
}

const ask = (w: World) =>
  call('POST', '/support', {
    key: w.user.key,
    json: { prompt: QUESTION, user_id: w.user.user_id, conversation_id: w.conversation_id },
  });
const remaining = async (w: World) =>
  (await call('GET', `/api/billing/usage/${w.user.user_id}`, { key: w.user.key })).body.usage;
const attempts = async (w: World) =>
  (await call('GET', `${P}/attempts?agent_name=support&limit=50`, { key: w.t.adminKey })).body.attempts.reverse();

/** A fixed-window minute must not turn over in the middle of a rate test. */
async function freshMinute() {
  const s = new Date().getUTCSeconds();
  if (s > 45) await new Promise((r) => setTimeout(r, (61 - s) * 1000));
}

/** The estimate of one support call (prompt + max_tokens 50), read from what the stand-in saw of one. */
let estimate = 0;
let promptEstimate = 0;
beforeAll(async () => {
  const w = await world({ model: 'ok-calibrate' }, 100_000);
  const res = await ask(w);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const used = (await remaining(w)).total_tokens as number;
  estimate = used; // the greedy stand-in reports exactly the estimate
  promptEstimate = used - 50;
  expect(promptEstimate).toBeGreaterThan(20);
});

describe('LLM gateway limits and budgets', () => {
  it('tiers give default limits and budgets (free < business < enterprise); an organization only lowers its limits', async () => {
    const read = async (tier: 'free' | 'business' | 'enterprise') =>
      (await call('GET', `${P}/llm-configs?agent_name=support`, { key: (await newTenant(tier)).adminKey })).body;
    const [free, business, enterprise] = [await read('free'), await read('business'), await read('enterprise')];
    expect(free.llm_settings).toMatchObject({
      limits: { rpm: 10, tpm: 20_000 },
      budget: { tokens: 100_000, period: 'monthly' },
      fallbacks: [],
    });
    for (const [lo, hi] of [
      [free, business],
      [business, enterprise],
    ]) {
      expect(lo.llm_settings.limits.rpm).toBeLessThan(hi.llm_settings.limits.rpm);
      expect(lo.llm_settings.limits.tpm).toBeLessThan(hi.llm_settings.limits.tpm);
      expect(lo.llm_settings.budget.tokens).toBeLessThan(hi.llm_settings.budget.tokens);
    }
    expect(free.budget_status).toMatchObject({ used: 0, reserved: 0, remaining: 100_000 });
    const t = await newTenant('business');
    const set = await call('POST', `${P}/update-llm-config`, {
      key: t.adminKey,
      json: {
        agent_name: 'support',
        config_json: { limits: { rpm: 1_000_000, tpm: 5 }, budget: { tokens: 10, period: 'weekly' } },
      },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.llm_settings).toMatchObject({
      limits: { rpm: business.llm_settings.limits.rpm, tpm: 5 },
      budget: { tokens: 10, period: 'weekly' },
    });
    for (const bad of [
      { limits: { rpm: 0 } },
      { budget: { tokens: 5, period: 'hourly' } },
      { budget: { tokens: -1, period: 'daily' } },
      { fallbacks: [{ provider: 'x' }] },
      { limits: { rpd: 5 } },
    ]) {
      const res = await call('POST', `${P}/update-llm-config`, {
        key: t.adminKey,
        json: { agent_name: 'support', config_json: bad },
      });
      expect(res.status, JSON.stringify(bad)).toBe(422);
    }
    expect(
      (await call('GET', `${P}/llm-configs?agent_name=support`, { key: t.adminKey })).body.llm_settings.budget,
    ).toEqual({ tokens: 10, period: 'weekly' });
  });

  it('rpm: the call past the limit is 429 with Retry-After before the provider is asked', async () => {
    const model = unique('ok-rpm');
    const w = await world({ model, limits: { rpm: 2 } }, 100_000);
    await freshMinute();
    expect((await ask(w)).status).toBe(200);
    expect((await ask(w)).status).toBe(200);
    const third = await ask(w);
    expect(third.status, JSON.stringify(third.body)).toBe(429);
    expect(third.body.detail).toMatch(/Rate limit of the support model for this organization: 2 calls a minute/);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(third.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(count(model)).toBe(2);
    expect((await remaining(w)).total_tokens).toBe(2 * estimate); // the refused call cost nothing
  });

  it('tpm: tokens a minute count the reservation, then the real count; past the limit 429 before the provider', async () => {
    const model = unique('ok-small');
    // The stand-in reports 15 tokens a call: two calls fit once the first has settled, a third does not.
    const w = await world({ model, limits: { tpm: estimate + 20 } }, 100_000);
    await freshMinute();
    expect((await ask(w)).status).toBe(200);
    expect((await ask(w)).status).toBe(200);
    const third = await ask(w);
    expect(third.status).toBe(429);
    expect(third.body.detail).toMatch(/Token limit of the support model for this organization/);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(count(model)).toBe(2);
  });

  it('budget: spent for the period is 429 until the window resets (Retry-After), shown in the settings', async () => {
    const model = unique('ok-budget');
    const w = await world({ model, budget: { tokens: 2 * estimate + 10, period: 'daily' } }, 100_000);
    expect((await ask(w)).status).toBe(200);
    expect((await ask(w)).status).toBe(200);
    const third = await ask(w);
    expect(third.status).toBe(429);
    const midnight = new Date(
      Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1),
    );
    expect(third.body.detail).toContain(`it resets at ${midnight.toISOString()}`);
    const wait = Number(third.headers.get('retry-after'));
    expect(Math.abs(wait - (midnight.getTime() - Date.now()) / 1000)).toBeLessThan(30);
    expect(count(model)).toBe(2);
    const status = (await call('GET', `${P}/llm-configs?agent_name=support`, { key: w.t.adminKey })).body.budget_status;
    expect(status).toMatchObject({
      tokens: 2 * estimate + 10,
      period: 'daily',
      used: 2 * estimate,
      reserved: 0,
      remaining: 10,
      resets_at: midnight.toISOString(),
    });
    // basic keys see the settings, not what the organization spends
    expect(
      (await call('GET', `${P}/llm-configs?agent_name=support`, { key: w.user.key })).body.budget_status,
    ).toBeUndefined();
  });
});

describe('LLM gateway fallbacks', () => {
  it('goes on past 500, 429 and a timeout to another provider; every attempt is metered and recorded', async () => {
    const tag = unique('m');
    const w = await world(
      {
        model: `broken-${tag}`,
        timeout_ms: 1000,
        fallbacks: [{ model: `busy-${tag}` }, { model: `slow-${tag}` }, { provider: 'standin-b', model: `ok-${tag}` }],
      },
      100_000,
    );
    const res = await ask(w);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.metadata.source_agent).toBe(`llm:ok-${tag}`);
    expect(received.filter((r) => r.model.endsWith(tag)).map((r) => `${r.base}:${r.model.split('-')[0]}`)).toEqual([
      'a:broken',
      'a:busy',
      'a:slow',
      'b:ok',
    ]);
    expect((await attempts(w)).map((a: any) => [a.attempt, a.provider, a.outcome, a.status, a.tokens])).toEqual([
      [1, 'standin-a', 'server_error', 500, 0],
      [2, 'standin-a', 'rate_limited', 429, 0],
      [3, 'standin-a', 'timeout', null, promptEstimate], // the provider read the prompt
      [4, 'standin-b', 'ok', 200, estimate],
    ]);
    expect((await remaining(w)).total_tokens).toBe(promptEstimate + estimate);
  });

  it('never sends a paid fallback past the budget; the free local engine may still answer', async () => {
    const tag = unique('m');
    const settings = {
      model: `broken-${tag}`,
      budget: { tokens: estimate + 100, period: 'monthly' },
      fallbacks: [{ model: `ok-big-${tag}`, max_tokens: 1000 }],
    };
    const w = await world(settings, 100_000);
    const res = await ask(w);
    expect(res.status, JSON.stringify(res.body)).toBe(429);
    expect(res.body.detail).toMatch(/token budget of the support model/);
    expect(count(`ok-big-${tag}`)).toBe(0);
    expect((await attempts(w)).map((a: any) => [a.outcome, a.status])).toEqual([
      ['server_error', 500],
      ['refused', 429],
    ]);
    // the same with the local engine as the last resort: it answers, for free
    const local = await world({ ...settings, agent_specific_settings: { fallback_to_local: true } }, 100_000);
    const answered = await ask(local);
    expect(answered.status).toBe(200);
    expect(answered.body.metadata.source_agent).toBe('local_retrieval');
    expect(count(`ok-big-${tag}`)).toBe(0);
    expect((await remaining(local)).total_tokens).toBe(0);
  });
});

describe('LLM gateway reservations', () => {
  it('20 concurrent calls with tokens for 5: exactly 5 are sent, 15 are 402, the balance never goes below zero', async () => {
    const model = unique('ok-race');
    const credit = 5 * estimate + Math.floor(estimate / 2);
    const w = await world({ model }, credit);
    const answers = await Promise.all(Array.from({ length: 20 }, () => ask(w)));
    const statuses = answers.map((a) => a.status).sort();
    const seen = JSON.stringify(answers.map((a) => [a.status, a.body.detail ?? a.body.metadata?.source_agent]));
    expect(
      statuses.filter((s) => s === 200),
      seen,
    ).toHaveLength(5);
    expect(
      statuses.filter((s) => s === 402),
      seen,
    ).toHaveLength(15);
    expect(answers.find((a) => a.status === 402)!.body.detail).toMatch(/Not enough tokens for this support call/);
    expect(count(model)).toBe(5);
    const usage = await remaining(w);
    expect(usage.total_tokens).toBe(5 * estimate);
    expect(usage.remaining_tokens).toBe(credit - 5 * estimate);
    expect(usage.total_tokens).toBeLessThanOrEqual(credit);
  });
});
