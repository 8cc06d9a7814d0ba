/** Schema pieces shared by several route files. */
import { z } from 'zod';

import { REFILL_INTERVALS } from '../activities/identity/constants.ts';

export const requiredId = z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');
export const organizationId = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .optional()
  .describe("defaults to the API key's organization");

/** `?page` (from 1, at most 10,000) and `?limit` of a paged list (docs/api-conventions.md, "Pagination"). */
export const pageParam = z.coerce.number().int().min(1).max(10_000).default(1);
export const limitParam = (byDefault: number, max = 100) => z.coerce.number().int().min(1).max(max).default(byDefault);
/** What a paged list answers beside its items. */
export const pageAnswer = { page: z.number(), limit: z.number(), total: z.number(), has_more: z.boolean() };

/** A key as lists show it: masked, never its secret or hash (`GET /list_api_keys/{user_id}`, `GET /api/keys`). */
export const listedKey = z.object({
  key: z.string(),
  key_id: z.string(),
  created_at: z.string(),
  last_used: z.string().nullable(),
  permissions: z.array(z.string()),
  status: z.enum(['active', 'expiring', 'revoked', 'expired']).describe('expiring: rotated, accepted until expires_at'),
  active: z.boolean().describe('accepted now (active or expiring)'),
  expires_at: z.string().nullable(),
  rotated_to: z.string().nullable().describe('key_id of the key that replaced this one'),
  rotated_from: z.string().nullable().describe('key_id of the key this one replaced'),
  name: z.string().nullable().describe('set by an admin: PATCH /api/keys/{key_id}'),
  meta: z.record(z.string(), z.unknown()).nullable(),
  credits: z
    .object({
      remaining: z.number(),
      refill: z
        .object({ amount: z.number(), interval: z.enum(REFILL_INTERVALS), next_refill_at: z.string() })
        .nullable(),
    })
    .nullable()
    .describe('null: no credits (unlimited but for the per-minute limits)'),
});
