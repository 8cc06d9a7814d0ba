/**
 * Support Q&A: the organization's knowledge base and answers that cite it.
 * Errors are `{detail}`; a conversation that is not the user's is 400 "Invalid conversation ID".
 */
import { randomUUID } from 'node:crypto';

import { z } from 'zod';

import {
  answerQuestion,
  createArticle,
  deleteArticle,
  listArticles,
  requireConversation,
} from '../../activities/support/index.ts';
import { audioQaRun } from '../../workers/runs/uploads.ts';
import { actingUser, organizationFor } from '../auth.ts';
import { answerField, defineRoute, Reply } from '../http.ts';
import { runOnUpload } from '../idempotency.ts';
import { organizationId, requiredId } from '../schemas.ts';

const tag = 'support';

const answer = z.object({
  success: z.literal(true),
  message: z.string(),
  response: z.string(),
  metadata: z
    .object({
      processed_at: z.string(),
      source_agent: z.string().describe('local_retrieval, or llm:<model> when LLM_PROVIDER is set'),
      escalate: z.boolean().describe('true when the knowledge base has no answer: a human should take over'),
      citations: z.array(
        z.object({ article_id: z.string(), title: z.string(), passage: z.string(), score: z.number() }),
      ),
    })
    .passthrough(),
});
defineRoute({
  method: 'POST',
  paths: ['/support'],
  statuses: {
    402: "The organization's token budget cannot cover the model call",
    502: 'The model provider failed',
    503: 'Model calls are busy for this organization; retry after Retry-After',
  },
  tag,
  summary:
    "Answers a question from the organization's knowledge base, citing the articles used; offers escalation when it does not know",
  auth: 'key',
  audit: false,
  body: z.object({
    prompt: z.string().trim().min(1, 'must not be empty').max(4000),
    user_id: requiredId,
    organization_id: organizationId,
    conversation_id: requiredId,
    session_id: z.string().trim().max(200).optional(),
  }),
  response: answer,
  handler: async ({ principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    const user = await actingUser(principal, org, body.user_id);
    const { session_id } = await requireConversation(org, user.user_id, body.conversation_id);
    return answerQuestion({
      organization_id: org,
      user_id: user.user_id,
      conversation_id: body.conversation_id,
      session_id: body.session_id || session_id,
      prompt: body.prompt,
    });
  },
});

const article = z
  .object({
    id: z.string(),
    title: z.string(),
    body: z.string(),
    tags: z.array(z.string()),
    created_by: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .passthrough();

defineRoute({
  method: 'GET',
  paths: ['/support/knowledge'],
  tag,
  summary: "The organization's knowledge articles, newest first, paginated",
  auth: 'key',
  query: z.object({
    organization_id: organizationId,
    page: z.coerce.number().int().min(1).default(1),
    limit: z.coerce.number().int().min(1).max(100).default(50),
  }),
  response: z.object({
    success: z.literal(true),
    articles: z.array(article),
    page: z.number(),
    limit: z.number(),
    total: z.number(),
    has_more: z.boolean(),
  }),
  handler: async ({ principal, query }) => ({
    success: true,
    ...(await listArticles(organizationFor(principal, query.organization_id), query.page, query.limit)),
  }),
});

defineRoute({
  method: 'POST',
  paths: ['/support/knowledge'],
  tag,
  summary: 'Adds a knowledge article (admin); answers use it at once',
  auth: 'admin',
  audit: {
    action: 'knowledge_article.create',
    target: ({ result }) => ({ type: 'knowledge_article', id: answerField(result, 'article', 'id') }),
    keep: ['title', 'tags'],
  },
  query: z.object({ organization_id: organizationId }),
  body: z.object({
    title: z.string().trim().min(1).max(300),
    body: z.string().trim().min(1).max(50_000),
    tags: z.array(z.string().trim().min(1).max(50)).max(20).optional(),
  }),
  status: 201,
  response: z.object({ success: z.literal(true), article }),
  handler: async ({ principal, query, body }) =>
    new Reply(201, {
      success: true,
      article: await createArticle(organizationFor(principal, query.organization_id), body, principal.user_id),
    }),
});

defineRoute({
  method: 'DELETE',
  paths: ['/support/knowledge/:article_id'],
  tag,
  summary: 'Deletes a knowledge article (admin)',
  auth: 'admin',
  audit: {
    action: 'knowledge_article.delete',
    target: ({ params }) => ({ type: 'knowledge_article', id: params.article_id }),
  },
  params: z.object({ article_id: requiredId }),
  query: z.object({ organization_id: organizationId }),
  response: z.object({ success: z.literal(true), message: z.string() }),
  handler: async ({ principal, params, query }) => {
    await deleteArticle(organizationFor(principal, query.organization_id), params.article_id);
    return { success: true, message: `Article ${params.article_id} deleted` };
  },
});

defineRoute({
  method: 'POST',
  paths: ['/support/transcribe'],
  statuses: {
    402: "The organization's token budget cannot cover the model call",
    502: 'The transcription or model provider failed',
    503: 'Model calls are busy for this organization; retry after Retry-After',
  },
  tag,
  summary:
    'Transcribes a spoken question (multipart `file`: WAV, MP3, M4A/AAC, OGG/Opus, WebM, FLAC) and answers it (workflow audio-qa:<id>). An Idempotency-Key header makes a retry return the first answer',
  auth: 'key',
  audit: false,
  idempotent: true,
  form: {
    file: true,
    fields: z.object({
      user_id: requiredId,
      conversation_id: requiredId,
      organization_id: organizationId,
      session_id: z.string().trim().max(200).optional(),
    }),
  },
  response: z.object({
    success: z.literal(true),
    text: z.string(),
    file_path: z.string(),
    duration: z.number().describe('seconds'),
    qa_response: answer,
    metadata: z.object({ engine: z.string() }).passthrough(),
  }),
  handler: async ({ event, principal, form, file }) => {
    const org = organizationFor(principal, form.organization_id);
    const user = await actingUser(principal, org, form.user_id);
    const conv = await requireConversation(org, user.user_id, form.conversation_id); // before anything is stored
    const session_id = form.session_id || conv.session_id;
    return runOnUpload({
      event,
      route: 'support_transcribe',
      organization_id: org,
      user_id: user.user_id,
      file: file!,
      fields: { conversation_id: form.conversation_id, session_id },
      newId: () => randomUUID().replace(/-/g, '').slice(0, 20),
      workflow: audioQaRun,
      input: { organization_id: org, user_id: user.user_id, conversation_id: form.conversation_id, session_id },
    });
  },
});
