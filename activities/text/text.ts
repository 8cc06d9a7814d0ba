/**
 * Text processing: the edge stores the text (storeText), the workflow `text:<text id>` analyses
 * and embeds it in the worker (processStoredText); and similarity search within an organization.
 */
import { cosine, HASHED_ENGINE, hashedEmbedding } from '../adapters/embeddings.ts';
import { getObject, putObject, removeObject } from '../adapters/storage.ts';
import { notFound, PlatformError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { type Caller, gatewayEmbed, usesModel } from '../llm/index.ts';
import { storeNormalizedResponse } from '../responses/index.ts';
import { analyseOffThread } from './analysis-runner.ts';
import { embeddingById, embeddingsOf, insertEmbedding } from './store.ts';

interface TextContext {
  organization_id: string;
  user_id: string;
  idp_id: string;
  conversation_id: string;
  session_id?: string;
  context_id?: string;
  source_file?: string;
  timestamp?: string;
}

export interface ProcessTextInput extends TextContext {
  text: string;
}

export interface StoredTextInput extends TextContext {
  text_id: string;
  /** `<organization_id>/<user_id>/texts/<text_id>.txt` */
  file_path: string;
}

/**
 * Stores the text where the worker reads it: the workflow carries its path, not up to 500,000
 * characters, through its history.
 */
export async function storeText(input: {
  organization_id: string;
  user_id: string;
  text: string;
}): Promise<{ text_id: string; file_path: string }> {
  const text_id = newId('txt');
  const file_path = `${input.organization_id}/${input.user_id}/texts/${text_id}.txt`;
  await putObject(file_path, Buffer.from(input.text, 'utf8'), 'text/plain; charset=utf-8');
  return { text_id, file_path };
}

/**
 * The text agent's model embedding through the LLM gateway (metered). A model failure with the
 * local fallback allowed would mix vector spaces, so it is refused instead (502).
 */
async function modelEmbedding(text: string, who: Caller): Promise<{ vector: number[]; engine: string }> {
  const out = await gatewayEmbed(who, text);
  if (!out)
    throw new PlatformError(
      'upstream_failed',
      'the embeddings provider failed; a local vector would not be comparable with the stored ones',
    );
  return { vector: out.value, engine: `llm:${out.model}` };
}

/**
 * The analysis and the embedding its settings ask for: the model's, or the local hashed vector
 * (computed with the analysis, off the event loop). The analysis comes first: a text over its
 * time budget costs no tokens.
 */
async function analyseAndEmbed(text: string, who: Caller) {
  const model = await usesModel(who.organization_id, 'text');
  const { analysis, vector } = await analyseOffThread(text, { embed: !model });
  return { analysis, ...(model ? await modelEmbedding(text, who) : { vector: vector!, engine: HASHED_ENGINE }) };
}

/**
 * Analyses and embeds a stored text and records the normalized response `text:<text id>`. A
 * failure removes the stored text: a refused text leaves nothing behind.
 */
export async function processStoredText(input: StoredTextInput) {
  const { file_path } = input;
  const stored = await getObject(file_path);
  if (!stored) throw new Error(`the stored text ${file_path} is missing`);
  const text = stored.toString('utf8');
  let embedded: Awaited<ReturnType<typeof analyseAndEmbed>>;
  try {
    embedded = await analyseAndEmbed(text, { organization_id: input.organization_id, user_id: input.user_id });
  } catch (err) {
    await removeObject(file_path).catch(() => undefined);
    throw err;
  }
  const { analysis, vector, engine } = embedded;
  const embedding_id = `emb_${input.text_id.slice(4)}`;
  // once per text: a retried activity finds its embedding stored and goes on
  await insertEmbedding({
    _id: embedding_id,
    organization_id: input.organization_id,
    user_id: input.user_id,
    engine,
    dimensions: vector.length,
    vector,
    file_path,
    excerpt: text.slice(0, 200),
    conversation_id: input.conversation_id,
  });
  const metadata = {
    ...analysis,
    embedding: { engine, dimensions: vector.length },
    engine: 'local',
    user_id: input.user_id,
    idp_id: input.idp_id,
    conversation_id: input.conversation_id,
    session_id: input.session_id ?? null,
    context_id: input.context_id ?? null,
    source_file: input.source_file ?? null,
    timestamp: input.timestamp ?? null,
  };
  const message =
    `Text processed: ${analysis.word_count} words, ${analysis.sentence_count} sentences, language ${analysis.language}, sentiment ${analysis.sentiment.label}. ${analysis.summary}`.trim();
  const response = await storeNormalizedResponse({
    response_id: `text:${input.text_id}`,
    conversation_id: input.conversation_id,
    user_id: input.user_id,
    organization_id: input.organization_id,
    source: 'text',
    message,
    metadata: { ...metadata, file_path, embedding_id },
  });
  return {
    success: true as const,
    message,
    file_path,
    embedding_id,
    error: null,
    metadata: { ...metadata, processed_at: response.created_at },
    organization_id: input.organization_id,
  };
}

/** A query's embedding for similarity search, with the engine the organization's texts use. */
async function embedQuery(text: string, who: Caller): Promise<{ vector: number[]; engine: string }> {
  return (await usesModel(who.organization_id, 'text'))
    ? modelEmbedding(text, who)
    : { vector: hashedEmbedding(text), engine: HASHED_ENGINE };
}

/**
 * Texts of the organization closest to a query text or a stored embedding (cosine). Only this
 * organization's vectors are read; `user_id` narrows to one user's texts.
 */
export async function similarTexts(input: {
  organization_id: string;
  user_id?: string;
  caller_user_id: string;
  query?: string;
  embedding_id?: string;
  limit: number;
}) {
  let vector: number[];
  let engine: string;
  if (input.embedding_id) {
    const own = await embeddingById(input.organization_id, input.embedding_id, input.user_id);
    if (!own) throw notFound(`Embedding not found: ${input.embedding_id}`);
    vector = own.vector;
    engine = own.engine;
  } else {
    ({ vector, engine } = await embedQuery(input.query ?? '', {
      organization_id: input.organization_id,
      user_id: input.caller_user_id,
    }));
  }
  // Vectors of different engines live in different spaces: only the same engine's are compared.
  const docs = await embeddingsOf({
    organization_id: input.organization_id,
    engine,
    ...(input.user_id ? { user_id: input.user_id } : {}),
  });
  return docs
    .filter((d) => d._id !== input.embedding_id)
    .map((d) => ({
      embedding_id: d._id,
      score: Math.round(cosine(vector, d.vector) * 10000) / 10000,
      user_id: d.user_id,
      file_path: d.file_path,
      excerpt: d.excerpt,
      conversation_id: d.conversation_id ?? null,
      created_at: d.created_at.toISOString(),
    }))
    .sort((a, b) => b.score - a.score)
    .slice(0, input.limit);
}
