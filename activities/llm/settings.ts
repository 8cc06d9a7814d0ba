/**
 * What an agent's settings may hold (validated with zod at every write), the tiers' default
 * limits and budgets, the UTC windows limits and budgets are counted in, and the component's slice
 * of the configuration (llmSettings).
 */
import { z } from 'zod';

import { slice } from '../core/config.ts';
import { AGENTS } from './constants.ts';

const PERIODS = ['daily', 'weekly', 'monthly'] as const;
export type Period = (typeof PERIODS)[number];
export type Tier = 'free' | 'business' | 'enterprise';

export interface Limits {
  /** model calls (attempts) a minute, per organization and agent */
  rpm: number;
  /** tokens a minute (reserved, then the real count), per organization and agent */
  tpm: number;
}
export interface Budget {
  tokens: number;
  period: Period;
}
export interface Fallback {
  model: string;
  /** a provider configuration's label, `local` for the local engine; omitted: the agent's own provider */
  provider?: string;
  max_tokens?: number;
}

const limitsSchema = z
  .object({
    rpm: z.number().int().min(1).max(1_000_000).optional(),
    tpm: z.number().int().min(1).max(1_000_000_000).optional(),
  })
  .strict()
  .describe("lower than the tier's limits only: a higher value counts as the tier's");
const budgetSchema = z
  .object({ tokens: z.number().int().min(0).max(1_000_000_000_000), period: z.enum(PERIODS) })
  .strict()
  .describe(
    'tokens the organization may spend on this agent per period (UTC windows), on top of each user having to hold the tokens',
  );
const fallbackSchema = z
  .object({
    model: z.string().trim().min(1).max(200),
    provider: z.string().trim().min(1).max(50).optional(),
    max_tokens: z.number().int().positive().max(1_000_000).optional(),
  })
  .strict();

const settingsShape = {
  provider: z.string().trim().min(1).max(50).optional(),
  model: z.string().trim().min(1).max(200).optional(),
  temperature: z.number().min(0).max(2).optional(),
  max_tokens: z.number().int().positive().max(1_000_000).optional(),
  system_prompt: z.string().max(20_000).optional(),
  agent_specific_settings: z.record(z.string(), z.unknown()).optional(),
  limits: limitsSchema.optional(),
  budget: budgetSchema.optional(),
  fallbacks: z
    .array(fallbackSchema)
    .max(4)
    .optional()
    .describe('tried in order when a model call answers 429 or 5xx or times out'),
  timeout_ms: z.number().int().min(1000).max(120_000).optional().describe("one attempt's time limit (default 60000)"),
};

/** An organization's own settings of one agent. */
export const settingsSchema = z.object(settingsShape).strict();
export type SettingsInput = z.infer<typeof settingsSchema>;

/** The default configuration: other keys are kept as they are; known ones must be valid. */
export const defaultConfigSchema = z
  .object({
    agents: z.partialRecord(z.enum(AGENTS), z.object(settingsShape).passthrough()).optional(),
    tiers: z
      .partialRecord(
        z.enum(['free', 'business', 'enterprise']),
        z.object({ limits: limitsSchema.optional(), budget: budgetSchema.optional() }).strict(),
      )
      .optional(),
  })
  .passthrough();

/** Each tier's limits and budget per agent, unless the default configuration's `tiers` says otherwise. */
export const TIER_DEFAULTS: Record<Tier, { limits: Limits; budget: Budget }> = {
  free: { limits: { rpm: 10, tpm: 20_000 }, budget: { tokens: 100_000, period: 'monthly' } },
  business: { limits: { rpm: 120, tpm: 200_000 }, budget: { tokens: 5_000_000, period: 'monthly' } },
  enterprise: { limits: { rpm: 1200, tpm: 2_000_000 }, budget: { tokens: 100_000_000, period: 'monthly' } },
};

export const DEFAULT_TIMEOUT_MS = 60_000;

export function tierDefaults(tier: Tier, defaults: Record<string, unknown>): { limits: Limits; budget: Budget } {
  const own =
    (defaults.tiers as Record<string, { limits?: Partial<Limits>; budget?: Budget }> | undefined)?.[tier] ?? {};
  return {
    limits: { ...TIER_DEFAULTS[tier].limits, ...(own.limits ?? {}) },
    budget: own.budget ?? TIER_DEFAULTS[tier].budget,
  };
}

/** An agent's limits: its own where lower than the tier's (an organization may only tighten them). */
export function effectiveLimits(own: Partial<Limits> | undefined, tier: Limits): Limits {
  return { rpm: Math.min(own?.rpm ?? tier.rpm, tier.rpm), tpm: Math.min(own?.tpm ?? tier.tpm, tier.tpm) };
}

const MINUTE = 60_000;
const DAY = 86_400_000;

export const minuteWindow = (now: Date) => {
  const start = Math.floor(now.getTime() / MINUTE) * MINUTE;
  return { start: new Date(start), end: new Date(start + MINUTE) };
};

/** The budget window holding `now`: a UTC day, an ISO week (from Monday 00:00 UTC), a UTC month. */
export function budgetWindow(period: Period, now: Date): { start: Date; end: Date } {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const d = now.getUTCDate();
  if (period === 'daily') return { start: new Date(Date.UTC(y, m, d)), end: new Date(Date.UTC(y, m, d + 1)) };
  if (period === 'weekly') {
    const start = Date.UTC(y, m, d - ((now.getUTCDay() + 6) % 7));
    return { start: new Date(start), end: new Date(start + 7 * DAY) };
  }
  return { start: new Date(Date.UTC(y, m, 1)), end: new Date(Date.UTC(y, m + 1, 1)) };
}

export const secondsUntil = (end: Date, now: Date) => Math.max(1, Math.ceil((end.getTime() - now.getTime()) / 1000));

const SECRET_NAME = /(^|_)(api_?key|key|secret|password|token)$/i;

/** Values under secret-looking names shown only as their first and last characters. */
export function maskSecrets(v: unknown, mask: (s: string) => string, name = ''): unknown {
  // a provider's key is stored as its masked form already
  if (typeof v === 'string') return SECRET_NAME.test(name) && !/…|••••/.test(v) ? mask(v) : v;
  if (Array.isArray(v)) return v.map((x) => maskSecrets(x, mask, name));
  if (v && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, maskSecrets(x, mask, k)]));
  return v;
}

/**
 * The environment's endpoint, and each agent's engine switch and model: the defaults of an agent not
 * configured for the organization (docs/configuration.md). Read at call time, so a changed
 * configuration applies at once.
 */
export const llmSettings = slice([
  'OPENAI_BASE_URL',
  'OPENAI_API_KEY',
  'LLM_PROVIDER',
  'LLM_MODEL',
  'OCR_ENGINE',
  'OCR_MODEL',
  'SPEECH_ENGINE',
  'SPEECH_MODEL',
  'EMBEDDINGS_PROVIDER',
  'EMBEDDINGS_MODEL',
] as const);
