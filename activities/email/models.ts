/** What was sent, and the per-user hourly limit's slots: schemas imported by store.ts alone. */
import mongoose, { Schema } from 'mongoose';
import type { EmailType } from './compose';

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
    sent_at: { type: Date, required: true },
  },
  { versionKey: false },
);
export interface EmailLogDoc {
  _id: string;
  organization_id: string;
  user_id: string;
  message_id: string;
  recipient: string;
  email_type: EmailType;
  subject: string;
  transport: string;
  sent_at: Date;
}
export const EmailLog = mongoose.model<EmailLogDoc>('EmailLog', emailLogSchema, 'email_log');

/** One counted send: `<org>|<user>|<hour ISO>|<slot number or k:key hash>` (store.ts). */
const sendSlotSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    user_id: { type: String, required: true },
    hour: { type: Date, required: true },
  },
  { versionKey: false },
);
export const SendSlot = mongoose.model('EmailSendSlot', sendSlotSchema, 'email_send_slots');
