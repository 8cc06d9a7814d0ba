/** Schema pieces shared by several route files. */
import { z } from 'zod';

export const id = (what: string) => z.string().trim().min(1, `${what} is required`).max(200, `${what} is too long`);
export const organizationId = z.string().trim().min(1).max(100).optional().describe('defaults to the API key\'s organization');
export const iso = (d: Date | string) => (typeof d === 'string' ? d : d.toISOString());
