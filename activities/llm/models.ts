import mongoose, { Schema } from 'mongoose';

export const AGENTS = ['support', 'feedback', 'documents', 'ticket_scan', 'text', 'transcription'] as const;
export type AgentName = (typeof AGENTS)[number];

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
  },
  { timestamps: { createdAt: 'changed_at', updatedAt: false }, versionKey: false },
);
configVersionSchema.index({ scope: 1, version: -1 });

export interface LlmConfigDoc { _id: string; organization_id: string; agent_name: string; config_json: string; version: number; updated_by: string; created_at: Date; updated_at: Date }
export interface ProviderConfigDoc { _id: string; provider: string; base_url: string; models: string[]; api_key_enc?: string; api_key_hint?: string; version: number; updated_by: string; created_at: Date; updated_at: Date }
export interface DefaultConfigDoc { _id: string; config: string; version: number; updated_by: string; created_at: Date; updated_at: Date }
export interface ConfigVersionDoc { _id: string; scope: string; version: number; changed_by: string; diff_json: string; changed_at: Date }

export const LlmConfig = mongoose.model<LlmConfigDoc>('LlmConfig', llmConfigSchema, 'llm_configs');
export const ProviderConfig = mongoose.model<ProviderConfigDoc>('ProviderConfig', providerConfigSchema, 'llm_provider_configs');
export const DefaultConfig = mongoose.model<DefaultConfigDoc>('DefaultConfig', defaultConfigSchema, 'llm_default_config');
export const ConfigVersion = mongoose.model<ConfigVersionDoc>('ConfigVersion', configVersionSchema, 'llm_config_versions');
