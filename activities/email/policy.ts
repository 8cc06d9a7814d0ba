/**
 * Who may mail whom. The platform sender must not become an open relay for an end user's key:
 * a basic sender mails only its user's own address on record, with text the platform writes,
 * within EMAIL_USER_LIMIT_PER_HOUR messages per user. Admin keys are not restricted.
 */
import { createHash } from 'node:crypto';

import { forbidden, rateLimited } from '../core/errors.ts';
import { ADMIN_LEVEL } from '../identity/constants.ts';
import { emailSettings } from './settings.ts';
import { countKey, sentRecord, takeSend, uncountKey } from './store.ts';

const sameAddress = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase();

/** 403 unless a sender of `level` may mail `recipient` (`own`: the user's address on record). */
export function checkRecipient(level: number, recipient: string, own: string | null | undefined): void {
  if (level >= ADMIN_LEVEL) return;
  if (!own || !sameAddress(recipient, own)) {
    throw forbidden(
      "metadata.recipient: a basic API key sends only to its user's own email address; another recipient requires the admin permission",
    );
  }
}

/** 403 when a basic sender supplies the text of the message (the generic template or a subject). */
export function checkFreeText(email_type: string, metadata: Record<string, unknown>): void {
  // An organization's template (metadata.template_id) is an admin's text: a basic key may send it.
  if (
    email_type === 'notification' &&
    metadata.template_id === undefined &&
    (metadata.template ?? 'generic') === 'generic'
  ) {
    throw forbidden(
      'metadata.template: the generic template (free subject and body) requires the admin permission; basic keys use points_awarded, welcome or reminder',
    );
  }
  if (metadata.subject !== undefined && metadata.subject !== null && metadata.subject !== '') {
    throw forbidden('metadata.subject: a free subject requires the admin permission');
  }
}

/**
 * Sends per user per clock hour, counted so that concurrent senders in any process never exceed
 * the limit and a repeated idempotency key counts once (store.ts says how).
 */
const HOUR = 3_600_000;

/** Counts one send of `idempotency_key` for the user; 429 with Retry-After past the limit. */
export async function reserveSend(
  input: { organization_id: string; user_id: string; idempotency_key: string },
  now = new Date(),
): Promise<void> {
  const limit = emailSettings().EMAIL_USER_LIMIT_PER_HOUR;
  if (!limit) return;
  // A key already sent (possibly in an earlier hour) is a repeat: it sends nothing and costs nothing.
  if (await sentRecord(input.organization_id, input.idempotency_key)) return;
  const hour = new Date(Math.floor(now.getTime() / HOUR) * HOUR);
  const u = { organization_id: input.organization_id, user_id: input.user_id, hour };
  const keyHash = createHash('sha256').update(input.idempotency_key).digest('hex').slice(0, 24);
  if (!(await countKey(u, keyHash))) return; // counted already (a concurrent repeat)
  if (await takeSend(u, limit)) return;
  await uncountKey(u, keyHash); // not sent: a retry after the hour is counted then
  const retryAfter = Math.max(1, Math.ceil((hour.getTime() + HOUR - now.getTime()) / 1000));
  throw rateLimited(`Email limit reached: ${limit} messages per hour for this user`, retryAfter);
}
