/**
 * LLM configuration service (prefix /api/llm-config): effective settings per agent
 * (free tier: the default), organization settings (business/enterprise admins), provider
 * settings with masked keys (admins read, system admins write), the default configuration and the
 * overview (system admins). Every change is versioned.
 */
import { z } from 'zod';
import { AGENTS } from '../../activities/llm/models';
import { effectiveConfig, getDefaultConfig, type AgentSettings, getProviderConfig, setDefaultConfig, systemOverview, updateOrganizationConfig, updateProviderConfig } from '../../activities/llm/configs';
import { forbidden } from '../../activities/errors';
import { LEVEL, organizationFor } from '../auth';
import { defineRoute } from '../http';
import { organizationId } from '../schemas';

const tag = 'llm configuration';
const P = '/api/llm-config';
const agent = z.enum(AGENTS);
const settings = z
  .object({
    provider: z.string().trim().min(1).max(50).optional(),
    model: z.string().trim().min(1).max(200).optional(),
    temperature: z.number().min(0).max(2).optional(),
    max_tokens: z.number().int().positive().max(1_000_000).optional(),
    system_prompt: z.string().max(20_000).optional(),
    agent_specific_settings: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

const effectiveView = (out: { settings: AgentSettings; source: string; tier: string }, organization_id: string) => {
  const { agent_specific_settings, ...llm_settings } = out.settings;
  return { llm_settings, agent_specific_settings, source: out.source, tier: out.tier, organization_id };
};

defineRoute({
  method: 'GET',
  paths: [`${P}/llm-configs`],
  tag,
  summary: "The agent's effective settings: the organization's own (business/enterprise) over the default; the free tier gets the default",
  auth: 'key',
  query: z.object({ agent_name: agent, organization_id: organizationId }),
  response: z.object({ llm_settings: z.record(z.string(), z.unknown()), agent_specific_settings: z.record(z.string(), z.unknown()) }).passthrough(),
  handler: async ({ principal, query }) => {
    const org = organizationFor(principal, query.organization_id);
    return effectiveView(await effectiveConfig(org, query.agent_name), org);
  },
});

defineRoute({
  method: 'POST',
  paths: [`${P}/update-llm-config`],
  tag,
  summary: "Sets the organization's settings of an agent (admin of a business or enterprise organization; free: 403)",
  auth: 'admin',
  body: z.object({ agent_name: agent, config_json: settings, organization_id: organizationId }),
  response: z.object({ success: z.literal(true), message: z.string(), version: z.number() }).passthrough(),
  handler: async ({ principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    const out = await updateOrganizationConfig(org, body.agent_name, body.config_json, principal.user_id);
    return { success: true, message: `Configuration of ${body.agent_name} updated`, version: out.version, ...effectiveView(out, org) };
  },
});

defineRoute({
  method: 'GET',
  paths: [`${P}/provider-config/:agent_name`],
  tag,
  summary: "Where the agent's model calls go (admin; any other key: 403 `Only administrators can access provider configurations`); the API key is masked",
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
  tag,
  summary: "Sets the agent's provider (system admin): an OpenAI-compatible base URL, API key (stored encrypted), models",
  auth: 'sysadmin',
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
  handler: async ({ principal, body }) => ({ success: true, config: await updateProviderConfig(body.agent_name, body.config_json, principal.user_id) }),
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
  body: z.object({ config: z.string().min(2).max(200_000) }),
  response: z.object({ success: z.literal(true), version: z.number() }),
  handler: async ({ principal, body }) => ({ success: true, ...(await setDefaultConfig(body.config, principal.user_id)) }),
});

defineRoute({
  method: 'GET',
  paths: [`${P}/system-overview`],
  tag,
  summary: 'Default configuration, version history, token usage statistics and provider health (probes each provider) (system admin)',
  auth: 'sysadmin',
  response: z.object({ default_config: z.unknown(), version_history: z.unknown(), usage_statistics: z.unknown(), system_status: z.object({ active_providers: z.array(z.string()), total_configurations: z.number(), system_health: z.string() }).passthrough() }),
  handler: async () => systemOverview(),
});
