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
    "Feedback statistics of the caller's organization (admin): totals, sentiment and category distributions, average rating; filters from/to (created_at) and feedback_type",
  auth: 'admin',
  query: z.object({
    organization_id: organizationId,
    feedback_type: z.enum(FEEDBACK_TYPES).optional(),
    from: z.iso.datetime({ offset: true }).or(z.iso.date()).optional().describe('inclusive, ISO 8601'),
    to: z.iso.datetime({ offset: true }).or(z.iso.date()).optional().describe('exclusive, ISO 8601'),
  }),
  response: z.object({
    success: z.literal(true),
    stats: z
      .object({
        total_feedback: z.number(),
        sentiment_distribution: count,
        category_distribution: count,
        average_rating: z.number(),
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
    });
    return { success: true, stats };
  },
});
