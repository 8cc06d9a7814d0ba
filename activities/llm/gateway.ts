/**
 * The LLM gateway: every chat model call of an agent goes through here. It resolves the caller's
 * effective configuration (organization over default over LLM_PROVIDER/LLM_MODEL), takes the
 * agent's provider (per-agent provider configuration, else OPENAI_BASE_URL/OPENAI_API_KEY),
 * reserves the call's most tokens against the organization's limits and budget and the user's
 * balance before it is sent (reservations.ts: 429 or 402, nothing sent), calls any
 * OpenAI-compatible endpoint with the openai package, and settles the tokens used per user,
 * organization and agent. A call answered 429 or 5xx, or timed out, goes on to the settings'
 * fallbacks in order, each attempt reserved, metered and recorded; when a paid attempt cannot be
 * reserved no further one is sent. A provider failure ends with the local engine only when the
 * agent's settings say `fallback_to_local`.
 */
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, toFile } from 'openai';

import { recordUsage } from '../billing/index.ts';
import { Cache } from '../core/db/index.ts';
import { PlatformError, upstreamFailed } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import {
  type AgentSettings,
  effectiveConfig,
  providerSecret,
  providerSecretByLabel,
  settingsEpoch,
} from './configs.ts';
import type { AgentName } from './constants.ts';
import { type Caller, type Reservation, reserve, settle } from './reservations.ts';
import type { Fallback } from './settings.ts';
import { llmSettings } from './settings.ts';
import { insertAttempt } from './store.ts';

export type { Caller } from './reservations.ts';

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

/**
 * Settings are read at most every SETTINGS_TTL_MS per organization and agent in each process: a
 * call's settings are three indexed reads (its organization's tier, the default, its own): 38-43
 * ms per call measured on the loaded 2-core test machine, against ~15 ms for a local answer's
 * search. A change made in another process reaches calls here within 2 s; one made here at once
 * (configs.ts bumps settingsEpoch).
 */
const SETTINGS_TTL_MS = 2000;
const cache = new Cache<string, { epoch: number; settings: Promise<AgentSettings> }>({
  max: 5000,
  ttlMs: SETTINGS_TTL_MS,
});

function agentSettings(organization_id: string, agent: AgentName): Promise<AgentSettings> {
  const key = `${organization_id}|${agent}`;
  const hit = cache.get(key);
  if (hit && hit.epoch === settingsEpoch) return hit.settings;
  const settings = effectiveConfig(organization_id, agent).then((c) => {
    const cfg = llmSettings();
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
  cache.set(key, { epoch: settingsEpoch, settings });
  return settings;
}

/** Whether the agent calls a model for this organization (else the caller's local engine answers). */
export async function usesModel(organization_id: string, agent: AgentName): Promise<boolean> {
  return (await agentSettings(organization_id, agent)).provider !== 'local';
}

/** One client per endpoint and key (its connection pool), the least recently used dropped past 100. */
const clients = new Cache<string, OpenAI>({ max: 100 });
function client(base_url: string | null, api_key: string | null): OpenAI {
  const key = `${base_url}|${api_key}`;
  let c = clients.get(key);
  if (!c) {
    // No retries inside the SDK: every attempt is reserved and recorded here (fallbacks retry).
    c = new OpenAI({ apiKey: api_key ?? 'not-needed', baseURL: base_url ?? undefined, timeout: 60_000, maxRetries: 0 });
    clients.set(key, c);
  }
  return c;
}

/** A call's most tokens: its prompt (≈ 4 characters a token) plus the answer's limit. */
const estimateTokens = (text: string, maxTokens: number) => Math.ceil(text.length / 4) + maxTokens;

/** What one attempt may use: its prompt, and at most `answer` more. */
interface Estimate {
  prompt: number;
  answer: number;
}

type Work<T> = (
  c: OpenAI,
  s: AgentSettings,
  opts: { timeout: number; maxRetries: 0 },
) => Promise<{ value: T; model: string; prompt_tokens: number; completion_tokens: number }>;

/** Why an attempt failed, and whether the next fallback is tried. */
function failureOf(err: unknown): { outcome: string; status: number | null; next: boolean } {
  if (err instanceof APIConnectionTimeoutError) return { outcome: 'timeout', status: null, next: true };
  if (err instanceof APIConnectionError) return { outcome: 'unreachable', status: null, next: true };
  const status = err instanceof APIError && typeof err.status === 'number' ? err.status : null;
  if (status === 429) return { outcome: 'rate_limited', status, next: true };
  if (status !== null && status >= 500) return { outcome: 'server_error', status, next: true };
  return { outcome: 'error', status, next: false };
}

async function recordAttempt(a: {
  call_id: string;
  attempt: number;
  who: Caller;
  agent: AgentName;
  provider: string;
  model: string;
  outcome: string;
  status: number | null;
  ms: number;
  tokens: number;
}) {
  await insertAttempt({
    _id: `${a.call_id}#${a.attempt}`,
    call_id: a.call_id,
    attempt: a.attempt,
    organization_id: a.who.organization_id,
    user_id: a.who.user_id,
    agent: a.agent,
    provider: a.provider,
    model: a.model,
    outcome: a.outcome,
    status: a.status ?? undefined,
    ms: a.ms,
    tokens: a.tokens,
  }).catch((err) =>
    process.stderr.write(`gateway: recording attempt ${a.call_id}#${a.attempt} failed: ${(err as Error).message}\n`),
  );
}

/**
 * Runs `work` against the agent's provider, then its fallbacks, each attempt reserved before it
 * is sent and settled after; null when the agent is local, when a fallback names the local
 * engine, or when the attempts failed and the settings allow the local fallback.
 */
async function through<T>(
  who: Caller,
  agent: AgentName,
  estimate: (s: AgentSettings) => Estimate,
  work: Work<T>,
): Promise<{ value: T; model: string; provider: string; usage: GatewayAnswer['usage'] } | null> {
  const settings = await agentSettings(who.organization_id, agent);
  if (settings.provider === 'local') return null;
  const toLocal = settings.agent_specific_settings.fallback_to_local === true;
  const call_id = newId('call');
  const plan: Fallback[] = [{ model: settings.model }, ...settings.fallbacks];
  let failed: PlatformError | null = null;
  for (let i = 0; i < plan.length; i += 1) {
    const step = plan[i];
    if (step.provider === 'local') return null; // the local engine: free, never reserved
    const attempt = { call_id, attempt: i + 1, who, agent, model: step.model };
    const endpoint = step.provider ? await providerSecretByLabel(agent, step.provider) : await providerSecret(agent);
    if (!endpoint) {
      await recordAttempt({
        ...attempt,
        provider: step.provider!,
        outcome: 'not_configured',
        status: null,
        ms: 0,
        tokens: 0,
      });
      continue;
    }
    const s: AgentSettings = { ...settings, model: step.model, max_tokens: step.max_tokens ?? settings.max_tokens };
    const est = estimate(s);
    let held: Reservation;
    try {
      held = await reserve(who, agent, settings, est.prompt + est.answer);
    } catch (err) {
      // The first attempt's refusal is the answer; a fallback past the limits, the budget or the
      // balance is not sent (only the free local engine may still answer).
      if (i === 0 || !(err instanceof PlatformError)) throw err;
      await recordAttempt({
        ...attempt,
        provider: endpoint.provider,
        outcome: 'refused',
        status: err.status,
        ms: 0,
        tokens: 0,
      });
      if (toLocal) return null;
      throw err;
    }
    const started = performance.now();
    let out: Awaited<ReturnType<Work<T>>>;
    try {
      out = await work(client(endpoint.base_url, endpoint.api_key), s, { timeout: settings.timeout_ms, maxRetries: 0 });
    } catch (err) {
      const ms = Math.round(performance.now() - started);
      if (err instanceof PlatformError) {
        await settle(held, 0, false);
        throw err;
      }
      const f = failureOf(err);
      // A timed-out prompt was read by the provider, which bills it; a refusal (429, 5xx) costs nothing.
      const tokens = f.outcome === 'timeout' ? est.prompt : 0;
      if (tokens)
        await recordUsage({
          organization_id: who.organization_id,
          user_id: who.user_id,
          agent,
          model: s.model,
          prompt_tokens: tokens,
          completion_tokens: 0,
          call_id: `${call_id}#${i + 1}`,
        });
      await settle(held, tokens, true);
      await recordAttempt({
        ...attempt,
        provider: endpoint.provider,
        outcome: f.outcome,
        status: f.status,
        ms,
        tokens,
      });
      // The provider's own text can carry a masked key, a host or a prompt: it goes to the log only.
      process.stderr.write(
        `gateway: the ${agent} model provider failed (${endpoint.provider}/${s.model}, attempt ${i + 1}): ${(err as Error).message}\n`,
      );
      failed = new PlatformError(
        'upstream_failed',
        `The ${agent} model provider failed${f.status !== null ? ` (HTTP ${f.status})` : f.outcome === 'timeout' ? ' (timed out)' : ''}`,
      );
      if (f.next) continue;
      break;
    }
    const tokens = out.prompt_tokens + out.completion_tokens;
    await recordUsage({
      organization_id: who.organization_id,
      user_id: who.user_id,
      agent,
      model: out.model,
      prompt_tokens: out.prompt_tokens,
      completion_tokens: out.completion_tokens,
      call_id: `${call_id}#${i + 1}`,
    });
    await settle(held, tokens, true);
    await recordAttempt({
      ...attempt,
      provider: endpoint.provider,
      outcome: 'ok',
      status: 200,
      ms: Math.round(performance.now() - started),
      tokens,
    });
    return {
      value: out.value,
      model: out.model,
      provider: endpoint.provider,
      usage: { prompt_tokens: out.prompt_tokens, completion_tokens: out.completion_tokens, total_tokens: tokens },
    };
  }
  if (toLocal) return null;
  throw failed ?? upstreamFailed(`No provider of the ${agent} model is configured`);
}

/** One chat call of a text agent (support, feedback, documents). */
export async function gatewayChat(call: GatewayCall): Promise<GatewayAnswer | null> {
  const systemOf = (s: AgentSettings) => [call.system, s.system_prompt].filter(Boolean).join('\n\n');
  const maxOf = (s: AgentSettings) => Math.min(call.max_tokens ?? s.max_tokens, s.max_tokens);
  const out = await through(
    call,
    call.agent,
    (s) => ({ prompt: estimateTokens(systemOf(s) + call.user, 0), answer: maxOf(s) }),
    async (c, s, opts) => {
      const system = systemOf(s);
      const res = await c.chat.completions.create(
        {
          model: s.model,
          temperature: s.temperature,
          max_tokens: maxOf(s),
          messages: [
            { role: 'system', content: system },
            { role: 'user', content: call.user },
          ],
        },
        opts,
      );
      return {
        value: res.choices[0]?.message?.content?.trim() ?? '',
        model: res.model || s.model,
        prompt_tokens: res.usage?.prompt_tokens ?? Math.ceil((system.length + call.user.length) / 4),
        completion_tokens: res.usage?.completion_tokens ?? 0,
      };
    },
  );
  return out && { text: out.value, model: out.model, provider: out.provider, usage: out.usage };
}

/** Counted for an image in the balance check (providers bill images by tiles; ~a tile's worth). */
const IMAGE_TOKENS = 1000;

/** The ticket_scan agent's OCR by a vision model. */
export async function gatewayVision(who: Caller, image: Buffer, instructions: string) {
  return through(
    who,
    'ticket_scan',
    (s) => ({ prompt: IMAGE_TOKENS + estimateTokens(instructions, 0), answer: s.max_tokens }),
    async (c, s, opts) => {
      const res = await c.chat.completions.create(
        {
          model: s.model,
          temperature: 0,
          max_tokens: s.max_tokens,
          messages: [
            { role: 'system', content: instructions },
            {
              role: 'user',
              content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${image.toString('base64')}` } }],
            },
          ],
        },
        opts,
      );
      return {
        value: res.choices[0]?.message?.content ?? '',
        model: res.model || s.model,
        prompt_tokens: res.usage?.prompt_tokens ?? IMAGE_TOKENS,
        completion_tokens: res.usage?.completion_tokens ?? 0,
      };
    },
  );
}

/** The text agent's embeddings. */
export async function gatewayEmbed(who: Caller, text: string) {
  const input = text.slice(0, 30_000);
  return through(
    who,
    'text',
    () => ({ prompt: estimateTokens(input, 0), answer: 0 }),
    async (c, s, opts) => {
      // float: not every OpenAI-compatible server implements the SDK's default base64 encoding
      const res = await c.embeddings.create({ model: s.model, input, encoding_format: 'float' }, opts);
      const vector = res.data[0]?.embedding;
      if (!Array.isArray(vector) || !vector.length) throw new Error('the embeddings endpoint returned no vector');
      return {
        value: vector,
        model: res.model || s.model,
        prompt_tokens: res.usage?.prompt_tokens ?? Math.ceil(input.length / 4),
        completion_tokens: 0,
      };
    },
  );
}

/** The transcription agent's speech to text; audio endpoints report no tokens, so a call counts its text's. */
export async function gatewayTranscribe(who: Caller, audio: Buffer, filename: string) {
  return through(
    who,
    'transcription',
    () => ({ prompt: 0, answer: 1 }),
    async (c, s, opts) => {
      const res = await c.audio.transcriptions.create({ model: s.model, file: await toFile(audio, filename) }, opts);
      const text = res.text ?? '';
      return { value: text, model: s.model, prompt_tokens: 0, completion_tokens: Math.ceil(text.length / 4) };
    },
  );
}
