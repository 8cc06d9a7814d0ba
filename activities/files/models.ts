import mongoose, { Schema } from 'mongoose';

/**
 * An organization's link-signing key (schemas only: store.ts reads and writes it). `_id` is the
 * organization; `secret` is encrypted with the configuration key (core/encryption.ts), so the
 * database alone cannot sign a link. Made on the first link, replaced by a rotation.
 */
const linkKeySchema = new Schema(
  {
    _id: { type: String, required: true },
    secret: { type: String, required: true },
    rotated_at: { type: Date, required: true },
  },
  { versionKey: false },
);

export interface LinkKeyDoc {
  _id: string;
  secret: string;
  rotated_at: Date;
}

export const LinkKey = mongoose.model<LinkKeyDoc>('FileLinkKey', linkKeySchema, 'file_link_keys');
