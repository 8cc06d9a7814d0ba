/**
 * LLM configuration service. The provider health probe talks to a local HTTP server standing in
 * for an OpenAI-compatible provider (its /models route).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { parseEnv, setConfig } from '../../activities/core/config.ts';
import { decryptSecret } from '../../activities/core/encryption.ts';
import { freePort } from '../../tools/infra.ts';
import { adminKey, basicUser, call, newTenant, type Tenant } from '../helpers/api.ts';

const P = '/api/llm-config';
let standin: http.Server;
let standinUrl: string;
const seenAuth: string[] = [];

let originalDefault: string;

beforeAll(async () => {
  originalDefault = (await call('GET', `${P}/default-config`, { key: adminKey() })).body.config;
  standin = http.createServer((req, res) => {
    seenAuth.push(String(req.headers.authorization ?? ''));
    res.writeHead(req.url === '/v1/models' ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'list', data: [{ id: 'llama3', object: 'model' }] }));
  });
  const port = await freePort();
  await new Promise<void>((r) => standin.listen(port, '127.0.0.1', r));
  standinUrl = `http://127.0.0.1:${port}/v1`;
});
afterAll(async () => {
  await call('POST', `${P}/default-config`, { key: adminKey(), json: { config: originalDefault } });
  await new Promise<void>((r) => standin.close(() => r()));
});

describe('LLM configuration', () => {
  it('applies the tier rules to every operation', async () => {
    const free = await newTenant('free');
    const biz = await newTenant('business');
    const ent = await newTenant('enterprise');
    const freeUser = await basicUser(free);
    const sys = adminKey();
    const update = (key: string, org?: string) =>
      call('POST', `${P}/update-llm-config`, {
        key,
        json: {
          agent_name: 'support',
          config_json: { model: 'gpt-4o', temperature: 0.5, system_prompt: 'Be brief.' },
          ...(org ? { organization_id: org } : {}),
        },
      });

    const refused = await update(free.adminKey);
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/free tier/);
    expect((await update((await basicUser(biz)).key)).status).toBe(403); // basic key: admin required
    const ok = await update(biz.adminKey);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body).toMatchObject({
      success: true,
      version: 1,
      source: 'organization',
      llm_settings: { model: 'gpt-4o', temperature: 0.5, system_prompt: 'Be brief.', provider: 'local' },
    });
    expect((await update(ent.adminKey)).status).toBe(200);
    expect((await update(biz.adminKey, ent.organization_id)).status).toBe(403); // another organization
    expect((await update(sys, biz.organization_id)).body.version).toBe(2);

    // reads: free gets the default, business its own
    const read = (key: string) => call('GET', `${P}/llm-configs?agent_name=support`, { key });
    expect((await read(freeUser.key)).body).toMatchObject({
      source: 'default',
      tier: 'free',
      llm_settings: { model: 'local' },
      agent_specific_settings: { fallback_to_local: true },
    });
    expect((await read(biz.adminKey)).body).toMatchObject({
      source: 'organization',
      tier: 'business',
      llm_settings: { model: 'gpt-4o' },
    });
    expect((await call('GET', `${P}/llm-configs?agent_name=weather`, { key: freeUser.key })).status).toBe(422);
    const badField = await call('POST', `${P}/update-llm-config`, {
      key: biz.adminKey,
      json: { agent_name: 'support', config_json: { temperature: 7 } },
    });
    expect(badField.status).toBe(422);

    // provider config: admins read, system admins write; default config and overview: system admins
    const basicRead = await call('GET', `${P}/provider-config/support`, { key: freeUser.key });
    expect(basicRead.status).toBe(403);
    expect(basicRead.body).toEqual({ detail: 'Only administrators can access provider configurations' });
    expect((await call('GET', `${P}/provider-config/support`, { key: free.adminKey })).status).toBe(200);
    expect(
      (
        await call('POST', `${P}/update-provider-config`, {
          key: biz.adminKey,
          json: { agent_name: 'support', config_json: { provider: 'x', base_url: 'http://x' } },
        })
      ).status,
    ).toBe(403);
    for (const [method, path] of [
      ['GET', 'default-config'],
      ['POST', 'default-config'],
      ['GET', 'system-overview'],
    ] as const) {
      expect(
        (
          await call(method, `${P}/${path}`, {
            key: ent.adminKey,
            json: method === 'POST' ? { config: '{}' } : undefined,
          })
        ).status,
        path,
      ).toBe(403);
    }
  });

  it('stores provider keys encrypted and never returns them in full; versions every change; probes provider health', async () => {
    const sys = adminKey();
    const key = 'sk-live-0123456789abcdefSECRET';
    // provider settings are global per agent: count versions from wherever other tests left them
    const v0 = (await call('GET', `${P}/provider-config/feedback`, { key: sys })).body.config.version as number;
    const set = await call('POST', `${P}/update-provider-config`, {
      key: sys,
      json: {
        agent_name: 'feedback',
        config_json: { provider: 'ollama', base_url: standinUrl, api_key: key, models: ['llama3'] },
      },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.config).toMatchObject({
      provider: 'ollama',
      base_url: standinUrl,
      api_key: 'sk-…CRET',
      api_key_set: true,
      models: ['llama3'],
    });
    const t = await newTenant();
    const read = await call('GET', `${P}/provider-config/feedback`, { key: t.adminKey });
    expect(JSON.stringify(read.body)).not.toContain('0123456789abcdef');
    // a change without api_key keeps the stored key
    const moved = await call('POST', `${P}/update-provider-config`, {
      key: sys,
      json: {
        agent_name: 'feedback',
        config_json: { provider: 'ollama', base_url: standinUrl, models: ['llama3', 'mistral'] },
      },
    });
    expect(moved.body.config).toMatchObject({ api_key: 'sk-…CRET', models: ['llama3', 'mistral'] });

    // The default configuration is global: keep every agent local so other tests' agents are unaffected.
    const def = JSON.stringify({
      agents: {
        support: {
          provider: 'local',
          model: 'local',
          max_tokens: 400,
          system_prompt: 'Answer from the help articles.',
        },
      },
    });
    expect((await call('POST', `${P}/default-config`, { key: sys, json: { config: 'not json' } })).status).toBe(422);
    expect((await call('POST', `${P}/default-config`, { key: sys, json: { config: def } })).status).toBe(200);
    expect((await call('GET', `${P}/default-config`, { key: sys })).body.config).toBe(def);

    const overview = await call('GET', `${P}/system-overview`, { key: sys });
    expect(overview.status).toBe(200);
    expect(overview.body.default_config).toEqual(JSON.parse(def));
    expect(overview.body.system_status).toMatchObject({
      active_providers: expect.arrayContaining(['local', 'ollama']),
      system_health: expect.stringMatching(/healthy|degraded/),
    });
    const check = overview.body.system_status.provider_checks.find((c: any) => c.agent_name === 'feedback');
    expect(check).toMatchObject({ ok: true, status: 200 });
    expect(seenAuth).toContain(`Bearer ${key}`); // the probe used the decrypted key
    const history = overview.body.version_history.recent.filter((v: any) => v.scope === 'provider:feedback');
    expect(history.map((v: any) => v.version).slice(0, 2)).toEqual([v0 + 2, v0 + 1]);
    expect(history[1]).toMatchObject({
      changed_by: expect.any(String),
      changes: { provider: { to: 'ollama' }, api_key: { to: 'sk-…CRET' } },
    });
    expect(history[0].changes).toEqual({ models: { from: ['llama3'], to: ['llama3', 'mistral'] } });
    expect(JSON.stringify(overview.body)).not.toContain('0123456789abcdef');
    expect(overview.body.usage_statistics).toMatchObject({
      total_tokens: expect.any(Number),
      by_agent: expect.any(Object),
    });
  });
});

describe('LLM provider settings: the stored key never follows base_url to another host', () => {
  it('a change of host without a new api_key is 422 and changes nothing; with one, or on the same host, it applies', async () => {
    const sys = adminKey();
    const update = (config_json: Record<string, unknown>) =>
      call('POST', `${P}/update-provider-config`, { key: sys, json: { agent_name: 'feedback', config_json } });
    const set = await update({
      provider: 'ollama',
      base_url: standinUrl,
      api_key: 'sk-first-0123456789KEEP',
      models: ['llama3'],
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    const before = set.body.config;

    for (const elsewhere of [
      'https://attacker.example/v1',
      standinUrl.replace('127.0.0.1', 'localhost'),
      standinUrl.replace('http:', 'https:'),
    ]) {
      const moved = await update({ provider: 'ollama', base_url: elsewhere, models: ['llama3'] });
      expect(moved.status, elsewhere).toBe(422);
      expect(moved.body.detail).toMatch(/^config_json\.api_key: /);
    }
    const read = await call('GET', `${P}/provider-config/feedback`, { key: sys });
    expect(read.body.config).toEqual(before); // nothing changed, no version written

    // another path on the same host keeps the key; another host with its own key is fine
    const samePlace = await update({ provider: 'ollama', base_url: `${standinUrl}/`, models: ['llama3', 'mistral'] });
    expect(samePlace.status, JSON.stringify(samePlace.body)).toBe(200);
    expect(samePlace.body.config).toMatchObject({ api_key: 'sk-…KEEP', version: before.version + 1 });
    const withKey = await update({
      provider: 'other',
      base_url: 'https://llm.example/v1',
      api_key: 'sk-second-0123456789NEW1',
    });
    expect(withKey.status).toBe(200);
    expect(withKey.body.config).toMatchObject({ base_url: 'https://llm.example/v1', api_key: 'sk-…NEW1' });
    // back where the test above left it (provider settings are global per agent)
    expect(
      (
        await update({
          provider: 'ollama',
          base_url: standinUrl,
          api_key: 'sk-third-0123456789abcd',
          models: ['llama3', 'mistral'],
        })
      ).status,
    ).toBe(200);
  });
});

describe('LLM configuration versions', () => {
  /** Saves the support agent's configuration of `t`; answers the new version. */
  const saveConfig = async (t: Tenant, config_json: Record<string, unknown>) => {
    const res = await call('POST', `${P}/update-llm-config`, {
      key: t.adminKey,
      json: { agent_name: 'support', config_json },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.version as number;
  };
  const rollback = (key: string, json: Record<string, unknown>) => call('POST', `${P}/rollback`, { key, json });

  it('lists the history paged with secrets masked, and rolls back to an earlier version as a new one', async () => {
    const biz = await newTenant('business');
    const set = (config_json: Record<string, unknown>) => saveConfig(biz, config_json);
    expect(await set({ model: 'm1', temperature: 0.1 })).toBe(1);
    expect(
      await set({ model: 'm2', limits: { rpm: 5 }, agent_specific_settings: { api_key: 'sk-org-0123456789SECRET' } }),
    ).toBe(2);
    expect(await set({ model: 'm3', budget: { tokens: 1000, period: 'weekly' } })).toBe(3);

    const back = await rollback(biz.adminKey, { version: 1, agent_name: 'support' });
    expect(back.status, JSON.stringify(back.body)).toBe(200);
    expect(back.body).toMatchObject({
      success: true,
      version: 4,
      rollback_of: 1,
      llm_settings: { model: 'm1', temperature: 0.1 },
    });
    const now = (await call('GET', `${P}/llm-configs?agent_name=support`, { key: biz.adminKey })).body;
    expect(now.llm_settings).toMatchObject({
      model: 'm1',
      temperature: 0.1,
      limits: { rpm: 120 },
      budget: { period: 'monthly' },
    });
    expect(now.agent_specific_settings.api_key).toBeUndefined();

    const page1 = await call('GET', `${P}/history?agent_name=support&limit=3`, { key: biz.adminKey });
    expect(page1.status, JSON.stringify(page1.body)).toBe(200);
    expect(page1.body).toMatchObject({ page: 1, limit: 3, total: 4, has_more: true });
    expect(page1.body.versions.map((v: any) => v.version)).toEqual([4, 3, 2]);
    expect(page1.body.versions[0]).toMatchObject({
      scope: `org:${biz.organization_id}:support`,
      rollback_of: 1,
      changes: {
        model: { from: 'm3', to: 'm1' },
        temperature: { from: null, to: 0.1 },
        budget: { from: { tokens: 1000, period: 'weekly' }, to: null },
      },
    });
    expect(page1.body.versions[2].changes.agent_specific_settings.to).toEqual({ api_key: 'sk-…CRET' });
    expect(JSON.stringify(page1.body)).not.toContain('0123456789');
    const page2 = await call('GET', `${P}/history?agent_name=support&limit=3&page=2`, { key: biz.adminKey });
    expect(page2.body).toMatchObject({ total: 4, has_more: false });
    expect(page2.body.versions.map((v: any) => [v.version, v.rollback_of])).toEqual([[1, null]]);

    // Rolling back restores every field of that version, agent_specific_settings included.
    expect((await rollback(biz.adminKey, { version: 2, agent_name: 'support' })).body.agent_specific_settings).toEqual({
      fallback_to_local: true,
      api_key: 'sk-org-0123456789SECRET',
    });
  });

  it("lets admins of business and enterprise organizations roll back their own versions only; the default is system admins'", async () => {
    const biz = await newTenant('business');
    expect(await saveConfig(biz, { model: 'm1', temperature: 0.1 })).toBe(1);
    // who may: admins of business/enterprise organizations; the default configuration: system admins
    expect((await rollback(biz.adminKey, { version: 9, agent_name: 'support' })).status).toBe(404);
    expect((await rollback((await basicUser(biz)).key, { version: 1, agent_name: 'support' })).status).toBe(403);
    const free = await newTenant('free');
    const refused = await rollback(free.adminKey, { version: 1, agent_name: 'support' });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/free tier/);
    const other = await newTenant('business');
    expect(
      (await rollback(other.adminKey, { version: 1, agent_name: 'support', organization_id: biz.organization_id }))
        .status,
    ).toBe(403);
    expect(
      (await call('GET', `${P}/history?organization_id=${biz.organization_id}`, { key: other.adminKey })).status,
    ).toBe(403);
    expect((await call('GET', `${P}/history`, { key: (await basicUser(biz)).key })).status).toBe(403);
    expect((await rollback(biz.adminKey, { version: 1 })).status).toBe(403);
    expect((await call('GET', `${P}/history?scope=default`, { key: biz.adminKey })).status).toBe(403);
    expect((await rollback(biz.adminKey, { version: 0, agent_name: 'support' })).status).toBe(422);
  });

  it('keeps versions of the default configuration, rolled back by a system admin for every organization', async () => {
    const free = await newTenant('free');
    // the default configuration, by a system admin
    const sys = adminKey();
    const v1 = (
      await call('POST', `${P}/default-config`, {
        key: sys,
        json: {
          config: JSON.stringify({ agents: { support: { max_tokens: 321 } }, tiers: { free: { limits: { rpm: 7 } } } }),
        },
      })
    ).body.version;
    expect(
      (
        await call('POST', `${P}/default-config`, {
          key: sys,
          json: { config: JSON.stringify({ agents: { support: { max_tokens: 123 } } }) },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await call('POST', `${P}/default-config`, {
          key: sys,
          json: { config: JSON.stringify({ tiers: { free: { limits: { rpm: -1 } } } }) },
        })
      ).status,
    ).toBe(422);
    const restored = await rollback(sys, { version: v1 });
    expect(restored.status, JSON.stringify(restored.body)).toBe(200);
    expect(JSON.parse((await call('GET', `${P}/default-config`, { key: sys })).body.config)).toEqual({
      agents: { support: { max_tokens: 321 } },
      tiers: { free: { limits: { rpm: 7 } } },
    });
    expect(
      (await call('GET', `${P}/llm-configs?agent_name=support`, { key: free.adminKey })).body.llm_settings,
    ).toMatchObject({ max_tokens: 321, limits: { rpm: 7 } });
    const history = await call('GET', `${P}/history?scope=default&limit=1`, { key: sys });
    expect(history.body.versions[0]).toMatchObject({ scope: 'default', rollback_of: v1 });
  });
});

/** Runs `encryptSecret(plain)` in a process of its own with `env`; resolves with its output. */
function encryptElsewhere(plain: string, env: NodeJS.ProcessEnv, script: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(path.resolve('node_modules/.bin/tsx'), [script, plain], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}: ${err}`))));
  });
}

describe('configuration encryption key', () => {
  it('without CONFIG_ENCRYPTION_KEY, generates one key in DATA_DIR (0600) that every process shares', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'config-key-'));
    try {
      const script = path.join(dataDir, 'encrypt.ts');
      fs.writeFileSync(
        script,
        `import { encryptSecret } from ${JSON.stringify(path.resolve('activities/core/encryption.ts'))};\nprocess.stdout.write(encryptSecret(process.argv[2]));\n`,
      );
      const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir };
      delete env.CONFIG_ENCRYPTION_KEY;
      // Four processes start at once, as the edge and the workers do on a first start.
      const plains = ['sk-one', 'sk-two', 'sk-three', 'sk-four'];
      const stored = await Promise.all(plains.map((p) => encryptElsewhere(p, env, script)));
      const file = path.join(dataDir, 'config-key.txt');
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(fs.readdirSync(dataDir).sort()).toEqual(['config-key.txt', 'encrypt.ts']); // nothing left aside
      setConfig(parseEnv({ DATA_DIR: dataDir }));
      expect(stored.map((s) => decryptSecret(s))).toEqual(plains);
      // A later start reads the same key.
      expect(decryptSecret(await encryptElsewhere('sk-later', env, script))).toBe('sk-later');
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
