/**
 * LLM configuration per organization and agent: the platform's default configuration, an
 * organization's own (business and enterprise tiers only; free organizations use the default),
 * provider configurations with encrypted keys, versioned changes and the system overview.
 */
import { usageTotals } from '../billing/index.ts';
import { noteChange } from '../core/audit-note.ts';
import { jsonText } from '../core/db/index.ts';
import { decryptSecret, encryptSecret, maskSecret } from '../core/encryption.ts';
import { busy, forbidden, PlatformError } from '../core/errors.ts';
import { findOrganization } from '../identity/index.ts';
import { type AgentName, AGENTS } from './constants.ts';
import {
  type Budget,
  DEFAULT_TIMEOUT_MS,
  defaultConfigSchema,
  effectiveLimits,
  type Fallback,
  type Limits,
  llmSettings,
  maskSecrets,
  type SettingsInput,
  type Tier,
  tierDefaults,
} from './settings.ts';
import {
  allProviders,
  countOrganizationConfigs,
  countVersions,
  defaultConfigDoc,
  insertVersion,
  lastVersion,
  organizationConfig,
  providerByLabel,
  type ProviderConfigDoc,
  providerDoc,
  versionsOf,
  writeDefaultConfig,
  writeOrganizationConfig,
  writeProviderConfig,
} from './store.ts';

export interface AgentSettings {
  provider: string;
  model: string;
  temperature: number;
  max_tokens: number;
  system_prompt: string;
  agent_specific_settings: Record<string, unknown>;
  limits: Limits;
  budget: Budget;
  fallbacks: Fallback[];
  timeout_ms: number;
}

type StoredSettings = Omit<AgentSettings, 'limits' | 'budget' | 'fallbacks' | 'timeout_ms'> & SettingsInput;

/** Bumped by every change this process makes, so its own cached settings are read again at once. */
export let settingsEpoch = 0;

/** Used until a system admin sets a default: every agent on its local engine. */
const BUILT_IN_DEFAULT: { agents: Record<AgentName, StoredSettings> } = {
  agents: Object.fromEntries(
    AGENTS.map((a) => [
      a,
      {
        provider: 'local',
        model: 'local',
        temperature: 0.2,
        max_tokens: 500,
        system_prompt: '',
        agent_specific_settings: { fallback_to_local: true },
      },
    ]),
  ) as unknown as Record<AgentName, StoredSettings>,
};

const parse = (text: string) => JSON.parse(text) as Record<string, unknown>;
/** The stored default configuration (JSON text, validated when written). */
const defaultText = jsonText<Record<string, unknown>>(() => ({ ...BUILT_IN_DEFAULT }));

// --- versions ---

function diff(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): Record<string, { from: unknown; to: unknown }> {
  const out: Record<string, { from: unknown; to: unknown }> = {};
  for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (JSON.stringify(before[k]) !== JSON.stringify(after[k]))
      out[k] = { from: before[k] ?? null, to: after[k] ?? null };
  }
  return out;
}

/** A value for the audit record: secret-named parts `***` (never a key, not even its hint), anything big as its size. */
function forAudit(v: unknown, name: string): unknown {
  const hidden = maskSecrets(v, () => '***', name);
  const text = JSON.stringify(hidden ?? null);
  return text.length > 2000 ? `<${text.length} characters of JSON>` : hidden;
}

/** Notes a version's diff for the audit record of the request that made it (activities/core/audit-note.ts). */
function noteDiff(changes: Record<string, { from: unknown; to: unknown }>, secret: readonly string[] = []): void {
  const side = (k: string, v: unknown) =>
    secret.includes(k) ? (v === null || v === undefined ? null : '***') : forAudit(v, k);
  for (const [k, c] of Object.entries(changes)) noteChange(k, side(k, c.from), side(k, c.to));
}

/** Records a change as the next version of its scope; the primary key makes the number unique. */
async function recordVersion(
  scope: string,
  changed_by: string,
  changes: Record<string, unknown>,
  rollback_of?: number,
): Promise<number> {
  settingsEpoch += 1;
  for (let attempt = 0; attempt < 10; attempt += 1) {
    const version = (await lastVersion(scope)) + 1;
    if (
      await insertVersion({
        scope,
        version,
        changed_by,
        changes: changes as Record<string, { from: unknown; to: unknown }>,
        rollback_of,
      })
    )
      return version;
  }
  throw busy('configuration is being changed concurrently; retry');
}

async function versionHistory(scope?: string, limit = 50) {
  const { versions } = await versionsOf(scope ? [scope] : undefined, 1, limit);
  return versions.map((d) => ({
    scope: d.scope,
    version: d.version,
    changed_by: d.changed_by,
    changed_at: d.changed_at.toISOString(),
    changes: d.changes,
  }));
}

// --- default ---

export async function getDefaultConfig(): Promise<{ config: string; version: number; updated_at: string | null }> {
  const doc = await defaultConfigDoc();
  return doc
    ? { config: doc.config, version: doc.version, updated_at: new Date(doc.updated_at).toISOString() }
    : { config: JSON.stringify(BUILT_IN_DEFAULT), version: 0, updated_at: null };
}

export async function setDefaultConfig(text: string, changed_by: string, rollback_of?: number) {
  let parsed: Record<string, unknown>;
  try {
    parsed = parse(text);
  } catch {
    throw new PlatformError('invalid', 'config: must be JSON text', 'config');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new PlatformError('invalid', 'config: must be a JSON object', 'config');
  const checked = defaultConfigSchema.safeParse(parsed);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new PlatformError('invalid', `config: ${issue.path.join('.')}: ${issue.message}`, 'config');
  }
  const before = defaultText.decode((await getDefaultConfig()).config);
  const changes = diff(before, parsed);
  const version = await recordVersion('default', changed_by, changes, rollback_of);
  await writeDefaultConfig(JSON.stringify(parsed), version, changed_by);
  noteDiff(changes);
  return { version };
}

function defaultAgent(defaults: Record<string, unknown>, agent: AgentName): StoredSettings {
  const agents = (defaults.agents ?? {}) as Record<string, Partial<StoredSettings>>;
  return { ...BUILT_IN_DEFAULT.agents[agent], ...(agents[agent] ?? {}) };
}

/** Limits and budget: the settings' own over the tier's (limits never above the tier's). */
function complete(s: StoredSettings, tier: Tier, defaults: Record<string, unknown>): AgentSettings {
  const t = tierDefaults(tier, defaults);
  return {
    ...s,
    limits: effectiveLimits(s.limits, t.limits),
    budget: s.budget ?? t.budget,
    fallbacks: s.fallbacks ?? [],
    timeout_ms: s.timeout_ms ?? DEFAULT_TIMEOUT_MS,
  };
}

// --- organization configs ---

export async function tierOf(organization_id: string): Promise<Tier> {
  const org = await findOrganization(organization_id);
  if (!org) throw new PlatformError('not_found', `Organization not found: ${organization_id}`);
  return org.tier as Tier;
}

export async function effectiveConfig(organization_id: string, agent: AgentName) {
  const tier = await tierOf(organization_id);
  const all = defaultText.decode((await getDefaultConfig()).config);
  const defaults = defaultAgent(all, agent);
  if (tier === 'free') return { tier, source: 'default' as const, settings: complete(defaults, tier, all) };
  const own = await organizationConfig(organization_id, agent);
  if (!own) return { tier, source: 'default' as const, settings: complete(defaults, tier, all) };
  const mine = own.settings as Partial<StoredSettings>;
  const merged = {
    ...defaults,
    ...mine,
    agent_specific_settings: { ...defaults.agent_specific_settings, ...(mine.agent_specific_settings ?? {}) },
  };
  return { tier, source: 'organization' as const, version: own.version, settings: complete(merged, tier, all) };
}

export async function updateOrganizationConfig(
  organization_id: string,
  agent: AgentName,
  input: SettingsInput,
  changed_by: string,
  rollback_of?: number,
) {
  const tier = await tierOf(organization_id);
  if (tier === 'free')
    throw forbidden(
      `Custom LLM configuration needs the business or enterprise tier; organization ${organization_id} is on the free tier`,
    );
  const before = await organizationConfig(organization_id, agent);
  const changes = diff(before?.settings ?? {}, input);
  const version = await recordVersion(`org:${organization_id}:${agent}`, changed_by, changes, rollback_of);
  await writeOrganizationConfig(organization_id, agent, input, version, changed_by);
  noteDiff(changes);
  return { version, ...(await effectiveConfig(organization_id, agent)) };
}

// --- provider configs ---

export interface ProviderInput {
  provider: string;
  base_url: string;
  api_key?: string;
  models?: string[];
}

const providerView = (p: ProviderConfigDoc) => ({
  agent_name: p._id,
  provider: p.provider,
  base_url: p.base_url,
  models: p.models ?? [],
  api_key: p.api_key_hint ?? null,
  api_key_set: Boolean(p.api_key_enc),
  version: p.version,
  updated_at: new Date(p.updated_at).toISOString(),
});

/** Masked: the key is never returned, only its first and last characters. */
export async function getProviderConfig(agent: AgentName) {
  const doc = await providerDoc(agent);
  if (doc) return providerView(doc);
  const cfg = llmSettings();
  // Not configured per agent: the environment's endpoint (if any) serves every agent.
  return {
    agent_name: agent,
    provider: cfg.OPENAI_BASE_URL || cfg.OPENAI_API_KEY ? 'openai' : 'local',
    base_url: cfg.OPENAI_BASE_URL ?? null,
    models: [],
    api_key: cfg.OPENAI_API_KEY ? maskSecret(cfg.OPENAI_API_KEY) : null,
    api_key_set: Boolean(cfg.OPENAI_API_KEY),
    version: 0,
    updated_at: null,
  };
}

/** Where a key is sent: scheme, host and port (a path on the same server is the same place). */
const originOf = (url: string) => {
  try {
    return new URL(url).origin.toLowerCase();
  } catch {
    return url;
  }
};

export async function updateProviderConfig(agent: AgentName, input: ProviderInput, changed_by: string) {
  const before = await providerDoc(agent);
  // A kept key is sent only where it was given for: pointing base_url elsewhere (another host, port
  // or scheme) without a new key would hand the stored key to that server on the first call.
  if (!input.api_key && before?.api_key_enc && originOf(before.base_url) !== originOf(input.base_url)) {
    throw new PlatformError(
      'invalid',
      `config_json.api_key: required when base_url moves to another server (${originOf(before.base_url)} → ${originOf(input.base_url)}); the stored key is never sent to a new host`,
      'config_json.api_key',
    );
  }
  const api_key_enc = input.api_key ? encryptSecret(input.api_key) : before?.api_key_enc;
  const api_key_hint = input.api_key ? maskSecret(input.api_key) : before?.api_key_hint;
  const shown = (p: { provider?: string; base_url?: string; models?: string[]; api_key_hint?: string }) => ({
    provider: p.provider,
    base_url: p.base_url,
    models: p.models ?? [],
    api_key: p.api_key_hint ?? null,
  });
  const changes = diff(before ? shown(before) : {}, shown({ ...input, api_key_hint }));
  const version = await recordVersion(`provider:${agent}`, changed_by, changes);
  await writeProviderConfig(agent, {
    provider: input.provider,
    base_url: input.base_url.replace(/\/+$/, ''),
    models: input.models ?? [],
    api_key_enc,
    api_key_hint,
    version,
    updated_by: changed_by,
  });
  noteDiff(changes, ['api_key']); // the key's hint differs when the key changed; both sides read ***
  return providerView((await providerDoc(agent))!);
}

/** For the gateway only: the provider with its key in clear. */
export async function providerSecret(
  agent: AgentName,
): Promise<{ provider: string; base_url: string | null; api_key: string | null }> {
  const doc = await providerDoc(agent);
  if (doc)
    return {
      provider: doc.provider,
      base_url: doc.base_url,
      api_key: doc.api_key_enc ? decryptSecret(doc.api_key_enc) : null,
    };
  const cfg = llmSettings();
  return {
    provider: cfg.OPENAI_BASE_URL || cfg.OPENAI_API_KEY ? 'openai' : 'local',
    base_url: cfg.OPENAI_BASE_URL ?? null,
    api_key: cfg.OPENAI_API_KEY ?? null,
  };
}

/**
 * For the gateway's fallbacks: the provider configuration labelled `label`, the agent's own first,
 * then any agent's (by agent name); null when none is.
 */
export async function providerSecretByLabel(
  agent: AgentName,
  label: string,
): Promise<{ provider: string; base_url: string | null; api_key: string | null } | null> {
  const own = await providerSecret(agent);
  if (own.provider === label) return own;
  const doc = await providerByLabel(label);
  return doc
    ? {
        provider: doc.provider,
        base_url: doc.base_url,
        api_key: doc.api_key_enc ? decryptSecret(doc.api_key_enc) : null,
      }
    : null;
}

// --- overview ---

async function probe(
  base_url: string,
  api_key: string | null,
): Promise<{ ok: boolean; status: number | null; ms: number; error: string | null }> {
  const started = performance.now();
  try {
    const res = await fetch(`${base_url.replace(/\/+$/, '')}/models`, {
      headers: api_key ? { authorization: `Bearer ${api_key}` } : {},
      signal: AbortSignal.timeout(3000),
    });
    return {
      ok: res.ok,
      status: res.status,
      ms: Math.round(performance.now() - started),
      error: res.ok ? null : `HTTP ${res.status}`,
    };
  } catch (err) {
    return { ok: false, status: null, ms: Math.round(performance.now() - started), error: (err as Error).message };
  }
}

export async function systemOverview() {
  const [def, history, providers, orgConfigs, usage] = await Promise.all([
    getDefaultConfig(),
    versionHistory(undefined, 20),
    allProviders(),
    countOrganizationConfigs(),
    usageTotals(),
  ]);
  const checks = await Promise.all(
    providers.map(async (p) => ({
      agent_name: p._id,
      provider: p.provider,
      base_url: p.base_url,
      ...(await probe(p.base_url, p.api_key_enc ? decryptSecret(p.api_key_enc) : null)),
    })),
  );
  return {
    default_config: defaultText.decode(def.config),
    version_history: { total: await countVersions(), recent: history },
    usage_statistics: usage,
    system_status: {
      active_providers: [...new Set(['local', ...providers.map((p) => p.provider)])],
      total_configurations: orgConfigs + providers.length + (def.version > 0 ? 1 : 0),
      system_health: checks.every((c) => c.ok) ? 'healthy' : 'degraded',
      provider_checks: checks,
    },
  };
}
