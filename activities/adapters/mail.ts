/**
 * Mail transport (nodemailer): SMTP when SMTP_URL is set, else each message is written as an
 * .eml file under DATA_DIR/outbox, so nothing pretends to have been delivered. An outbox file holds
 * the recipient and the whole message: it is named after the Message-ID alone (the same message
 * written again replaces its file), its name is what the email component records to erase it, and
 * files older than OUTBOX_RETENTION_DAYS are removed by the hourly retention run.
 */
import fs from 'node:fs/promises';
import path from 'node:path';

import nodemailer, { type Transporter } from 'nodemailer';

import { mailSettings } from './settings.ts';

export interface OutgoingMail {
  from?: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  /** `<…@…>`, fixed per idempotency key so receivers can drop a duplicate too */
  messageId: string;
  /** extra headers (List-Unsubscribe); values of one line */
  headers?: Record<string, string>;
}

/**
 * The SMTP server refused the recipient for good (a 5xx answer to RCPT TO): retrying cannot
 * deliver, and the email component suppresses the address as a hard bounce.
 */
export class RecipientRejected extends Error {
  constructor(
    readonly recipient: string,
    readonly response: string,
  ) {
    super(`The mail server refused the recipient for good: ${response}`);
  }
}

/**
 * A mailbox that does not exist, in nodemailer's error: 550/551/553 at RCPT TO whose enhanced
 * status (RFC 3463), if given, is 5.1.x (bad mailbox or domain). A 4xx, a full mailbox (5.2.x),
 * a policy or relay refusal (5.7.x: our relay misconfigured) are failures, never a hard bounce, so
 * an outage of our own relay cannot suppress every address. The server's words are not kept:
 * they often quote the address, and a suppression outlives the person's erasure.
 */
function permanentRejection(err: unknown, to: string): RecipientRejected | undefined {
  const e = err as { command?: string; responseCode?: number; response?: string };
  if (e?.command !== 'RCPT TO' || ![550, 551, 553].includes(e.responseCode ?? 0)) return undefined;
  const enhanced = /\b([245])\.(\d{1,3})\.(\d{1,3})\b/.exec(String(e.response ?? ''));
  if (enhanced && (enhanced[1] !== '5' || enhanced[2] !== '1')) return undefined;
  return new RecipientRejected(to, `${e.responseCode}${enhanced ? ` ${enhanced[0]}` : ''}`);
}

export interface Delivered {
  transport: 'smtp' | 'file';
  /** the SMTP server's answer, or the outbox file's path */
  location: string;
  /** the outbox file's name (file transport): how the message's file is found again */
  outbox_file?: string;
}

let smtp: Transporter | undefined;

const outboxDir = () => path.join(mailSettings().dataDir, 'outbox');

const OUTBOX_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,200}\.eml$/;

/** The outbox file of a Message-ID: its letters and digits, so one message has one file. */
const outboxFileName = (messageId: string) =>
  `${
    messageId
      .replace(/[^A-Za-z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .slice(0, 150) || 'message'
  }.eml`;

/** How files written before the name was fixed end (`<time>-<this>`): a message's older file is found by its name too. */
const legacySuffix = (messageId: string) => `-${messageId.replace(/[^A-Za-z0-9]+/g, '_').slice(1, 60)}.eml`;

export async function deliver(mail: OutgoingMail): Promise<Delivered> {
  const cfg = mailSettings();
  const message = { ...mail, from: mail.from ?? cfg.EMAIL_FROM };
  if (cfg.SMTP_URL) {
    smtp ??= nodemailer.createTransport(cfg.SMTP_URL);
    const info = await smtp.sendMail(message).catch((err: unknown) => {
      throw permanentRejection(err, mail.to) ?? err;
    });
    return { transport: 'smtp', location: String(info.response ?? 'accepted') };
  }
  const stream = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  const info = await stream.sendMail(message);
  const dir = outboxDir();
  await fs.mkdir(dir, { recursive: true });
  const name = outboxFileName(mail.messageId);
  const file = path.join(dir, name);
  await fs.writeFile(file, info.message as Buffer, { mode: 0o600 });
  return { transport: 'file', location: file, outbox_file: name };
}

const gone = (err: unknown) => (err as NodeJS.ErrnoException)?.code === 'ENOENT';

async function outboxNames(): Promise<string[]> {
  try {
    return (await fs.readdir(outboxDir())).filter((n) => OUTBOX_NAME.test(n));
  } catch (err) {
    if (gone(err)) return [];
    throw err;
  }
}

/**
 * Removes the outbox files of these messages: each by the name recorded when it was written, or,
 * for a message recorded before names were recorded, by its Message-ID in the file's name (never
 * by reading the files). Answers how many were still there, so a repeat removes nothing.
 */
export async function removeOutboxFiles(
  messages: Array<{ message_id: string; outbox_file?: string | null }>,
): Promise<number> {
  if (!messages.length) return 0;
  const names = new Set<string>();
  const legacy: string[] = [];
  for (const m of messages) {
    if (m.outbox_file && OUTBOX_NAME.test(m.outbox_file) && path.basename(m.outbox_file) === m.outbox_file)
      names.add(m.outbox_file);
    else {
      names.add(outboxFileName(m.message_id));
      legacy.push(legacySuffix(m.message_id));
    }
  }
  if (legacy.length) for (const n of await outboxNames()) if (legacy.some((s) => n.endsWith(s))) names.add(n);
  let removed = 0;
  for (const name of names) {
    try {
      await fs.unlink(path.join(outboxDir(), name));
      removed += 1;
    } catch (err) {
      if (!gone(err)) throw err;
    }
  }
  return removed;
}

/** Removes the outbox files last written before `before` (their time on disk); answers how many. */
export async function removeOutboxFilesBefore(before: Date): Promise<number> {
  let removed = 0;
  for (const name of await outboxNames()) {
    const file = path.join(outboxDir(), name);
    try {
      if ((await fs.stat(file)).mtime < before) {
        await fs.unlink(file);
        removed += 1;
      }
    } catch (err) {
      if (!gone(err)) throw err;
    }
  }
  return removed;
}
