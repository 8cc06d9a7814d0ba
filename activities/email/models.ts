/** What was sent, and the per-user hourly limit's counts: schemas imported by store.ts alone. */
import mongoose, { Schema } from 'mongoose';

import type { EmailType } from './compose.ts';

/** One document per (organization, idempotency key): the record that a message was sent. */
const emailLogSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    user_id: { type: String, required: true },
    message_id: { type: String, required: true },
    recipient: { type: String, required: true },
    email_type: { type: String, required: true },
    subject: { type: String, required: true },
    transport: { type: String, required: true },
    /** the outbox file (file transport): how a user's erasure finds it, without reading any file */
    outbox_file: { type: String },
    sent_at: { type: Date, required: true },
  },
  { versionKey: false },
);
// A user's records (their export and erasure), without reading the organization's.
emailLogSchema.index({ organization_id: 1, user_id: 1, sent_at: 1 });
export interface EmailLogDoc {
  _id: string;
  organization_id: string;
  user_id: string;
  message_id: string;
  recipient: string;
  email_type: EmailType;
  subject: string;
  transport: string;
  outbox_file?: string;
  sent_at: Date;
}
export const EmailLog = mongoose.model<EmailLogDoc>('EmailLog', emailLogSchema, 'email_log');

/**
 * The per-user hourly limit (store.ts), per `<org>|<user>|<hour ISO>|`: `count` (its `n`, the sends
 * counted) and `k:<key hash>` (a key counted). The collection's name is the previous version's,
 * whose numbered slot documents (`…|1`, `…|2`) are read once in the hour of the upgrade and
 * deleted with their hour.
 */
const sendCountSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    user_id: { type: String, required: true },
    hour: { type: Date, required: true },
    n: { type: Number },
  },
  { versionKey: false },
);
// A user's earlier hours, deleted at the first send of an hour.
sendCountSchema.index({ organization_id: 1, user_id: 1, hour: 1 });
export const SendCount = mongoose.model('EmailSendSlot', sendCountSchema, 'email_send_slots');

/** One locale's text of a template: `{{name}}` variables in the subject and bodies. */
export interface TemplateVersion {
  locale: string;
  subject: string;
  text: string | null;
  html: string | null;
}

/** An organization's mail template, `_id` `<organization>|<template_id>`. */
export interface EmailTemplateDoc {
  _id: string;
  organization_id: string;
  template_id: string;
  name: string;
  default_locale: string;
  versions: TemplateVersion[];
  /** the variables any version uses, sorted (what a send must fill) */
  variables: string[];
  created_at: Date;
  updated_at: Date;
  updated_by: string;
}
const emailTemplateSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    template_id: { type: String, required: true },
    name: { type: String, required: true },
    default_locale: { type: String, required: true },
    versions: { type: Schema.Types.Mixed, required: true },
    variables: { type: [String], required: true },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
    updated_by: { type: String, required: true },
  },
  { versionKey: false, minimize: false },
);
// The organization's list, newest first.
emailTemplateSchema.index({ organization_id: 1, created_at: -1 });
export const EmailTemplate = mongoose.model<EmailTemplateDoc>('EmailTemplate', emailTemplateSchema, 'email_templates');

/**
 * An address no send of the organization goes to, `_id` `<organization>|<address hash>` (a keyed
 * hash of the normalised address, suppressions.ts). `address` is the address itself while the
 * person is known; a user's erasure blanks it and the hash alone keeps them unmailed.
 */
export interface SuppressionDoc {
  _id: string;
  organization_id: string;
  address_hash: string;
  address: string | null;
  reason: 'unsubscribe' | 'hard_bounce' | 'manual';
  /** who suppressed it: an admin key's id, `unsubscribe_link`, or `smtp` (a permanent rejection) */
  source: string;
  /** the SMTP server's words, for a hard bounce */
  detail: string | null;
  created_at: Date;
}
const suppressionSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    address_hash: { type: String, required: true },
    address: { type: String, default: null },
    reason: { type: String, required: true },
    source: { type: String, required: true },
    detail: { type: String, default: null },
    created_at: { type: Date, required: true },
  },
  { versionKey: false },
);
// The organization's list, newest first (the admin's page).
suppressionSchema.index({ organization_id: 1, created_at: -1 });
export const Suppression = mongoose.model<SuppressionDoc>('EmailSuppression', suppressionSchema, 'email_suppressions');
