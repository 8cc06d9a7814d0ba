/**
 * Text processing and similarity search. Errors here are `{success:false, error}`.
 * `/process_text` stores the text, then runs the workflow `text:<text id>` and waits for it: the
 * analysis and the embedding run in the worker, never on the edge's event loop.
 */
import { z } from 'zod';

import { invalid } from '../../activities/core/errors.ts';
import { similarTexts, type StoredTextInput, storeText } from '../../activities/text/index.ts';
import { taskQueue, temporal } from '../../workers/runs/client.ts';
import { platformSearchAttributes } from '../../workflows/search-attributes.ts';
import { processTextWorkflow } from '../../workflows/text.ts';
import { actingUser, organizationFor } from '../auth.ts';
import { defineRoute } from '../http.ts';
import { organizationId, requiredId } from '../schemas.ts';

const tag = 'text';
const errors = 'success' as const;
const optionalText = z.string().trim().min(1).max(200).optional();

async function processInWorker(input: StoredTextInput) {
  const client = await temporal();
  return client.workflow.execute(processTextWorkflow, {
    taskQueue: taskQueue(),
    workflowId: `text:${input.text_id}`,
    args: [input],
    typedSearchAttributes: platformSearchAttributes(input.organization_id, input.user_id, 'text'),
  });
}

defineRoute({
  method: 'POST',
  paths: ['/process_text'],
  statuses: {
    402: "The organization's token budget cannot cover the model call",
    502: 'The model or embeddings provider failed',
    503: 'The analysis took too long and was stopped, or model calls are busy; try again later',
  },
  tag,
  errors,
  summary:
    'Stores a text, analyses it (language, counts, keywords, entities, sentiment, summary) and embeds it, in the worker (workflow text:<text id>)',
  auth: 'key',
  audit: false,
  body: z.object({
    text: z
      .string()
      .refine((t) => t.trim().length > 0, 'must not be empty')
      .refine((t) => t.length <= 500_000, 'at most 500,000 characters'),
    user_id: requiredId,
    conversation_id: requiredId,
    session_id: optionalText,
    context_id: optionalText,
    source_file: optionalText,
    timestamp: z.iso.datetime({ offset: true }).optional(),
    organization_id: organizationId,
  }),
  response: z.object({
    success: z.literal(true),
    message: z.string(),
    file_path: z.string(),
    embedding_id: z.string(),
    error: z.null(),
    metadata: z.record(z.string(), z.unknown()),
    organization_id: z.string(),
  }),
  handler: async ({ principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    const user = await actingUser(principal, org, body.user_id);
    const { text, ...context } = body;
    const stored = await storeText({ organization_id: org, user_id: user.user_id, text });
    return processInWorker({ ...context, ...stored, organization_id: org, user_id: user.user_id, idp_id: user.idp_id });
  },
});

defineRoute({
  method: 'POST',
  paths: ['/text/similar'],
  statuses: { 502: 'The embeddings provider failed' },
  tag,
  errors,
  summary:
    "Stored texts closest to a query text or an embedding_id, within the caller's organization (a basic key: its own texts)",
  auth: 'key',
  audit: false,
  body: z.object({
    query: z.string().trim().min(1).max(10_000).optional(),
    embedding_id: z.string().trim().min(1).max(100).optional(),
    user_id: z.string().trim().min(1).max(200).optional().describe("only this user's texts"),
    organization_id: organizationId,
    limit: z.number().int().min(1).max(50).default(5),
  }),
  response: z.object({
    success: z.literal(true),
    results: z.array(
      z.object({
        embedding_id: z.string(),
        score: z.number(),
        user_id: z.string(),
        file_path: z.string(),
        excerpt: z.string(),
        conversation_id: z.string().nullable(),
        created_at: z.string(),
      }),
    ),
  }),
  handler: async ({ principal, body }) => {
    if (!body.query === !body.embedding_id) throw invalid('query', 'give exactly one of query and embedding_id');
    const org = organizationFor(principal, body.organization_id);
    // Texts are personal: a basic key searches its own, an admin any user's or the whole organization's.
    const userRef = principal.level === 0 ? principal.user_id : body.user_id;
    const user = userRef ? await actingUser(principal, org, userRef) : undefined;
    return {
      success: true,
      results: await similarTexts({
        organization_id: org,
        user_id: user?.user_id,
        caller_user_id: principal.user_id,
        query: body.query,
        embedding_id: body.embedding_id,
        limit: body.limit,
      }),
    };
  },
});
