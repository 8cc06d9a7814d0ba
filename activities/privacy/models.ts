import mongoose, { Schema } from 'mongoose';

import {
  ERASURE_STATUSES,
  type ErasureStatus,
  EXPORT_STATUSES,
  type ExportStatus,
  type Requester,
} from './constants.ts';

const requester = {
  _id: false,
  key_id: { type: String, required: true },
  user_id: { type: String, required: true },
  level: { type: Number, required: true },
};

/**
 * One export of a user's data. `_id` is the export id. `parts` holds, per component, the counts of
 * what it exported (written as each part is gathered); the zip is `object_key` once `ready`, and
 * is removed at `expires_at`.
 */
const exportSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    user_id: { type: String, required: true },
    status: { type: String, enum: EXPORT_STATUSES, required: true },
    requested_by: { type: requester, required: true },
    parts: { type: Schema.Types.Mixed, default: {} },
    object_key: { type: String },
    bytes: { type: Number },
    error: { type: String },
    ready_at: { type: Date },
    expires_at: { type: Date },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: 'updated_at' }, versionKey: false, minimize: false },
);
exportSchema.index({ organization_id: 1, user_id: 1, created_at: -1 });

export interface ExportDoc {
  _id: string;
  organization_id: string;
  user_id: string;
  status: ExportStatus;
  requested_by: Requester;
  parts: Record<string, Record<string, number>>;
  object_key?: string;
  bytes?: number;
  error?: string;
  ready_at?: Date;
  expires_at?: Date;
  created_at: Date;
  updated_at: Date;
}

/**
 * The erasure of one user: `_id` is `<organization_id>:<user_id>`, so a user is erased by one run
 * however often it is asked. `idp_id` is held only while the run needs it (components that key on
 * it) and removed when it completes; `tombstone` replaces the person in what is kept. `steps` says
 * what each component did.
 */
const erasureSchema = new Schema(
  {
    _id: { type: String, required: true },
    erasure_id: { type: String, required: true },
    organization_id: { type: String, required: true },
    user_id: { type: String, required: true },
    idp_id: { type: String },
    tombstone: { type: String, required: true },
    status: { type: String, enum: ERASURE_STATUSES, required: true },
    reason: { type: String },
    requested_by: { type: requester, required: true },
    steps: { type: Schema.Types.Mixed, default: {} },
    completed_at: { type: Date },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: 'updated_at' }, versionKey: false, minimize: false },
);

interface ErasureStep {
  status: 'pending' | 'done';
  report: Record<string, number>;
  at?: Date;
}

export interface ErasureDoc {
  _id: string;
  erasure_id: string;
  organization_id: string;
  user_id: string;
  idp_id?: string;
  tombstone: string;
  status: ErasureStatus;
  reason?: string;
  requested_by: Requester;
  steps: Record<string, ErasureStep>;
  completed_at?: Date;
  created_at: Date;
  updated_at: Date;
}

export const UserExport = mongoose.model('UserExport', exportSchema, 'user_exports');
export const UserErasure = mongoose.model('UserErasure', erasureSchema, 'user_erasures');

/** Exports a user asked for in the current window (`_id` `<organization_id>:<user_id>`): at most USER_EXPORTS_PER_DAY. */
const quotaSchema = new Schema(
  {
    _id: { type: String, required: true },
    window_start: { type: Date, required: true },
    count: { type: Number, required: true },
  },
  { versionKey: false },
);
export interface QuotaDoc {
  _id: string;
  window_start: Date;
  count: number;
}
export const UserExportQuota = mongoose.model('UserExportQuota', quotaSchema, 'user_export_quotas');

/**
 * The user's export being gathered (`_id` `<organization_id>:<user_id>`): claimed by one insert
 * (or one conditional update of a finished one), so concurrent requests of a user hold at most
 * one of the organization's places between them.
 */
const exportSlotSchema = new Schema(
  {
    _id: { type: String, required: true },
    export_id: { type: String, required: true },
    at: { type: Date, required: true },
  },
  { versionKey: false },
);
export interface ExportSlotDoc {
  _id: string;
  export_id: string;
  at: Date;
}
export const UserExportSlot = mongoose.model('UserExportSlot', exportSlotSchema, 'user_export_slots');

/**
 * A place among the organization's erasures doing their heavy part at once (`_id`
 * `<organization_id>#<n>`, n below ERASURES_RUNNING_PER_ORGANIZATION), held by one erasure (its key).
 */
const erasureSlotSchema = new Schema(
  {
    _id: { type: String, required: true },
    erasure: { type: String, required: true },
    at: { type: Date, required: true },
  },
  { versionKey: false },
);
export interface ErasureSlotDoc {
  _id: string;
  erasure: string;
  at: Date;
}
export const UserErasureSlot = mongoose.model('UserErasureSlot', erasureSlotSchema, 'user_erasure_slots');
