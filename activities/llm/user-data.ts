/**
 * llm's part of a user's export and erasure (docs/privacy.md). The component keeps no
 * conversation or prompt; of a person it holds:
 *  - the attempts of the user's model calls (agent, provider, model, outcome, tokens): the
 *    organization's record of calls whose tokens billing's usage counts (same call id), kept with
 *    the person replaced by the tombstone;
 *  - the user's token holds (the `balance` meter, key `<organization>|<user>`): state of calls
 *    in progress, deleted;
 *  - the configuration history and the current configurations name who changed them
 *    (`changed_by`, `updated_by`): the versions rebuild each configuration and roll it back, so
 *    they are kept with the person replaced by the tombstone.
 * The organization's rate and budget meters count per organization and agent, not per person.
 */
import type { UserData, UserScope } from '../core/user-data.ts';
import { AGENTS } from './constants.ts';
import {
  attemptsOfUser,
  configsWrittenBy,
  deleteMeterKey,
  meterEntriesOf,
  tombstoneAttempts,
  tombstoneConfigAuthor,
  versionsChangedBy,
} from './store.ts';
import { organizationScope } from './versions.ts';

const balanceKey = (s: UserScope) => `${s.organization_id}|${s.user_id}`;

/**
 * The configurations the person may have changed: their organization's (per agent) and the
 * platform's (default, providers: a system administrator's), all read by `_id` or scope.
 */
function configPlaces(organization_id: string) {
  return {
    scopes: [
      ...AGENTS.map((a) => organizationScope(organization_id, a)),
      'default',
      ...AGENTS.map((a) => `provider:${a}`),
    ],
    organizationConfigIds: AGENTS.map((a) => `${organization_id}|${a}`),
    providerIds: [...AGENTS],
  };
}

export const llmUserData: UserData = {
  async export(scope) {
    const places = configPlaces(scope.organization_id);
    const [attempts, holds, versions, configs] = await Promise.all([
      attemptsOfUser(scope.organization_id, scope.user_id),
      meterEntriesOf('balance', balanceKey(scope)),
      versionsChangedBy(places.scopes, scope.user_id),
      configsWrittenBy(places.organizationConfigIds, places.providerIds, scope.user_id),
    ]);
    return {
      data: {
        model_calls: attempts.map((a) => ({
          call_id: a.call_id,
          attempt: a.attempt,
          agent: a.agent,
          provider: a.provider,
          model: a.model,
          outcome: a.outcome,
          status: a.status ?? null,
          ms: a.ms,
          tokens: a.tokens,
          at: new Date(a.created_at).toISOString(),
        })),
        token_holds: holds.map((h) => ({
          seq: h.seq,
          op: h.op,
          used: h.used,
          requests: h.requests,
          open: h.open.map((o) => ({
            id: o.id,
            tokens: o.tokens,
            requests: o.requests,
            expires_at: new Date(o.exp).toISOString(),
          })),
          at: new Date(h.created_at).toISOString(),
        })),
        // what the person changed, not the settings' values (organization data, secrets masked or not)
        configuration_changes: versions.map((v) => ({
          scope: v.scope,
          version: v.version,
          changed_at: v.changed_at.toISOString(),
          rollback_of: v.rollback_of ?? null,
          fields: Object.keys(v.changes),
        })),
        configurations_last_written: configs.map((c) => ({
          id: c._id,
          version: c.version,
          updated_at: new Date(c.updated_at).toISOString(),
        })),
      },
      files: [],
    };
  },
  async erase(scope) {
    const places = configPlaces(scope.organization_id);
    // Each step is keyed on the person's id, which it removes: a repeat finds nothing to change.
    const token_holds_deleted = await deleteMeterKey('balance', balanceKey(scope));
    const attempts_tombstoned = await tombstoneAttempts(scope.organization_id, scope.user_id, scope.tombstone);
    const { versions, configs } = await tombstoneConfigAuthor(
      places.scopes,
      places.organizationConfigIds,
      places.providerIds,
      scope.user_id,
      scope.tombstone,
    );
    return {
      token_holds_deleted,
      attempts_tombstoned,
      config_versions_tombstoned: versions,
      configs_tombstoned: configs,
    };
  },
};
