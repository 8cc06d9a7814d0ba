/**
 * The outbox (DATA_DIR/outbox: mail written as files when no SMTP_URL is set) holds each message
 * whole, its recipient and body included. Files are removed OUTBOX_RETENTION_DAYS after they were
 * written, by the hourly retention run (workflows/retention.ts), and a user's erasure removes the
 * files of the user's messages by the names recorded on them (user-data.ts).
 */
import { removeOutboxFiles, removeOutboxFilesBefore } from '../adapters/mail.ts';
import type { EmailLogDoc } from './models.ts';
import { emailSettings } from './settings.ts';

interface OutboxRetentionResult {
  removed: number;
  cutoff: string;
}

/** The retention run's step: outbox files older than OUTBOX_RETENTION_DAYS go. */
export async function purgeOutbox(input: { now?: string } = {}): Promise<OutboxRetentionResult> {
  const now = input.now ? new Date(input.now) : new Date();
  const cutoff = new Date(now.getTime() - emailSettings().OUTBOX_RETENTION_DAYS * 86_400_000);
  return { removed: await removeOutboxFilesBefore(cutoff), cutoff: cutoff.toISOString() };
}

/** The outbox files of these sent records (those the file transport wrote); answers how many were still there. */
export const removeOutboxFilesOf = (sent: Pick<EmailLogDoc, 'message_id' | 'transport' | 'outbox_file'>[]) =>
  removeOutboxFiles(sent.filter((m) => m.transport === 'file'));
