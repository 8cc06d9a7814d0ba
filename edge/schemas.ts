/** Schema pieces shared by several route files. */
import { z } from 'zod';

export const requiredId = z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');
export const organizationId = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .optional()
  .describe("defaults to the API key's organization");
