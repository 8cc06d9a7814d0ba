/**
 * Local embedding engine: feature hashing of words and word pairs into a fixed-size vector,
 * L2-normalized, so cosine similarity is a dot product. No model to download; texts that share
 * vocabulary land close. (A model's embeddings come through the LLM gateway instead.)
 */
import { tokenize } from './tokens.ts';

export const HASHED_ENGINE = 'hashed-v1';
export const HASHED_DIMENSIONS = 256;

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i += 1) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export function hashedEmbedding(text: string, dims = HASHED_DIMENSIONS): number[] {
  const v = new Float64Array(dims);
  const tokens = tokenize(text).filter((t) => t.length > 1);
  const features = [...tokens, ...tokens.slice(1).map((t, i) => `${tokens[i]} ${t}`)];
  const tf = new Map<string, number>();
  for (const f of features) tf.set(f, (tf.get(f) ?? 0) + 1);
  for (const [f, count] of tf) {
    const h = fnv1a(f);
    v[h % dims] += (h & 0x80000000 ? -1 : 1) * (1 + Math.log(count)) * (f.includes(' ') ? 0.5 : 1);
  }
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0)) || 1;
  return Array.from(v, (x) => Math.round((x / norm) * 1e6) / 1e6);
}

export const cosine = (a: number[], b: number[]): number => {
  let dot = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i += 1) dot += a[i] * b[i];
  return dot;
};
