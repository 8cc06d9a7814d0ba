/** The scheduler's schemas; store.ts is the one file that reads and writes them. */
import mongoose, { Schema } from 'mongoose';

import { EVENT_TYPES, type EventType, type Failure, FAILURES, type Overlap, OVERLAPS } from './constants.ts';

const eventSchema = new Schema(
  {
    _id: { type: String, required: true }, // evt_…; the Temporal Schedule is `event:<_id>`
    organization_id: { type: String, required: true },
    user_id: { type: String, required: true },
    idp_id: { type: String, required: true },
    type_of_event: { type: String, enum: EVENT_TYPES, required: true },
    recurrency: { type: String, default: null },
    cron: { type: String, default: null },
    start_event: { type: Date, required: true },
    end_date: { type: Date, default: null },
    timezone: { type: String, default: null },
    metadata_json: { type: String, required: true },
    // Written 'scheduled'; a one-off event reads as completed once its completion exists (below).
    status: { type: String, enum: ['scheduled', 'completed'], required: true },
    // Who saved the event last (its runs have those rights, rechecked at each run): key, user, level.
    actor_key_id: { type: String },
    actor_user_id: { type: String },
    actor_level: { type: Number },
    // Bumped by every update: an update writes only over the version it read (see updateEvent).
    rev: { type: Number },
    // Mirrors the Schedule's own pause (written after the Schedule accepted it).
    paused: { type: Boolean },
    pause_note: { type: String },
    paused_at: { type: Date },
    // Schedule policies; absent on older events: the defaults (skip, 60 minutes).
    overlap: { type: String, enum: OVERLAPS },
    catchup_window_minutes: { type: Number },
    // The places it holds under the caps (store.ts, counters below): true while held, false once
    // given up (an ended event's active places); all absent on events saved before the caps.
    stored_place: { type: Boolean },
    user_place: { type: Boolean },
    organization_place: { type: Boolean },
    // The earliest time it may be over (a lower bound, moved forward when found still live); null:
    // never (a rule without end_date). A full counter reads only its holders with ends_at past.
    ends_at: { type: Date, default: null },
    // The tokens of the takes of the places it holds, by kind (store.ts `Taken`).
    place_tokens: { type: Schema.Types.Mixed },
    // Written by the previous version only: the ids of its places (store.ts `placesReady` converts them).
    slots: { type: [String], default: undefined },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: 'updated_at' }, versionKey: false },
);
// A user's events (listings: the prefix), and a full counter's holders that may have ended.
eventSchema.index({ organization_id: 1, user_id: 1, user_place: 1, ends_at: 1 });
eventSchema.index({ organization_id: 1, organization_place: 1, ends_at: 1 });

export interface EventDoc {
  _id: string;
  organization_id: string;
  user_id: string;
  idp_id: string;
  type_of_event: EventType;
  recurrency: 'daily' | 'weekly' | 'monthly' | 'cron' | null;
  /** with recurrency 'cron' */
  cron?: string | null;
  start_event: Date;
  end_date: Date | null;
  timezone: string | null;
  metadata_json: string;
  status: 'scheduled' | 'completed';
  actor_key_id?: string;
  actor_user_id?: string;
  actor_level?: number;
  rev?: number;
  paused?: boolean;
  pause_note?: string | null;
  paused_at?: Date | null;
  overlap?: Overlap;
  catchup_window_minutes?: number;
  stored_place?: boolean;
  user_place?: boolean;
  organization_place?: boolean;
  ends_at?: Date | null;
  place_tokens?: Partial<Record<'stored' | 'user' | 'organization', string>>;
  /** the previous version's place ids (events not yet converted) */
  slots?: string[];
  created_at: Date;
  updated_at: Date;
}

/** One record per run workflow (its id is the key, so an activity retry records it once). */
const runSchema = new Schema(
  {
    _id: { type: String, required: true },
    event_id: { type: String, required: true },
    organization_id: { type: String, required: true },
    trigger: { type: String, enum: ['scheduled', 'manual'], required: true },
    scheduled_time: { type: Date },
    started_at: { type: Date, required: true },
    finished_at: { type: Date, required: true },
    outcome: { type: String, enum: ['success', 'failed', 'skipped'], required: true },
    // The detail, for admin readers and the log; `failure` its class, whose fixed text basic readers see.
    error: { type: String },
    failure: { type: String, enum: FAILURES },
    result_json: { type: String },
  },
  { versionKey: false },
);
runSchema.index({ event_id: 1, started_at: -1 });

export interface RunDoc {
  _id: string;
  event_id: string;
  organization_id: string;
  trigger: 'scheduled' | 'manual';
  scheduled_time?: Date;
  started_at: Date;
  finished_at: Date;
  outcome: 'success' | 'failed' | 'skipped';
  error?: string;
  failure?: Failure;
  result_json?: string;
}

/**
 * A one-off event's scheduled run happened: `<event id>@<start_event ISO>`, inserted once. Runs
 * never update the event (store.ts says why).
 */
const completionSchema = new Schema(
  {
    _id: { type: String, required: true },
    event_id: { type: String, required: true },
    organization_id: { type: String, required: true },
    run_id: { type: String, required: true },
    completed_at: { type: Date, required: true },
  },
  { versionKey: false },
);
completionSchema.index({ event_id: 1 });

export interface CompletionDoc {
  _id: string;
  event_id: string;
  organization_id: string;
  run_id: string;
  completed_at: Date;
}

/**
 * A cap's counter (SCHEDULER_MAX_EVENTS_PER_USER, …_PER_ORGANIZATION, …_STORED_EVENTS_PER_USER):
 * `u|<organization>|<user>`, `o|<organization>`, `s|<organization>|<user>`; `n` the places held,
 * taken by a conditional `$inc` (`n < cap`) and given back by `$inc: -1` exactly once per place
 * (store.ts). `pending`: a take's token (`<event id>~<random>`) → when, until its event holds the
 * place: what repairs a take whose event was never written.
 */
const counterSchema = new Schema(
  {
    _id: { type: String, required: true },
    n: { type: Number, required: true },
    pending: { type: Schema.Types.Mixed },
  },
  { versionKey: false, minimize: false },
);

export interface CounterDoc {
  _id: string;
  n: number;
  pending?: Record<string, Date>;
}

/**
 * A basic caller's run by hand (docs/components/scheduler.md, Limits): `w|<event>|<n>`, the run taken in
 * interval window n (SCHEDULER_MIN_INTERVAL_SECONDS_BASIC long), inserted once, so of concurrent
 * calls one wins; `k|<event>|<sha256 of the Idempotency-Key>`, the run a key started (a repeat
 * answers it). Deleted with the event.
 */
const manualRunSchema = new Schema(
  {
    _id: { type: String, required: true },
    event_id: { type: String, required: true },
    organization_id: { type: String, required: true },
    at: { type: Date, required: true },
  },
  { versionKey: false },
);
// Claims near a time (the interval check) and an event's claims (deleted with it).
manualRunSchema.index({ event_id: 1, at: 1 });

export interface ManualRunDoc {
  _id: string;
  event_id: string;
  organization_id: string;
  at: Date;
}

/**
 * An organization's signing secret for its scheduled webhook events (webhook-secret.ts): `_id`
 * the organization; `secrets[0]` the current one, a rotated one with `expires_at` after it while
 * its grace lasts. Each value is encrypted with the configuration key.
 */
const webhookSecretSchema = new Schema(
  {
    _id: { type: String, required: true },
    secrets: {
      type: [{ _id: false, value: { type: String, required: true }, expires_at: { type: Date } }],
      required: true,
    },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: 'updated_at' }, versionKey: false },
);

export interface WebhookSecretDoc {
  _id: string;
  secrets: { value: string; expires_at?: Date | null }[];
  created_at: Date;
  updated_at: Date;
}

export const ScheduledEvent = mongoose.model<EventDoc>('ScheduledEvent', eventSchema, 'scheduled_events');
export const EventRun = mongoose.model<RunDoc>('EventRun', runSchema, 'scheduled_event_runs');
export const EventCounter = mongoose.model<CounterDoc>('EventCounter', counterSchema, 'scheduled_event_counters');
export const EventCompletion = mongoose.model<CompletionDoc>(
  'EventCompletion',
  completionSchema,
  'scheduled_event_completions',
);
export const EventManualRun = mongoose.model<ManualRunDoc>(
  'EventManualRun',
  manualRunSchema,
  'scheduled_event_manual_runs',
);
export const WebhookSecret = mongoose.model<WebhookSecretDoc>(
  'ScheduledWebhookSecret',
  webhookSecretSchema,
  'scheduled_webhook_secrets',
);
