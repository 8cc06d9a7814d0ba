/**
 * The gift provider as the organization's admins see it: its balance (and the sandbox's, set by
 * hand), the organization's gift settings (low-balance threshold, scheduled catalogue sync) and a
 * catalogue sync now. Errors are `{success:false, error}` like every gift route.
 */
import { z } from 'zod';

import {
  giftSettingsOf,
  providerBalance,
  putGiftSettings,
  setSandboxBalance,
  syncCatalogue,
} from '../../activities/gifts/index.ts';
import { organizationFor } from '../auth.ts';
import { defineRoute } from '../http.ts';
import { organizationId } from '../schemas.ts';

const tag = 'gifts';
const errors = 'success' as const;
const orgQuery = z.object({ organization_id: organizationId });
const currency = z
  .string()
  .trim()
  .transform((c) => c.toUpperCase())
  .refine((c) => /^[A-Z]{3}$/.test(c), 'must be an ISO 4217 currency code, e.g. "USD"');
const money = z.number().min(0).max(1_000_000_000);

const balanceAnswer = z.object({
  success: z.literal(true),
  provider: z.enum(['sandbox', 'reloadly']),
  balance: z.number(),
  currency: z.string(),
  low_balance_threshold: z.number().nullable().describe("the organization's threshold, in currency (null: none)"),
  low: z.boolean().describe('the balance is under the threshold'),
  checked_at: z.string(),
});

defineRoute({
  method: 'GET',
  paths: ['/api/gifts/provider/balance'],
  tag,
  errors,
  summary:
    "The gift provider account's balance, read now (admin): the sandbox's is the organization's own, Reloadly's the platform's; a read under the organization's threshold records gifts.low_balance once per fall",
  auth: 'admin',
  query: orgQuery,
  response: balanceAnswer,
  handler: async ({ principal, query }) => ({
    success: true,
    ...(await providerBalance(organizationFor(principal, query.organization_id))),
  }),
});

defineRoute({
  method: 'PUT',
  paths: ['/api/gifts/provider/sandbox-balance'],
  statuses: { 409: 'The gift provider is not the sandbox' },
  tag,
  errors,
  summary:
    "Sets the organization's sandbox provider account (admin; GIFT_PROVIDER=sandbox only): orders are paid from it, so an unfunded account can be tried",
  auth: 'admin',
  audit: {
    action: 'gift_sandbox_balance.set',
    target: ({ principal, body }) => ({
      type: 'organization',
      id: organizationFor(principal, body.organization_id),
    }),
    keep: ['balance', 'currency'],
  },
  body: z.object({ organization_id: organizationId, balance: money, currency: currency.default('USD') }),
  response: balanceAnswer,
  handler: async ({ principal, body }) => ({
    success: true,
    ...(await setSandboxBalance(organizationFor(principal, body.organization_id), {
      balance: body.balance,
      currency: body.currency,
    })),
  }),
});

const settingsAnswer = z.object({
  success: z.literal(true),
  organization_id: z.string(),
  low_balance_threshold: z.number().nullable(),
  catalogue_sync: z.object({ scheduled: z.boolean(), points_per_unit: z.number() }).nullable(),
  last_sync: z
    .object({
      at: z.string(),
      created: z.number(),
      updated: z.number(),
      withdrawn: z.number(),
      unchanged: z.number(),
      skipped: z.number(),
    })
    .nullable()
    .describe('the counts of the latest catalogue sync, by hand or scheduled'),
});

defineRoute({
  method: 'GET',
  paths: ['/api/gifts/settings'],
  tag,
  errors,
  summary: "The organization's gift settings (admin): low-balance threshold, scheduled catalogue sync, the last sync",
  auth: 'admin',
  query: orgQuery,
  response: settingsAnswer,
  handler: async ({ principal, query }) => {
    const org = organizationFor(principal, query.organization_id);
    return { success: true, organization_id: org, ...(await giftSettingsOf(org)) };
  },
});

defineRoute({
  method: 'PUT',
  paths: ['/api/gifts/settings'],
  tag,
  errors,
  summary:
    "Replaces the organization's gift settings (admin): the threshold under which gifts.low_balance is recorded (a new one watches afresh) and the daily catalogue sync",
  auth: 'admin',
  audit: {
    action: 'gift_settings.update',
    target: ({ principal, body }) => ({ type: 'gift_settings', id: organizationFor(principal, body.organization_id) }),
    keep: ['low_balance_threshold', 'catalogue_sync'],
  },
  body: z.object({
    organization_id: organizationId,
    low_balance_threshold: money.nullable().describe("in the provider account's currency; null: no alert"),
    catalogue_sync: z
      .object({
        scheduled: z.boolean().describe("import the provider's catalogue daily"),
        points_per_unit: z
          .number()
          .positive()
          .max(1_000_000)
          .describe("points per unit of the provider account's currency, pricing imported gifts"),
      })
      .strict()
      .nullable(),
  }),
  response: settingsAnswer,
  handler: async ({ principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    const view = await putGiftSettings(org, {
      low_balance_threshold: body.low_balance_threshold,
      catalogue_sync: body.catalogue_sync,
    });
    return { success: true, organization_id: org, ...view };
  },
});

defineRoute({
  method: 'POST',
  paths: ['/api/gifts/catalogue/sync'],
  statuses: { 502: "The gift provider's catalogue could not be read (nothing changed)" },
  tag,
  errors,
  summary:
    "Imports the gift provider's catalogue now (admin): new products created as gifts with denominations, changed ones updated, withdrawn ones marked available: false (never deleted); answers the counts",
  auth: 'admin',
  audit: {
    action: 'gift_catalogue.sync',
    target: ({ principal, body }) => ({ type: 'gift_catalogue', id: organizationFor(principal, body.organization_id) }),
    keep: ['points_per_unit', 'created', 'updated', 'withdrawn'],
  },
  body: z.object({
    organization_id: organizationId,
    points_per_unit: z
      .number()
      .positive()
      .max(1_000_000)
      .optional()
      .describe("points per unit of the provider account's currency (default: the settings' catalogue_sync)"),
  }),
  response: z.object({
    success: z.literal(true),
    provider: z.string(),
    products: z.number().describe("products the provider's catalogue holds"),
    created: z.number(),
    updated: z.number(),
    withdrawn: z.number(),
    unchanged: z.number(),
    skipped: z.number().describe('products that could not be priced in the account currency'),
  }),
  handler: async ({ principal, body }) => ({
    success: true,
    ...(await syncCatalogue(organizationFor(principal, body.organization_id), body.points_per_unit)),
  }),
});
