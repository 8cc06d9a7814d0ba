/**
 * The model engine for LLM tasks (support answers for now): any OpenAI-compatible chat
 * completions endpoint via the openai package, enabled with LLM_PROVIDER=openai
 * (OPENAI_BASE_URL, OPENAI_API_KEY, LLM_MODEL). Without it the callers use their local engines
 * and say so. Per-organization configuration and token metering come with the LLM gateway.
 */
import OpenAI from 'openai';
import { config } from '../config';

export function llmConfigured(): boolean {
  return config().LLM_PROVIDER === 'openai';
}

export interface ChatResult {
  text: string;
  model: string;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
}

let client: { key: string; client: OpenAI } | undefined;

function openai(): OpenAI {
  const cfg = config();
  const key = `${cfg.OPENAI_BASE_URL}|${cfg.OPENAI_API_KEY}`;
  if (client?.key !== key) client = { key, client: new OpenAI({ apiKey: cfg.OPENAI_API_KEY ?? 'not-needed', baseURL: cfg.OPENAI_BASE_URL, timeout: 60_000, maxRetries: 2 }) };
  return client.client;
}

export async function chat(input: { agent: string; system: string; user: string; maxTokens?: number }): Promise<ChatResult> {
  const model = config().LLM_MODEL;
  const res = await openai().chat.completions.create({
    model,
    temperature: 0.2,
    max_tokens: input.maxTokens ?? 500,
    user: input.agent,
    messages: [
      { role: 'system', content: input.system },
      { role: 'user', content: input.user },
    ],
  });
  const u = res.usage;
  return { text: res.choices[0]?.message?.content?.trim() ?? '', model: res.model || model, usage: u ? { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens, total_tokens: u.total_tokens } : null };
}

/** Embeddings from the OpenAI-compatible endpoint (EMBEDDINGS_PROVIDER=openai, EMBEDDINGS_MODEL). */
export async function embed(text: string): Promise<{ vector: number[]; engine: string }> {
  const model = config().EMBEDDINGS_MODEL;
  // float: not every OpenAI-compatible server implements the SDK's default base64 encoding
  const res = await openai().embeddings.create({ model, input: text.slice(0, 30_000), encoding_format: 'float' });
  const vector = res.data[0]?.embedding;
  if (!Array.isArray(vector) || !vector.length) throw new Error('the embeddings endpoint returned no vector');
  return { vector, engine: `openai:${model}` };
}
