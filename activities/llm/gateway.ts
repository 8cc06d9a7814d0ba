/**
 * The LLM gateway: every chat model call of an agent goes through here. It resolves the caller's
 * effective configuration (organization over default over LLM_PROVIDER/LLM_MODEL), takes the
 * agent's provider (per-agent provider configuration, else OPENAI_BASE_URL/OPENAI_API_KEY),
 * refuses a call the user's remaining tokens cannot cover (402) before it runs, calls any
 * OpenAI-compatible endpoint with the openai package, and records the tokens used per user,
 * organization and agent. A provider failure falls back to the local engine only when the
 * agent's settings say `fallback_to_local`.
 */
import OpenAI from 'openai';
import { config } from '../config';
import { newId } from '../ids';
import { PlatformError } from '../errors';
import { recordUsage, tokenUsage } from '../billing/billing';
import { effectiveConfig, providerSecret, type AgentSettings } from './configs';
import type { AgentName } from './models';

export interface GatewayCall {
  organization_id: string;
  user_id: string;
  agent: AgentName;
  system: string;
  user: string;
  max_tokens?: number;
}

export interface GatewayAnswer {
  text: string;
  model: string;
  provider: string;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

/** Settings are read at most every SETTINGS_TTL_MS per organization and agent in each process. */
const SETTINGS_TTL_MS = 2000;
const cache = new Map<string, { at: number; settings: Promise<AgentSettings> }>();

export function agentSettings(organization_id: string, agent: AgentName): Promise<AgentSettings> {
  const key = `${organization_id}|${agent}`;
  const hit = cache.get(key);
  if (hit && Date.now() - hit.at < SETTINGS_TTL_MS) return hit.settings;
  const settings = effectiveConfig(organization_id, agent).then((c) => {
    const cfg = config();
    // The built-in default is local; LLM_PROVIDER=openai makes the environment's model the default.
    if (c.source === 'default' && c.settings.provider === 'local' && cfg.LLM_PROVIDER === 'openai') return { ...c.settings, provider: 'openai', model: cfg.LLM_MODEL };
    return c.settings;
  });
  settings.catch(() => cache.delete(key));
  if (cache.size > 5000) cache.clear();
  cache.set(key, { at: Date.now(), settings });
  return settings;
}

/** Whether the agent calls a model for this organization (else the caller's local engine answers). */
export async function usesModel(organization_id: string, agent: AgentName): Promise<boolean> {
  return (await agentSettings(organization_id, agent)).provider !== 'local';
}

const clients = new Map<string, OpenAI>();
function client(base_url: string | null, api_key: string | null): OpenAI {
  const key = `${base_url}|${api_key}`;
  let c = clients.get(key);
  if (!c) {
    c = new OpenAI({ apiKey: api_key ?? 'not-needed', baseURL: base_url ?? undefined, timeout: 60_000, maxRetries: 1 });
    clients.set(key, c);
  }
  return c;
}

/** A call's most tokens: its prompt (≈ 4 characters a token) plus the answer's limit. */
export const estimateTokens = (text: string, maxTokens: number) => Math.ceil(text.length / 4) + maxTokens;

/**
 * Runs one chat call, or answers null when the agent is local for this organization or when the
 * provider failed and the settings allow the local fallback.
 */
export async function gatewayChat(call: GatewayCall): Promise<GatewayAnswer | null> {
  const settings = await agentSettings(call.organization_id, call.agent);
  if (settings.provider === 'local') return null;
  const maxTokens = Math.min(call.max_tokens ?? settings.max_tokens, settings.max_tokens);
  const system = [call.system, settings.system_prompt].filter(Boolean).join('\n\n');
  const needed = estimateTokens(system + call.user, maxTokens);
  const { remaining_tokens } = await tokenUsage(call.organization_id, call.user_id);
  if (needed > remaining_tokens) {
    throw new PlatformError(402, `Not enough tokens for this ${call.agent} call: it may use up to ${needed} tokens and ${remaining_tokens} remain; buy a token package`);
  }
  const provider = await providerSecret(call.agent);
  let res;
  try {
    res = await client(provider.base_url, provider.api_key).chat.completions.create({
      model: settings.model,
      temperature: settings.temperature,
      max_tokens: maxTokens,
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: call.user },
      ],
    });
  } catch (err) {
    if (settings.agent_specific_settings.fallback_to_local === true) return null;
    throw new PlatformError(502, `The ${call.agent} model provider failed: ${(err as Error).message}`);
  }
  const u = res.usage;
  const usage = { prompt_tokens: u?.prompt_tokens ?? Math.ceil(system.length / 4 + call.user.length / 4), completion_tokens: u?.completion_tokens ?? 0, total_tokens: 0 };
  usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
  await recordUsage({ organization_id: call.organization_id, user_id: call.user_id, agent: call.agent, model: res.model || settings.model, prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens, call_id: newId('use') });
  return { text: res.choices[0]?.message?.content?.trim() ?? '', model: res.model || settings.model, provider: provider.provider, usage };
}
