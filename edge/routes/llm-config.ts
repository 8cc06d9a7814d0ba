/**
 * LLM configuration service (prefix /api/llm-config): effective settings per agent
 * (free tier: the default) with their limits and budget, organization settings
 * (business/enterprise admins), provider settings with masked keys (admins read, system admins
 * write), the default configuration and the overview (system admins). Every change is versioned;
 * admins read the history and roll back to an earlier version; admins read the model calls'
 * attempts.
 */
import { z } from 'zod';

import { forbidden } from '../../activities/core/errors.ts';
import { AGENTS } from '../../activities/llm/constants.ts';
import {
  type AgentSettings,
  budgetStatus,
  configHistory,
  effectiveConfig,
  getDefaultConfig,
  getProviderConfig,
  listAttempts,
  rollbackDefault,
  rollbackOrganization,
  scopesOf,
  setDefaultConfig,
  settingsSchema,
  systemOverview,
  updateOrganizationConfig,
  updateProviderConfig,
} from '../../activities/llm/index.ts';
import { LEVEL, organizationFor } from '../auth.ts';
import { defineRoute } from '../http.ts';
import { organizationId } from '../schemas.ts';

const tag = 'llm configuration';
const P = '/api/llm-config';
const agent = z.enum(AGENTS);
const settings = settingsSchema;

const effectiveView = (out: { settings: AgentSettings; source: string; tier: string }, organization_id: string) => {
  const { agent_specific_settings, ...llm_settings } = out.settings;
  return { llm_settings, agent_specific_settings, source: out.source, tier: out.tier, organization_id };
};

const budgetView = z.object({
  tokens: z.number(),
  period: z.string(),
  window_start: z.string(),
  resets_at: z.string(),
  used: z.number(),
  reserved: z.number(),
  remaining: z.number(),
});
const paging = {
  page: z.coerce.number().int().min(1).max(10_000).default(1),
  limit: z.coerce.number().int().min(1).max(100).default(20),
};

defineRoute({
  method: 'GET',
  paths: [`${P}/llm-configs`],
  tag,
  summary:
    "The agent's effective settings: the organization's own (business/enterprise) over the default, limits and budget over the tier's; the free tier gets the default. Admins also see the budget's current window (`budget_status`)",
  auth: 'key',
  query: z.object({ agent_name: agent, organization_id: organizationId }),
  response: z
    .object({
      llm_settings: z.record(z.string(), z.unknown()),
      agent_specific_settings: z.record(z.string(), z.unknown()),
      budget_status: budgetView.optional(),
    })
    .passthrough(),
  handler: async ({ principal, query }) => {
    const org = organizationFor(principal, query.organization_id);
    const out = await effectiveConfig(org, query.agent_name);
    const view = effectiveView(out, org);
    // What the organization spends is for its administrators.
    return principal.level >= LEVEL.admin
      ? { ...view, budget_status: await budgetStatus(org, query.agent_name, out.settings.budget) }
      : view;
  },
});

defineRoute({
  method: 'POST',
  paths: [`${P}/update-llm-config`],
  statuses: { 503: 'The configuration is being changed concurrently; retry' },
  tag,
  summary:
    "Sets the organization's settings of an agent (admin of a business or enterprise organization; free: 403), limits, budget and fallbacks included",
  auth: 'admin',
  audit: {
    action: 'llm_config.update',
    target: ({ body }) => ({ type: 'llm_agent_config', id: body.agent_name }),
    keep: ['*'],
  },
  body: z.object({ agent_name: agent, config_json: settings, organization_id: organizationId }),
  response: z.object({ success: z.literal(true), message: z.string(), version: z.number() }).passthrough(),
  handler: async ({ principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    const out = await updateOrganizationConfig(org, body.agent_name, body.config_json, principal.user_id);
    return {
      success: true,
      message: `Configuration of ${body.agent_name} updated`,
      version: out.version,
      ...effectiveView(out, org),
    };
  },
});

defineRoute({
  method: 'GET',
  paths: [`${P}/provider-config/:agent_name`],
  tag,
  summary:
    "Where the agent's model calls go (admin; any other key: 403 `Only administrators can access provider configurations`); the API key is masked",
  // Checked here rather than by the route's level: this refusal has its own wording.
  auth: 'key',
  params: z.object({ agent_name: agent }),
  response: z.object({ success: z.literal(true), config: z.record(z.string(), z.unknown()) }),
  handler: async ({ principal, params }) => {
    if (principal.level < LEVEL.admin) throw forbidden('Only administrators can access provider configurations');
    return { success: true, config: await getProviderConfig(params.agent_name) };
  },
});

defineRoute({
  method: 'POST',
  paths: [`${P}/update-provider-config`],
  statuses: { 503: 'The configuration is being changed concurrently; retry' },
  tag,
  summary:
    "Sets the agent's provider (system admin): an OpenAI-compatible base URL, API key (stored encrypted), models",
  auth: 'sysadmin',
  audit: {
    action: 'llm_provider.update',
    target: ({ body }) => ({ type: 'llm_provider', id: body.agent_name }),
    keep: ['*'],
  },
  body: z.object({
    agent_name: agent,
    config_json: z.object({
      provider: z.string().trim().min(1).max(50),
      base_url: z.url({ protocol: /^https?$/ }).max(2000),
      api_key: z.string().min(1).max(500).optional().describe('kept when omitted'),
      models: z.array(z.string().min(1).max(200)).max(100).optional(),
    }),
  }),
  response: z.object({ success: z.literal(true), config: z.record(z.string(), z.unknown()) }),
  handler: async ({ principal, body }) => ({
    success: true,
    config: await updateProviderConfig(body.agent_name, body.config_json, principal.user_id),
  }),
});

defineRoute({
  method: 'GET',
  paths: [`${P}/default-config`],
  tag,
  summary: 'The default configuration as JSON text (system admin)',
  auth: 'sysadmin',
  response: z.object({ config: z.string() }).passthrough(),
  handler: async () => getDefaultConfig(),
});

defineRoute({
  method: 'POST',
  paths: [`${P}/default-config`],
  tag,
  summary: 'Replaces the default configuration (system admin); `config` is JSON text of an object',
  auth: 'sysadmin',
  audit: {
    action: 'llm_default_config.update',
    target: () => ({ type: 'llm_default_config', id: 'default' }),
    keep: ['*'],
  },
  body: z.object({ config: z.string().min(2).max(200_000) }),
  response: z.object({ success: z.literal(true), version: z.number() }),
  handler: async ({ principal, body }) => ({
    success: true,
    ...(await setDefaultConfig(body.config, principal.user_id)),
  }),
});

defineRoute({
  method: 'GET',
  paths: [`${P}/system-overview`],
  tag,
  summary:
    'Default configuration, version history, token usage statistics and provider health (probes each provider) (system admin)',
  auth: 'sysadmin',
  response: z.object({
    default_config: z.unknown(),
    version_history: z.unknown(),
    usage_statistics: z.unknown(),
    system_status: z
      .object({ active_providers: z.array(z.string()), total_configurations: z.number(), system_health: z.string() })
      .passthrough(),
  }),
  handler: async () => systemOverview(),
});

defineRoute({
  method: 'GET',
  paths: [`${P}/history`],
  tag,
  summary:
    "Versions of the configuration, newest first, each with what changed (secrets masked): the organization's agent settings (admin), or `scope` default (system admin) or provider (admin)",
  auth: 'admin',
  query: z.object({
    agent_name: agent.optional(),
    organization_id: organizationId,
    scope: z.enum(['organization', 'default', 'provider']).default('organization'),
    ...paging,
  }),
  response: z.object({
    versions: z.array(
      z.object({
        scope: z.string(),
        version: z.number(),
        changed_by: z.string(),
        changed_at: z.string(),
        rollback_of: z.number().nullable(),
        changes: z.record(z.string(), z.object({ from: z.unknown(), to: z.unknown() })),
      }),
    ),
    page: z.number(),
    limit: z.number(),
    total: z.number(),
    has_more: z.boolean(),
  }),
  handler: async ({ principal, query }) => {
    const org = organizationFor(principal, query.organization_id);
    if (query.scope === 'default' && principal.level < LEVEL.sysadmin)
      throw forbidden("The default configuration's history is for system administrators");
    return configHistory(scopesOf(query.scope, org, query.agent_name), query.page, query.limit);
  },
});

defineRoute({
  method: 'POST',
  paths: [`${P}/rollback`],
  statuses: {
    409: 'That version is no longer valid settings; set them instead',
    503: 'The configuration is being changed concurrently; retry',
  },
  tag,
  summary:
    "Writes a new version equal to `version`: of the organization's settings of `agent_name` (admin of a business or enterprise organization; free: 403), or without `agent_name` of the default configuration (system admin). Unknown version: 404",
  auth: 'admin',
  audit: {
    action: 'llm_config.rollback',
    target: ({ body }) =>
      body.agent_name
        ? { type: 'llm_agent_config', id: body.agent_name }
        : { type: 'llm_default_config', id: 'default' },
    keep: ['*'],
  },
  body: z.object({ version: z.number().int().min(1), agent_name: agent.optional(), organization_id: organizationId }),
  response: z
    .object({ success: z.literal(true), message: z.string(), version: z.number(), rollback_of: z.number() })
    .passthrough(),
  handler: async ({ principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    if (!body.agent_name) {
      if (principal.level < LEVEL.sysadmin)
        throw forbidden(
          "Rolling back the default configuration is for system administrators; name an agent_name to roll back your organization's settings",
        );
      const out = await rollbackDefault(body.version, principal.user_id);
      return {
        success: true,
        message: `Default configuration restored to version ${body.version}`,
        version: out.version,
        rollback_of: body.version,
      };
    }
    const out = await rollbackOrganization(org, body.agent_name, body.version, principal.user_id);
    return {
      success: true,
      message: `Configuration of ${body.agent_name} restored to version ${body.version}`,
      version: out.version,
      rollback_of: body.version,
      ...effectiveView(out, org),
    };
  },
});

defineRoute({
  method: 'GET',
  paths: [`${P}/attempts`],
  tag,
  summary:
    "The organization's model call attempts through the gateway, newest first (admin): each fallback tried, its outcome (ok, rate_limited, server_error, timeout, unreachable, error, refused, not_configured) and tokens",
  auth: 'admin',
  query: z.object({ agent_name: agent.optional(), organization_id: organizationId, ...paging }),
  response: z.object({
    attempts: z.array(
      z.object({
        call_id: z.string(),
        attempt: z.number(),
        user_id: z.string(),
        agent_name: z.string(),
        provider: z.string(),
        model: z.string(),
        outcome: z.string(),
        status: z.number().nullable(),
        ms: z.number(),
        tokens: z.number(),
        at: z.string(),
      }),
    ),
    page: z.number(),
    limit: z.number(),
    total: z.number(),
    has_more: z.boolean(),
  }),
  handler: async ({ principal, query }) =>
    listAttempts(organizationFor(principal, query.organization_id), query.agent_name, query.page, query.limit),
});
