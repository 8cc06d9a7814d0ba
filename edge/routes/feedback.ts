/**
 * Feedback: submitted by any key, analysed asynchronously by the workflow
 * `feedback-analysis:<id>`, summarized for admins.
 */
import { z } from 'zod';

import { FEEDBACK_TYPES } from '../../activities/feedback/constants.ts';
import { feedbackStats, submitFeedback } from '../../activities/feedback/index.ts';
import { actingUser, organizationFor } from '../auth.ts';
import { answerField, defineRoute } from '../http.ts';
import { organizationId, requiredId } from '../schemas.ts';

const tag = 'feedback';

defineRoute({
  method: 'POST',
  paths: ['/api/feedback/submit'],
  statuses: {
    402: "The organization's token budget cannot cover the model call",
    502: 'The model provider failed',
    503: 'Model calls are busy for this organization; retry after Retry-After',
  },
  tag,
  summary:
    'Stores feedback; its sentiment and categories are analysed asynchronously (workflow feedback-analysis:<id>)',
  auth: 'key',
  audit: {
    action: 'feedback.submit',
    target: ({ result }) => ({ type: 'feedback', id: answerField(result, 'feedback_id') }),
  },
  body: z
    .object({
      user_id: requiredId,
      organization_id: organizationId,
      feedback_type: z.enum(FEEDBACK_TYPES),
      rating: z
        .number()
        .int('must be an integer from 1 to 5')
        .min(1, 'must be an integer from 1 to 5')
        .max(5, 'must be an integer from 1 to 5'),
      title: z.string().trim().max(200).optional(),
      comment: z.string().trim().max(5000).optional(),
      conversation_id: requiredId
        .optional()
        .describe("the user's support conversation it judges (one the user asked in; else 404, nothing stored)"),
      response_id: requiredId
        .optional()
        .describe(
          "the answer it judges: a support answer's metadata.response_id (support:<turn_id>) or an agent's reply's; the user's own (else 404), of conversation_id when both are given (else 422)",
        ),
    })
    .refine((b) => Boolean(b.title || b.comment), { path: ['comment'], message: 'a title or a comment is required' }),
  response: z.object({ success: z.literal(true), message: z.string(), feedback_id: z.string() }),
  handler: async ({ principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    const user = await actingUser(principal, org, body.user_id);
    const feedback_id = await submitFeedback({
      organization_id: org,
      user_id: user.user_id,
      feedback_type: body.feedback_type,
      rating: body.rating,
      title: body.title,
      comment: body.comment,
      conversation_id: body.conversation_id,
      response_id: body.response_id,
    });
    return { success: true, message: 'Feedback received; its analysis runs in the background', feedback_id };
  },
});

const count = z.record(z.string(), z.number());

defineRoute({
  method: 'GET',
  paths: ['/api/feedback/stats'],
  tag,
  summary:
    "Feedback statistics of the caller's organization (admin): totals, sentiment and category distributions, average rating; filters from/to (created_at) and feedback_type; group_by conversation_id or response_id",
  auth: 'admin',
  query: z.object({
    organization_id: organizationId,
    feedback_type: z.enum(FEEDBACK_TYPES).optional(),
    from: z.iso.datetime({ offset: true }).or(z.iso.date()).optional().describe('inclusive, ISO 8601'),
    to: z.iso.datetime({ offset: true }).or(z.iso.date()).optional().describe('exclusive, ISO 8601'),
    group_by: z
      .enum(['conversation_id', 'response_id'])
      .optional()
      .describe('also count per conversation or per answer judged: stats.groups, most feedback first'),
    groups_limit: z.coerce.number().int().min(1).max(200).default(50).describe('groups answered (with group_by)'),
  }),
  response: z.object({
    success: z.literal(true),
    stats: z
      .object({
        total_feedback: z.number(),
        sentiment_distribution: count,
        category_distribution: count,
        average_rating: z.number(),
        group_by: z.enum(['conversation_id', 'response_id']).optional(),
        groups_total: z.number().optional().describe('how many conversations or answers have feedback'),
        groups: z
          .array(
            z.object({
              conversation_id: z.string().optional(),
              response_id: z.string().optional(),
              total_feedback: z.number(),
              average_rating: z.number(),
              analysed: z.number(),
              sentiment_distribution: count,
              average_sentiment: z.number(),
            }),
          )
          .optional(),
      })
      .passthrough(),
  }),
  handler: async ({ principal, query }) => {
    const org = organizationFor(principal, query.organization_id);
    const stats = await feedbackStats({
      organization_id: org,
      feedback_type: query.feedback_type,
      from: query.from ? new Date(query.from) : undefined,
      to: query.to ? new Date(query.to) : undefined,
      group_by: query.group_by,
      groups_limit: query.groups_limit,
    });
    return { success: true, stats };
  },
});
