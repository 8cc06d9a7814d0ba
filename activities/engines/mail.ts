/**
 * Mail transport (nodemailer): SMTP when SMTP_URL is set, else each message is written as an
 * .eml file under DATA_DIR/outbox, so nothing pretends to have been delivered.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import nodemailer, { type Transporter } from 'nodemailer';
import { config } from '../core/config.ts';

export interface OutgoingMail {
  from?: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  /** `<…@…>`, fixed per idempotency key so receivers can drop a duplicate too */
  messageId: string;
}

let smtp: Transporter | undefined;

export async function deliver(mail: OutgoingMail): Promise<{ transport: 'smtp' | 'file'; location: string }> {
  const cfg = config();
  const message = { ...mail, from: mail.from ?? cfg.EMAIL_FROM };
  if (cfg.SMTP_URL) {
    smtp ??= nodemailer.createTransport(cfg.SMTP_URL);
    const info = await smtp.sendMail(message);
    return { transport: 'smtp', location: String(info.response ?? 'accepted') };
  }
  const stream = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  const info = await stream.sendMail(message);
  const dir = path.join(cfg.dataDir, 'outbox');
  await fs.mkdir(dir, { recursive: true });
  const file = path.join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${mail.messageId.replace(/[^A-Za-z0-9]+/g, '_').slice(1, 60)}.eml`);
  await fs.writeFile(file, info.message as Buffer);
  return { transport: 'file', location: file };
}
