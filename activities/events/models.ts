import mongoose, { Schema } from 'mongoose';

import { DELIVERY_STATUSES, type DeliveryStatus, type EventType } from './constants.ts';

/**
 * An organization's webhook endpoint. `secrets` holds the signing secrets, encrypted with the
 * configuration key (core/encryption): the current one first, then a rotated one until its
 * `expires_at`. `failing_since` is the first failed attempt after the last success.
 */
const endpointSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    url: { type: String, required: true },
    events: { type: [String], required: true },
    enabled: { type: Boolean, required: true },
    description: { type: String },
    secrets: {
      type: [{ _id: false, value: { type: String, required: true }, expires_at: { type: Date } }],
      required: true,
    },
    failing_since: { type: Date },
    disabled_reason: { type: String },
    /** paused by an admin: its deliveries queue and nothing is sent until it is resumed */
    paused_at: { type: Date },
    /** the last resume: every delivery queued then has a retry window from this instant at least */
    resumed_at: { type: Date },
    /** the last test ping: one per PING_GAP_SECONDS per endpoint */
    last_ping_at: { type: Date },
    /** the key (and its user) that created the endpoint: an endpoint outlives its creator's key */
    created_by: {
      type: { _id: false, key_id: { type: String, required: true }, user_id: { type: String, required: true } },
    },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: 'updated_at' }, versionKey: false },
);
endpointSchema.index({ organization_id: 1, created_at: 1 });

export interface EndpointDoc {
  _id: string;
  organization_id: string;
  url: string;
  events: string[];
  enabled: boolean;
  description?: string;
  secrets: { value: string; expires_at?: Date }[];
  failing_since?: Date;
  disabled_reason?: string;
  paused_at?: Date;
  resumed_at?: Date;
  last_ping_at?: Date;
  created_by?: { key_id: string; user_id: string };
  created_at: Date;
  updated_at: Date;
}

/**
 * One event, as it is delivered: `body` is the exact JSON every endpoint receives and signs
 * (stored as text, so a retry days later sends the same bytes). `_id` is derived from the change
 * that caused it (emit.ts), so recording it twice writes it once. `fanned_out` is false until a
 * delivery has been started for every endpoint that wanted it; the sweep finishes what a crash left.
 */
const eventSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    type: { type: String, required: true },
    body: { type: String, required: true },
    fanned_out: { type: Boolean, required: true },
    /** ping: only this endpoint gets it */
    only_endpoint: { type: String },
    /** the change's instant, as the body's `created_at` says */
    created_at: { type: Date, required: true },
  },
  // recorded_at orders the log: an event recorded late (by the sweep) lands after the ones a
  // consumer has read, never among them, even though its change happened earlier.
  { timestamps: { createdAt: 'recorded_at', updatedAt: false }, versionKey: false },
);
eventSchema.index({ organization_id: 1, recorded_at: 1 });
eventSchema.index({ organization_id: 1, type: 1, recorded_at: 1 });
eventSchema.index({ fanned_out: 1, recorded_at: 1 });
eventSchema.index({ recorded_at: 1 });

export interface EventDoc {
  _id: string;
  organization_id: string;
  type: EventType;
  body: string;
  fanned_out: boolean;
  only_endpoint?: string;
  created_at: Date;
  recorded_at: Date;
}

const attemptSchema = new Schema(
  {
    at: { type: Date, required: true },
    /** the receiver's HTTP status; absent when it never answered (network failure, timeout) */
    status: { type: Number },
    duration_ms: { type: Number, required: true },
    error: { type: String },
  },
  { _id: false },
);

/** One event's delivery to one endpoint (`_id` derived from both): its attempts so far and what comes next. */
const deliverySchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    endpoint_id: { type: String, required: true },
    event_id: { type: String, required: true },
    event_type: { type: String, required: true },
    status: { type: String, enum: DELIVERY_STATUSES, required: true },
    attempts: { type: [attemptSchema], default: [] },
    next_attempt_at: { type: Date },
    /** why a delivery failed for good (its retries ran out, the endpoint was disabled or deleted) */
    final_reason: { type: String },
    /**
     * when its endpoint's actor attempts it next (absent: not queued: final, or a delivery of the
     * per-delivery runs of older builds, which attempt it themselves)
     */
    due_at: { type: Date },
    /** no attempt is scheduled after this (WEBHOOK_RETRY_HOURS after it was queued or retried by hand) */
    window_ends_at: { type: Date },
    /** the round that took it, in builds before rounds held their endpoint's queue (unset when recorded) */
    claim: { type: String },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: 'updated_at' }, versionKey: false },
);
deliverySchema.index({ organization_id: 1, created_at: -1 });
deliverySchema.index({ endpoint_id: 1, created_at: -1 });
deliverySchema.index({ created_at: 1 });
// The endpoint's queue: its due deliveries, soonest first (actor.ts); and due ones the sweep wakes.
deliverySchema.index({ endpoint_id: 1, due_at: 1 });
deliverySchema.index({ due_at: 1 });

export interface AttemptDoc {
  at: Date;
  status?: number;
  duration_ms: number;
  error?: string;
}

export interface DeliveryDoc {
  _id: string;
  organization_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: EventType;
  status: DeliveryStatus;
  attempts: AttemptDoc[];
  next_attempt_at?: Date;
  final_reason?: string;
  due_at?: Date;
  window_ends_at?: Date;
  claim?: string;
  created_at: Date;
  updated_at: Date;
}

/**
 * Whether an endpoint's actor (`webhook-endpoint:<endpoint_id>`) is awake, one document per
 * endpoint (`_id`): a fan-out wakes it (a signal) only when it is not, so a busy endpoint costs no
 * signal per event. `woken_at` bounds a wake a crash lost between this write and the signal.
 */
const endpointQueueSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    awake: { type: Boolean, required: true },
    woken_at: { type: Date },
    /** the round sending the endpoint's deliveries, and until when it holds the queue (actor.ts) */
    held_by: { type: String },
    held_until: { type: Date },
    /** attempts since the endpoint was created, by outcome (written once a second, deliveries.ts) */
    succeeded: { type: Number },
    failed: { type: Number },
    last_success_at: { type: Date },
    last_error: {
      type: {
        _id: false,
        at: { type: Date, required: true },
        status: { type: Number },
        error: { type: String },
        delivery_id: { type: String, required: true },
      },
    },
  },
  { versionKey: false },
);
endpointQueueSchema.index({ awake: 1, woken_at: 1 });

export interface EndpointQueueDoc {
  _id: string;
  organization_id: string;
  awake: boolean;
  woken_at?: Date;
  held_by?: string;
  held_until?: Date;
  succeeded?: number;
  failed?: number;
  last_success_at?: Date;
  last_error?: { at: Date; status?: number; error?: string; delivery_id: string };
}

/**
 * An endpoint's attempts in one hour (`_id`: endpoint and hour), for its success rate: added to
 * once a second by each worker, kept as long as deliveries.
 */
const endpointHourSchema = new Schema(
  {
    _id: { type: String, required: true },
    endpoint_id: { type: String, required: true },
    hour: { type: Date, required: true },
    succeeded: { type: Number, required: true },
    failed: { type: Number, required: true },
  },
  { versionKey: false },
);
endpointHourSchema.index({ endpoint_id: 1, hour: -1 });
endpointHourSchema.index({ hour: 1 });

/**
 * An organization's number of endpoints (`_id`: the organization): taken by a conditional `$inc`
 * before an endpoint is inserted and given back when one is deleted, so concurrent creates on any
 * number of edges never pass the cap.
 */
const endpointCountSchema = new Schema(
  { _id: { type: String, required: true }, n: { type: Number, required: true } },
  { versionKey: false },
);

/** Delivery attempts by outcome, across every worker (`/metrics` reads them): one document per outcome. */
const counterSchema = new Schema(
  { _id: { type: String, required: true }, count: { type: Number, required: true } },
  { versionKey: false },
);

export const WebhookEndpoint = mongoose.model('WebhookEndpoint', endpointSchema, 'webhook_endpoints');
export const PlatformEvent = mongoose.model('PlatformEvent', eventSchema, 'events');
export const WebhookDelivery = mongoose.model('WebhookDelivery', deliverySchema, 'webhook_deliveries');
export const EndpointCount = mongoose.model('WebhookEndpointCount', endpointCountSchema, 'webhook_endpoint_counts');
export const DeliveryCounter = mongoose.model('WebhookDeliveryCounter', counterSchema, 'webhook_delivery_counters');
export const EndpointQueue = mongoose.model('WebhookEndpointQueue', endpointQueueSchema, 'webhook_endpoint_queues');
export const EndpointHour = mongoose.model('WebhookEndpointHour', endpointHourSchema, 'webhook_endpoint_hours');
