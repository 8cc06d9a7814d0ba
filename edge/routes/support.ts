/**
 * Support Q&A: the organization's knowledge base and answers that cite it.
 * Errors are `{detail}`; a conversation that is not the user's is 400 "Invalid conversation ID".
 */
import { randomUUID } from 'node:crypto';

import { z } from 'zod';

import {
  answerQuestion,
  changeCurated,
  claimHandoffFor,
  closeHandoffFor,
  createArticle,
  createCurated,
  deleteArticle,
  deleteCurated,
  listArticles,
  listCurated,
  listHandoffs,
  MAX_CURATED,
  MAX_HANDOFF_REPLIES,
  replyToHandoff,
  requireConversation,
} from '../../activities/support/index.ts';
import { audioQaRun } from '../../workers/runs/uploads.ts';
import { actingUser, organizationFor } from '../auth.ts';
import { answerField, defineRoute, Reply } from '../http.ts';
import { idempotencyKeyOf, runOnUpload } from '../idempotency.ts';
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
      source: z
        .enum(['curated', 'knowledge_base', 'handoff'])
        .describe('curated: a curated answer; knowledge_base: composed from the articles; handoff: handed to a person'),
      escalate: z
        .boolean()
        .describe('true when the answer hands the conversation to a person (metadata.handoff_id names the handoff)'),
      response_id: z.string().describe('support:<turn_id>: what feedback names to judge this answer'),
      curated_id: z.string().optional().describe('the curated answer given'),
      handoff_id: z.string().optional().describe("the conversation's open handoff, when the answer escalated"),
      escalation_reason: z.enum(['no_answer', 'model_unsure', 'asked_for_person']).optional(),
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

const page = z.coerce.number().int().min(1).default(1);
const limit = z.coerce.number().int().min(1).max(100).default(50);
const reply = z.object({
  reply_id: z.string(),
  response_id: z.string().describe("the reply's response in the conversation (source support_agent)"),
  text: z.string(),
  by: z.string().describe('the admin user who wrote it'),
  at: z.string(),
});
const handoff = z
  .object({
    handoff_id: z.string(),
    organization_id: z.string(),
    user_id: z.string(),
    conversation_id: z.string(),
    turn_id: z.string().describe('the turn whose answer escalated'),
    reason: z.enum(['no_answer', 'model_unsure', 'asked_for_person']),
    question: z.string(),
    status: z.enum(['open', 'claimed', 'closed']),
    claimed_by: z.string().nullable(),
    claimed_at: z.string().nullable(),
    closed_by: z.string().nullable(),
    closed_at: z.string().nullable(),
    replies: z.array(reply),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'SupportHandoff' });
const handoffParams = z.object({ handoff_id: requiredId });
const orgQuery = z.object({ organization_id: organizationId });
const handoffAnswer = z.object({ success: z.literal(true), handoff });

defineRoute({
  method: 'GET',
  paths: ['/api/support/handoffs'],
  tag,
  summary: "The organization's handoffs (admin), newest first, paginated; filter status open|claimed|closed",
  auth: 'admin',
  query: z.object({
    organization_id: organizationId,
    status: z.enum(['open', 'claimed', 'closed']).optional(),
    page,
    limit,
  }),
  response: z.object({
    success: z.literal(true),
    handoffs: z.array(handoff),
    page: z.number(),
    limit: z.number(),
    total: z.number(),
    has_more: z.boolean(),
  }),
  handler: async ({ principal, query }) => ({
    success: true,
    ...(await listHandoffs(organizationFor(principal, query.organization_id), query.status, query.page, query.limit)),
  }),
});

defineRoute({
  method: 'POST',
  paths: ['/api/support/handoffs/:handoff_id/claim'],
  statuses: { 409: 'Claimed by another admin, or closed' },
  tag,
  summary:
    'Claims an open handoff (admin): of two claims at once one wins, the other is 409; claiming one again answers it',
  auth: 'admin',
  audit: {
    action: 'support_handoff.claim',
    target: ({ params }) => ({ type: 'support_handoff', id: params.handoff_id }),
  },
  params: handoffParams,
  query: orgQuery,
  response: handoffAnswer,
  handler: async ({ principal, params, query }) => ({
    success: true,
    handoff: await claimHandoffFor(
      organizationFor(principal, query.organization_id),
      params.handoff_id,
      principal.user_id,
    ),
  }),
});

defineRoute({
  method: 'POST',
  paths: ['/api/support/handoffs/:handoff_id/reply'],
  statuses: { 409: 'Not claimed by the caller, closed, or holding its replies' },
  tag,
  summary: `The claimer's reply to the user (admin), added to the user's conversation as a response of source support_agent (at most ${MAX_HANDOFF_REPLIES} per handoff). An Idempotency-Key header makes a retry add nothing`,
  auth: 'admin',
  idempotent: true,
  audit: {
    action: 'support_handoff.reply',
    target: ({ params }) => ({ type: 'support_handoff', id: params.handoff_id }),
  },
  params: handoffParams,
  query: orgQuery,
  body: z.object({ text: z.string().trim().min(1, 'must not be empty').max(4000) }),
  response: z.object({ success: z.literal(true), reply_id: z.string(), response_id: z.string(), handoff }),
  handler: async ({ event, principal, params, query, body }) => ({
    success: true,
    ...(await replyToHandoff(
      organizationFor(principal, query.organization_id),
      params.handoff_id,
      principal.user_id,
      body.text,
      idempotencyKeyOf(event),
    )),
  }),
});

defineRoute({
  method: 'POST',
  paths: ['/api/support/handoffs/:handoff_id/close'],
  statuses: { 409: 'Already closed' },
  tag,
  summary: 'Closes an open or claimed handoff (admin); the next escalation of the conversation opens a new one',
  auth: 'admin',
  audit: {
    action: 'support_handoff.close',
    target: ({ params }) => ({ type: 'support_handoff', id: params.handoff_id }),
  },
  params: handoffParams,
  query: orgQuery,
  response: handoffAnswer,
  handler: async ({ principal, params, query }) => ({
    success: true,
    handoff: await closeHandoffFor(
      organizationFor(principal, query.organization_id),
      params.handoff_id,
      principal.user_id,
    ),
  }),
});

const curated = z
  .object({
    curated_id: z.string(),
    organization_id: z.string(),
    question: z.string(),
    answer: z.string(),
    created_by: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'SupportCuratedAnswer' });
const curatedQuestion = z.string().trim().min(1, 'must not be empty').max(500);
const curatedText = z.string().trim().min(1, 'must not be empty').max(4000);

defineRoute({
  method: 'POST',
  paths: ['/api/support/curated'],
  statuses: { 409: `The organization has its ${MAX_CURATED} curated answers` },
  tag,
  summary:
    'Adds a curated question→answer pair (admin): a question that matches it well enough is answered with it, before any generated answer',
  auth: 'admin',
  audit: {
    action: 'support_curated.create',
    target: ({ result }) => ({ type: 'support_curated', id: answerField(result, 'curated', 'curated_id') }),
    keep: ['question'],
  },
  query: orgQuery,
  body: z.object({ question: curatedQuestion, answer: curatedText }),
  status: 201,
  response: z.object({ success: z.literal(true), curated }),
  handler: async ({ principal, query, body }) =>
    new Reply(201, {
      success: true,
      curated: await createCurated(organizationFor(principal, query.organization_id), body, principal.user_id),
    }),
});

defineRoute({
  method: 'GET',
  paths: ['/api/support/curated'],
  tag,
  summary: "The organization's curated answers (admin), newest first, paginated",
  auth: 'admin',
  query: z.object({ organization_id: organizationId, page, limit }),
  response: z.object({
    success: z.literal(true),
    curated: z.array(curated),
    page: z.number(),
    limit: z.number(),
    total: z.number(),
    has_more: z.boolean(),
  }),
  handler: async ({ principal, query }) => ({
    success: true,
    ...(await listCurated(organizationFor(principal, query.organization_id), query.page, query.limit)),
  }),
});

defineRoute({
  method: 'PUT',
  paths: ['/api/support/curated/:curated_id'],
  tag,
  summary: 'Replaces a curated answer (admin): its question and its answer',
  auth: 'admin',
  audit: {
    action: 'support_curated.update',
    target: ({ params }) => ({ type: 'support_curated', id: params.curated_id }),
    keep: ['question'],
  },
  params: z.object({ curated_id: requiredId }),
  query: orgQuery,
  body: z.object({ question: curatedQuestion, answer: curatedText }),
  response: z.object({ success: z.literal(true), curated }),
  handler: async ({ principal, params, query, body }) => ({
    success: true,
    curated: await changeCurated(organizationFor(principal, query.organization_id), params.curated_id, body),
  }),
});

defineRoute({
  method: 'DELETE',
  paths: ['/api/support/curated/:curated_id'],
  tag,
  summary: 'Deletes a curated answer (admin)',
  auth: 'admin',
  audit: {
    action: 'support_curated.delete',
    target: ({ params }) => ({ type: 'support_curated', id: params.curated_id }),
  },
  params: z.object({ curated_id: requiredId }),
  query: orgQuery,
  response: z.object({ success: z.literal(true), message: z.string() }),
  handler: async ({ principal, params, query }) => {
    await deleteCurated(organizationFor(principal, query.organization_id), params.curated_id);
    return { success: true, message: `Curated answer ${params.curated_id} deleted` };
  },
});
