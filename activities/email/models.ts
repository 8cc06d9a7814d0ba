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
