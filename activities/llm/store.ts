/**
 * The LLM component's data: configurations (default, per organization and agent, per provider)
 * and their versions, the meters of reservations, and the attempts of model calls. The only file
 * that reads or writes the LLM models; token usage and balances are billing's (billing.ts).
 * Settings are read by `_id`; versions and meter entries are numbered inserts under the primary
 * key (docs/storage.md, "LLM").
 */
import type { Model } from 'mongoose';

import { byId, insertOnce, jsonText } from '../core/db/index.ts';
import type { AgentName } from './constants.ts';
import {
  Attempt,
  type AttemptDoc,
  BalanceMeter,
  BudgetMeter,
  ConfigVersion,
  type ConfigVersionDoc,
  DefaultConfig,
  type DefaultConfigDoc,
  LlmConfig,
  type LlmConfigDoc,
  type MeterEntryDoc,
  type MeterHold,
  ProviderConfig,
  type ProviderConfigDoc,
  RateMeter,
} from './models.ts';

export type { AttemptDoc, MeterEntryDoc, MeterHold, ProviderConfigDoc };

type Changes = Record<string, { from: unknown; to: unknown }>;
/** A version's changes, and an organization's settings, are stored as JSON text. */
const changesText = jsonText<Changes>(() => ({}));
const settingsText = jsonText<Record<string, unknown>>(() => ({}));

// ---- versions

export interface ConfigVersion {
  scope: string;
  version: number;
  changed_by: string;
  changed_at: Date;
  rollback_of?: number;
  changes: Changes;
}
const versionOf = (d: ConfigVersionDoc): ConfigVersion => ({
  scope: d.scope,
  version: d.version,
  changed_by: d.changed_by,
  changed_at: new Date(d.changed_at),
  rollback_of: d.rollback_of,
  changes: changesText.decode(d.diff_json),
});

/** The newest version number of a scope (0: none), by the (scope, version) index. */
export async function lastVersion(scope: string): Promise<number> {
  const last = await ConfigVersion.findOne({ scope }, { version: 1 })
    .sort({ version: -1 })
    .lean<Pick<ConfigVersionDoc, 'version'>>();
  return last?.version ?? 0;
}

/** Records version `version` of the scope; false when another writer took that number. */
export async function insertVersion(v: {
  scope: string;
  version: number;
  changed_by: string;
  changes: Changes;
  rollback_of?: number;
}): Promise<boolean> {
  return insertOnce(ConfigVersion, {
    _id: `${v.scope}#${v.version}`,
    scope: v.scope,
    version: v.version,
    changed_by: v.changed_by,
    diff_json: changesText.encode(v.changes),
    rollback_of: v.rollback_of,
  });
}

/** Versions of the scopes (all when none are given), newest first. */
export async function versionsOf(
  scopes: string[] | undefined,
  page: number,
  limit: number,
): Promise<{ total: number; versions: ConfigVersion[] }> {
  const filter = scopes ? { scope: { $in: scopes } } : {};
  const [total, docs] = await Promise.all([
    ConfigVersion.countDocuments(filter),
    ConfigVersion.find(filter)
      .sort({ changed_at: -1, version: -1 })
      .skip((page - 1) * limit)
      .limit(limit)
      .lean<ConfigVersionDoc[]>(),
  ]);
  return { total, versions: docs.map(versionOf) };
}

/** Versions 1..`version` of a scope, oldest first. */
export async function versionsUpTo(scope: string, version: number): Promise<ConfigVersion[]> {
  const docs = await ConfigVersion.find({ scope, version: { $lte: version } }).lean<ConfigVersionDoc[]>();
  return docs.map(versionOf).sort((a, b) => a.version - b.version);
}

export async function countVersions(): Promise<number> {
  return ConfigVersion.countDocuments({});
}

// ---- default configuration

export const defaultConfigDoc = () => byId<DefaultConfigDoc>(DefaultConfig, 'default');

export async function writeDefaultConfig(text: string, version: number, updated_by: string): Promise<void> {
  await DefaultConfig.replaceOne(
    { _id: 'default' },
    { _id: 'default', config: text, version, updated_by },
    { upsert: true },
  );
}

// ---- an organization's configuration of an agent

export async function organizationConfig(
  organization_id: string,
  agent: AgentName,
): Promise<{ settings: Record<string, unknown>; version: number } | null> {
  const doc = await byId<LlmConfigDoc>(LlmConfig, `${organization_id}|${agent}`);
  return doc ? { settings: settingsText.decode(doc.config_json), version: doc.version } : null;
}

export async function writeOrganizationConfig(
  organization_id: string,
  agent: AgentName,
  settings: unknown,
  version: number,
  updated_by: string,
): Promise<void> {
  const _id = `${organization_id}|${agent}`;
  await LlmConfig.replaceOne(
    { _id },
    { _id, organization_id, agent_name: agent, config_json: JSON.stringify(settings), version, updated_by },
    { upsert: true },
  );
}

export async function countOrganizationConfigs(): Promise<number> {
  return LlmConfig.countDocuments({});
}

// ---- providers

export const providerDoc = (agent: AgentName) => byId<ProviderConfigDoc>(ProviderConfig, agent);

export async function writeProviderConfig(
  agent: AgentName,
  doc: Omit<ProviderConfigDoc, '_id' | 'created_at' | 'updated_at'>,
): Promise<void> {
  await ProviderConfig.replaceOne({ _id: agent }, { _id: agent, ...doc }, { upsert: true });
}

/** The first provider configuration (by agent name) labelled `provider`. */
export async function providerByLabel(provider: string): Promise<ProviderConfigDoc | null> {
  return ProviderConfig.findOne({ provider }).sort({ _id: 1 }).lean<ProviderConfigDoc>();
}

export async function allProviders(): Promise<ProviderConfigDoc[]> {
  return ProviderConfig.find({}).lean<ProviderConfigDoc[]>();
}

// ---- attempts

export async function insertAttempt(doc: Omit<AttemptDoc, 'created_at'>): Promise<void> {
  await Attempt.create(doc);
}

/** The organization's attempts (of one agent), newest first, by the (organization_id, created_at) index. */
export async function attemptsOf(
  organization_id: string,
  agent: AgentName | undefined,
  page: number,
  limit: number,
): Promise<{ total: number; docs: AttemptDoc[] }> {
  const filter = { organization_id, ...(agent ? { agent } : {}) };
  const [total, docs] = await Promise.all([
    Attempt.countDocuments(filter),
    Attempt.find(filter)
      .sort({ created_at: -1, attempt: -1 })
      .skip((page - 1) * limit)
      .limit(limit)
      .lean<AttemptDoc[]>(),
  ]);
  return { total, docs };
}

// ---- meters (meter.ts)

export type MeterKind = 'rate' | 'budget' | 'balance';
const meters: Record<MeterKind, Model<MeterEntryDoc>> = { rate: RateMeter, budget: BudgetMeter, balance: BalanceMeter };

/** The key's newest entry: one row read through the (key, seq) index. */
export const meterHead = (kind: MeterKind, key: string) =>
  meters[kind].findOne({ key }).sort({ seq: -1 }).lean<MeterEntryDoc>();

/** Appends entry `seq` of the key; false when another writer appended it first. */
export async function insertMeterEntry(
  kind: MeterKind,
  e: { key: string; seq: number; op: string; used: number; requests: number; open: MeterHold[]; ends_at?: Date },
): Promise<boolean> {
  return insertOnce(meters[kind], { _id: `${e.key}|${e.seq}`, ...e });
}

/** Drops the entries of windows that ended before `before` (the ends_at index). */
export async function pruneMeter(kind: MeterKind, before: Date): Promise<void> {
  await meters[kind].deleteMany({ ends_at: { $lt: before } });
}

// ---- one person's data (user-data.ts)

/** The user's attempts, oldest first: the (organization_id, created_at) index, the user filtered among the organization's. */
export async function attemptsOfUser(organization_id: string, user_id: string): Promise<AttemptDoc[]> {
  return Attempt.find({ organization_id, user_id }).sort({ created_at: 1, attempt: 1 }).lean<AttemptDoc[]>();
}

/** Replaces the user in their attempts by `tombstone` (erasure); the count changed. */
export async function tombstoneAttempts(organization_id: string, user_id: string, tombstone: string): Promise<number> {
  return (await Attempt.updateMany({ organization_id, user_id }, { $set: { user_id: tombstone } })).modifiedCount ?? 0;
}

/** Every entry of a meter key, oldest first, on the (key, seq) index. */
export async function meterEntriesOf(kind: MeterKind, key: string): Promise<MeterEntryDoc[]> {
  return meters[kind].find({ key }).sort({ seq: 1 }).lean<MeterEntryDoc[]>();
}

/** Deletes every entry of a meter key, on the (key, seq) index. */
export async function deleteMeterKey(kind: MeterKind, key: string): Promise<number> {
  return (await meters[kind].deleteMany({ key })).deletedCount ?? 0;
}

/** Versions of the scopes whose change was made by `user_id`, on the (scope, version) index. */
export async function versionsChangedBy(scopes: string[], user_id: string): Promise<ConfigVersion[]> {
  const docs = await ConfigVersion.find({ scope: { $in: scopes }, changed_by: user_id }).lean<ConfigVersionDoc[]>();
  return docs.map(versionOf).sort((a, b) => a.changed_at.getTime() - b.changed_at.getTime());
}

/**
 * Replaces `user_id` by `tombstone` as the author of versions of the scopes and of the current
 * configurations (organization's per agent, providers, default), each read by `_id`.
 */
export async function tombstoneConfigAuthor(
  scopes: string[],
  organizationConfigIds: string[],
  providerIds: string[],
  user_id: string,
  tombstone: string,
): Promise<{ versions: number; configs: number }> {
  const versions =
    (
      await ConfigVersion.updateMany(
        { scope: { $in: scopes }, changed_by: user_id },
        { $set: { changed_by: tombstone } },
      )
    ).modifiedCount ?? 0;
  const set = { $set: { updated_by: tombstone } };
  const configs = await Promise.all([
    LlmConfig.updateMany({ _id: { $in: organizationConfigIds }, updated_by: user_id }, set),
    ProviderConfig.updateMany({ _id: { $in: providerIds }, updated_by: user_id }, set),
    DefaultConfig.updateMany({ _id: 'default', updated_by: user_id }, set),
  ]);
  return { versions, configs: configs.reduce((n, r) => n + (r.modifiedCount ?? 0), 0) };
}

/** The current configurations `user_id` last wrote (organization's per agent, providers, default), by `_id`. */
export async function configsWrittenBy(
  organizationConfigIds: string[],
  providerIds: string[],
  user_id: string,
): Promise<Array<{ _id: string; version: number; updated_at: Date }>> {
  const pick = { _id: 1, version: 1, updated_at: 1 } as const;
  const found = await Promise.all([
    LlmConfig.find({ _id: { $in: organizationConfigIds }, updated_by: user_id }, pick).lean<
      Array<{ _id: string; version: number; updated_at: Date }>
    >(),
    ProviderConfig.find({ _id: { $in: providerIds }, updated_by: user_id }, pick).lean<
      Array<{ _id: string; version: number; updated_at: Date }>
    >(),
    DefaultConfig.find({ _id: 'default', updated_by: user_id }, pick).lean<
      Array<{ _id: string; version: number; updated_at: Date }>
    >(),
  ]);
  return found.flat();
}
