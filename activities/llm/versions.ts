/**
 * Versions of the LLM configuration: a scope's history, paged, each change with its diff (secrets
 * masked), and rollback: a new version whose configuration equals an earlier one's. Versions
 * store diffs of whole top-level values, so replaying versions 1..n rebuilds version n exactly.
 */
import { maskSecret } from '../core/encryption.ts';
import { forbidden, notFound, PlatformError } from '../core/errors.ts';
import { setDefaultConfig, tierOf, updateOrganizationConfig } from './configs.ts';
import { type AgentName, AGENTS } from './constants.ts';
import { maskSecrets, settingsSchema } from './settings.ts';
import { type AttemptDoc, attemptsOf, type ConfigVersion, versionsOf, versionsUpTo } from './store.ts';

export const organizationScope = (organization_id: string, agent: AgentName) => `org:${organization_id}:${agent}`;

export type HistoryScope = 'organization' | 'default' | 'provider';

export function scopesOf(scope: HistoryScope, organization_id: string, agent?: AgentName): string[] {
  const agents = agent ? [agent] : [...AGENTS];
  if (scope === 'default') return ['default'];
  if (scope === 'provider') return agents.map((a) => `provider:${a}`);
  return agents.map((a) => organizationScope(organization_id, a));
}

const versionView = (d: ConfigVersion) => ({
  scope: d.scope,
  version: d.version,
  changed_by: d.changed_by,
  changed_at: d.changed_at.toISOString(),
  rollback_of: d.rollback_of ?? null,
  changes: maskSecrets(d.changes, maskSecret) as Record<string, { from: unknown; to: unknown }>,
});

export async function configHistory(scopes: string[], page: number, limit: number) {
  const { total, versions } = await versionsOf(scopes, page, limit);
  return { versions: versions.map(versionView), page, limit, total, has_more: page * limit < total };
}

/** The configuration of `scope` as of `version`, rebuilt from the diffs up to it. */
async function configAt(scope: string, version: number): Promise<Record<string, unknown>> {
  const docs = await versionsUpTo(scope, version);
  if (!docs.some((d) => d.version === version)) throw notFound(`Version ${version} of this configuration not found`);
  const state: Record<string, unknown> = {};
  for (const d of docs) {
    for (const [k, c] of Object.entries(d.changes)) {
      if (c.to === null || c.to === undefined) delete state[k];
      else state[k] = c.to;
    }
  }
  return state;
}

/** Writes the organization's settings of `agent` as they were at `version`, as a new version. */
export async function rollbackOrganization(
  organization_id: string,
  agent: AgentName,
  version: number,
  changed_by: string,
) {
  if ((await tierOf(organization_id)) === 'free')
    throw forbidden(
      `Custom LLM configuration needs the business or enterprise tier; organization ${organization_id} is on the free tier`,
    );
  const old = settingsSchema.safeParse(await configAt(organizationScope(organization_id, agent), version));
  if (!old.success)
    throw new PlatformError(
      'conflict',
      `Version ${version} is no longer valid settings (${old.error.issues[0].path.join('.')}: ${old.error.issues[0].message}); set the settings instead`,
    );
  return updateOrganizationConfig(organization_id, agent, old.data, changed_by, version);
}

/** Writes the default configuration as it was at `version`, as a new version. */
export async function rollbackDefault(version: number, changed_by: string) {
  const old = await configAt('default', version);
  try {
    return await setDefaultConfig(JSON.stringify(old), changed_by, version);
  } catch (err) {
    if (err instanceof PlatformError && err.kind === 'invalid')
      throw new PlatformError(
        'conflict',
        `Version ${version} is no longer a valid default configuration (${err.message}); set it instead`,
      );
    throw err;
  }
}

const attemptView = (a: AttemptDoc) => ({
  call_id: a.call_id,
  attempt: a.attempt,
  user_id: a.user_id,
  agent_name: a.agent,
  provider: a.provider,
  model: a.model,
  outcome: a.outcome,
  status: a.status ?? null,
  ms: a.ms,
  tokens: a.tokens,
  at: new Date(a.created_at).toISOString(),
});

/** The organization's model call attempts, newest first. */
export async function listAttempts(organization_id: string, agent: AgentName | undefined, page: number, limit: number) {
  const { total, docs } = await attemptsOf(organization_id, agent, page, limit);
  return { attempts: docs.map(attemptView), page, limit, total, has_more: page * limit < total };
}
