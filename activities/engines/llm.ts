/**
 * Text embeddings from an OpenAI-compatible endpoint (OPENAI_BASE_URL, OPENAI_API_KEY). Chat
 * calls go through the LLM gateway (activities/llm/gateway.ts).
 */
import OpenAI from 'openai';
import { config } from '../config';

let client: { key: string; client: OpenAI } | undefined;

function openai(): OpenAI {
  const cfg = config();
  const key = `${cfg.OPENAI_BASE_URL}|${cfg.OPENAI_API_KEY}`;
  if (client?.key !== key) client = { key, client: new OpenAI({ apiKey: cfg.OPENAI_API_KEY ?? 'not-needed', baseURL: cfg.OPENAI_BASE_URL, timeout: 60_000, maxRetries: 2 }) };
  return client.client;
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
