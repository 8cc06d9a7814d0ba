/**
 * The LLM gateway: every chat model call of an agent goes through here. It resolves the caller's
 * effective configuration (organization over default over LLM_PROVIDER/LLM_MODEL), takes the
 * agent's provider (per-agent provider configuration, else OPENAI_BASE_URL/OPENAI_API_KEY),
 * refuses a call the user's remaining tokens cannot cover (402) before it runs, calls any
 * OpenAI-compatible endpoint with the openai package, and records the tokens used per user,
 * organization and agent. A provider failure falls back to the local engine only when the
 * agent's settings say `fallback_to_local`.
 */
import OpenAI, { toFile } from 'openai';
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
    // The built-in default is local; the environment's engine switches make their model the default.
    if (c.source === 'default' && c.settings.provider === 'local') {
      const env: Record<AgentName, [boolean, string]> = {
        support: [cfg.LLM_PROVIDER === 'openai', cfg.LLM_MODEL],
        feedback: [cfg.LLM_PROVIDER === 'openai', cfg.LLM_MODEL],
        documents: [cfg.LLM_PROVIDER === 'openai', cfg.LLM_MODEL],
        ticket_scan: [cfg.OCR_ENGINE === 'openai', cfg.OCR_MODEL],
        transcription: [cfg.SPEECH_ENGINE === 'openai', cfg.SPEECH_MODEL],
        text: [cfg.EMBEDDINGS_PROVIDER === 'openai', cfg.EMBEDDINGS_MODEL],
      };
      const [on, model] = env[agent];
      if (on) return { ...c.settings, provider: 'openai', model };
    }
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

export interface Caller {
  organization_id: string;
  user_id: string;
}

/**
 * Runs `work` against the agent's provider after the balance check, records the tokens it
 * reports; null when the agent is local, or when the provider failed and the settings allow the
 * local fallback.
 */
async function through<T>(who: Caller, agent: AgentName, needed: (s: AgentSettings) => number, work: (c: OpenAI, s: AgentSettings) => Promise<{ value: T; model: string; prompt_tokens: number; completion_tokens: number }>): Promise<{ value: T; model: string; provider: string; usage: GatewayAnswer['usage'] } | null> {
  const settings = await agentSettings(who.organization_id, agent);
  if (settings.provider === 'local') return null;
  const need = needed(settings);
  const { remaining_tokens } = await tokenUsage(who.organization_id, who.user_id);
  if (need > remaining_tokens) {
    throw new PlatformError(402, `Not enough tokens for this ${agent} call: it may use up to ${need} tokens and ${remaining_tokens} remain; buy a token package`);
  }
  const provider = await providerSecret(agent);
  let out;
  try {
    out = await work(client(provider.base_url, provider.api_key), settings);
  } catch (err) {
    if (err instanceof PlatformError) throw err;
    if (settings.agent_specific_settings.fallback_to_local === true) return null;
    // The provider's own text can carry a masked key, a host or a prompt: it goes to the log only.
    process.stderr.write(`gateway: the ${agent} model provider failed: ${(err as Error).message}\n`);
    const status = (err as { status?: unknown }).status;
    throw new PlatformError(502, `The ${agent} model provider failed${typeof status === 'number' ? ` (HTTP ${status})` : ''}`);
  }
  await recordUsage({ organization_id: who.organization_id, user_id: who.user_id, agent, model: out.model, prompt_tokens: out.prompt_tokens, completion_tokens: out.completion_tokens, call_id: newId('use') });
  return { value: out.value, model: out.model, provider: provider.provider, usage: { prompt_tokens: out.prompt_tokens, completion_tokens: out.completion_tokens, total_tokens: out.prompt_tokens + out.completion_tokens } };
}

/** One chat call of a text agent (support, feedback, documents). */
export async function gatewayChat(call: GatewayCall): Promise<GatewayAnswer | null> {
  const systemOf = (s: AgentSettings) => [call.system, s.system_prompt].filter(Boolean).join('\n\n');
  const maxOf = (s: AgentSettings) => Math.min(call.max_tokens ?? s.max_tokens, s.max_tokens);
  const out = await through(
    call,
    call.agent,
    (s) => estimateTokens(systemOf(s) + call.user, maxOf(s)),
    async (c, s) => {
      const system = systemOf(s);
      const res = await c.chat.completions.create({
        model: s.model,
        temperature: s.temperature,
        max_tokens: maxOf(s),
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: call.user },
        ],
      });
      return { value: res.choices[0]?.message?.content?.trim() ?? '', model: res.model || s.model, prompt_tokens: res.usage?.prompt_tokens ?? Math.ceil((system.length + call.user.length) / 4), completion_tokens: res.usage?.completion_tokens ?? 0 };
    },
  );
  return out && { text: out.value, model: out.model, provider: out.provider, usage: out.usage };
}

/** Counted for an image in the balance check (providers bill images by tiles; ~a tile's worth). */
const IMAGE_TOKENS = 1000;

/** The ticket_scan agent's OCR by a vision model. */
export async function gatewayVision(who: Caller, image: Buffer, instructions: string) {
  return through(who, 'ticket_scan', (s) => IMAGE_TOKENS + estimateTokens(instructions, s.max_tokens), async (c, s) => {
    const res = await c.chat.completions.create({
      model: s.model,
      temperature: 0,
      max_tokens: s.max_tokens,
      messages: [
        { role: 'system', content: instructions },
        { role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${image.toString('base64')}` } }] },
      ],
    });
    return { value: res.choices[0]?.message?.content ?? '', model: res.model || s.model, prompt_tokens: res.usage?.prompt_tokens ?? IMAGE_TOKENS, completion_tokens: res.usage?.completion_tokens ?? 0 };
  });
}

/** The text agent's embeddings. */
export async function gatewayEmbed(who: Caller, text: string) {
  const input = text.slice(0, 30_000);
  return through(who, 'text', () => estimateTokens(input, 0), async (c, s) => {
    // float: not every OpenAI-compatible server implements the SDK's default base64 encoding
    const res = await c.embeddings.create({ model: s.model, input, encoding_format: 'float' });
    const vector = res.data[0]?.embedding;
    if (!Array.isArray(vector) || !vector.length) throw new Error('the embeddings endpoint returned no vector');
    return { value: vector, model: res.model || s.model, prompt_tokens: res.usage?.prompt_tokens ?? Math.ceil(input.length / 4), completion_tokens: 0 };
  });
}

/** The transcription agent's speech to text; audio endpoints report no tokens, so a call counts its text's. */
export async function gatewayTranscribe(who: Caller, audio: Buffer, filename: string) {
  return through(who, 'transcription', () => 1, async (c, s) => {
    const res = await c.audio.transcriptions.create({ model: s.model, file: await toFile(audio, filename) });
    const text = res.text ?? '';
    return { value: text, model: s.model, prompt_tokens: 0, completion_tokens: Math.ceil(text.length / 4) };
  });
}
