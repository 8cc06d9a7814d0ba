/** The LLM component's schemas, imported by store.ts alone. */
import mongoose, { Schema } from 'mongoose';

import { AGENTS } from './constants.ts';

export { AGENTS };

/** An organization's own configuration of one agent (business and enterprise tiers). */
const llmConfigSchema = new Schema(
  {
    /** `<organization_id>|<agent_name>` */
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    agent_name: { type: String, required: true },
    config_json: { type: String, required: true },
    version: { type: Number, required: true },
    updated_by: { type: String, required: true },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: 'updated_at' }, versionKey: false },
);

/** Where an agent's model calls go; the API key is stored encrypted (AES-256-GCM). */
const providerConfigSchema = new Schema(
  {
    /** the agent name */
    _id: { type: String, required: true },
    provider: { type: String, required: true },
    base_url: { type: String, required: true },
    models: { type: [String], default: [] },
    api_key_enc: { type: String },
    api_key_hint: { type: String },
    version: { type: Number, required: true },
    updated_by: { type: String, required: true },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: 'updated_at' }, versionKey: false },
);
// a fallback names its provider by label (store.ts providerByLabel)
providerConfigSchema.index({ provider: 1 });

/** The platform-wide default configuration (JSON text), one document. */
const defaultConfigSchema = new Schema(
  {
    _id: { type: String, required: true },
    config: { type: String, required: true },
    version: { type: Number, required: true },
    updated_by: { type: String, required: true },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: 'updated_at' }, versionKey: false },
);

/** Every change, who made it and what changed (secrets redacted): `<scope>#<version>` is unique. */
const configVersionSchema = new Schema(
  {
    _id: { type: String, required: true },
    scope: { type: String, required: true },
    version: { type: Number, required: true },
    changed_by: { type: String, required: true },
    diff_json: { type: String, required: true },
    /** the version this one restored (a rollback) */
    rollback_of: { type: Number },
  },
  { timestamps: { createdAt: 'changed_at', updatedAt: false }, versionKey: false },
);
configVersionSchema.index({ scope: 1, version: -1 });

export interface LlmConfigDoc {
  _id: string;
  organization_id: string;
  agent_name: string;
  config_json: string;
  version: number;
  updated_by: string;
  created_at: Date;
  updated_at: Date;
}
export interface ProviderConfigDoc {
  _id: string;
  provider: string;
  base_url: string;
  models: string[];
  api_key_enc?: string;
  api_key_hint?: string;
  version: number;
  updated_by: string;
  created_at: Date;
  updated_at: Date;
}
export interface DefaultConfigDoc {
  _id: string;
  config: string;
  version: number;
  updated_by: string;
  created_at: Date;
  updated_at: Date;
}
export interface ConfigVersionDoc {
  _id: string;
  scope: string;
  version: number;
  changed_by: string;
  diff_json: string;
  rollback_of?: number;
  changed_at: Date;
}

export const LlmConfig = mongoose.model<LlmConfigDoc>('LlmConfig', llmConfigSchema, 'llm_configs');
export const ProviderConfig = mongoose.model<ProviderConfigDoc>(
  'ProviderConfig',
  providerConfigSchema,
  'llm_provider_configs',
);
export const DefaultConfig = mongoose.model<DefaultConfigDoc>(
  'DefaultConfig',
  defaultConfigSchema,
  'llm_default_config',
);
export const ConfigVersion = mongoose.model<ConfigVersionDoc>(
  'ConfigVersion',
  configVersionSchema,
  'llm_config_versions',
);

/**
 * One entry of a meter (see meter.ts): `<key>|<seq>`, dense from 1 per key, each holding the
 * whole state after it (tokens and calls settled, holds still open).
 */
const meterEntrySchema = new Schema(
  {
    _id: { type: String, required: true },
    key: { type: String, required: true },
    seq: { type: Number, required: true },
    op: { type: String, required: true },
    used: { type: Number, required: true },
    requests: { type: Number, required: true },
    open: { type: [{ _id: false, id: String, tokens: Number, requests: Number, exp: Date }], default: [] },
    /** when the key's window ends (its entries may be dropped a while after) */
    ends_at: { type: Date },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: false }, versionKey: false },
);
meterEntrySchema.index({ key: 1, seq: -1 });
meterEntrySchema.index({ ends_at: 1 });

/** Every attempt of a model call through the gateway (fallbacks included), with its outcome. */
const attemptSchema = new Schema(
  {
    /** `<call_id>#<attempt>` */
    _id: { type: String, required: true },
    call_id: { type: String, required: true },
    attempt: { type: Number, required: true },
    organization_id: { type: String, required: true },
    user_id: { type: String, required: true },
    agent: { type: String, required: true },
    provider: { type: String, required: true },
    model: { type: String, required: true },
    outcome: { type: String, required: true },
    status: { type: Number },
    ms: { type: Number, required: true },
    tokens: { type: Number, required: true },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: false }, versionKey: false },
);
attemptSchema.index({ organization_id: 1, created_at: -1 });
// A user's attempts (their export and erasure), without reading the organization's.
attemptSchema.index({ organization_id: 1, user_id: 1, created_at: 1 });

export interface MeterHold {
  id: string;
  tokens: number;
  requests: number;
  exp: Date;
}
export interface MeterEntryDoc {
  _id: string;
  key: string;
  seq: number;
  op: string;
  used: number;
  requests: number;
  open: MeterHold[];
  ends_at?: Date;
  created_at: Date;
}
export interface AttemptDoc {
  _id: string;
  call_id: string;
  attempt: number;
  organization_id: string;
  user_id: string;
  agent: string;
  provider: string;
  model: string;
  outcome: string;
  status?: number;
  ms: number;
  tokens: number;
  created_at: Date;
}

/** Calls and tokens per organization, agent and minute. */
export const RateMeter = mongoose.model<MeterEntryDoc>('LlmRateMeter', meterEntrySchema, 'llm_rate_meters');
/** Tokens per organization, agent and budget window. */
export const BudgetMeter = mongoose.model<MeterEntryDoc>('LlmBudgetMeter', meterEntrySchema, 'llm_budget_meters');
/** Tokens held by calls in progress, per user (the balance itself is billing's). */
export const BalanceMeter = mongoose.model<MeterEntryDoc>('LlmBalanceMeter', meterEntrySchema, 'llm_balance_holds');
export const Attempt = mongoose.model<AttemptDoc>('LlmAttempt', attemptSchema, 'llm_attempts');
