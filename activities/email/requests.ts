/**
 * A send asked for over HTTP (POST /email/send): whom it goes to (the given address, or the user's
 * own on record; a basic key only ever its user's own), what it may say (a basic key's free text
 * is refused), its share of the sender's rate, and its key. The send itself is the workflow
 * `email:<org>:<hash of the key>`, started or attached to by the root's runner: one key, one mail.
 */
import { createHash, randomUUID } from 'node:crypto';

import { z } from 'zod';

import { invalid } from '../core/errors.ts';
import { handedIn } from '../core/wiring.ts';
import { ADMIN_LEVEL } from '../identity/constants.ts';
import { getUser } from '../identity/index.ts';
import { type EmailType, notificationContent } from './compose.ts';
import { type EmailRequest, type SentEmail, suppressedError } from './email.ts';
import { checkFreeText, checkRecipient, reserveSend } from './policy.ts';
import { sentRecord } from './store.ts';
import { isSuppressed } from './suppressions.ts';
import { checkTemplateSend } from './templates.ts';

/** Starts (or attaches to) the send run `workflowId`, filed under the user: handed in by the root. */
export type RunSend = (workflowId: string, req: EmailRequest) => Promise<{ result: SentEmail; attached: boolean }>;

const sendRuns = handedIn<RunSend>("email's send runs");

/** Hands email the runner of its send runs (the composition root, once per process). */
export function configureEmail(deps: { runSend: RunSend }): void {
  sendRuns.set(deps.runSend);
}

export interface SendRequest {
  organization_id: string;
  user_id: string;
  /** the calling key's level: below admin, only the user's own address and no free text */
  actor_level: number;
  conversation_id: string;
  email_type: EmailType;
  metadata: Record<string, unknown>;
  /** reads the request's Idempotency-Key: only when `metadata.idempotency_key` names none (the body wins) */
  headerKey: () => string | undefined;
}

const address = z.email();

/** The address given in `metadata.recipient`, or the user's own on record. */
async function recipientOf(r: SendRequest): Promise<{ recipient: string; own?: string | null }> {
  const given = r.metadata.recipient;
  if (given !== undefined) {
    if (typeof given !== 'string' || /[\r\n]/.test(given) || !address.safeParse(given.trim()).success)
      throw invalid('metadata.recipient', 'must be one valid email address');
    return { recipient: given.trim() };
  }
  const own = (await getUser(r.organization_id, r.user_id)).email ?? undefined;
  if (!own)
    throw invalid(
      'metadata.recipient',
      "no recipient: give metadata.recipient or set the user's email (PATCH /api/users/{user})",
    );
  return { recipient: own, own };
}

/** Sends once per key; `duplicate` when the key had already sent (or is sending) this mail. */
export async function requestEmail(r: SendRequest): Promise<{ sent: SentEmail; duplicate: boolean }> {
  const { organization_id: org, user_id, metadata } = r;
  let { recipient, own } = await recipientOf(r);
  // Bad templates, unknown template ids and unfilled variables are refused before anything starts.
  if (metadata.template_id !== undefined) await checkTemplateSend(org, r.email_type, metadata);
  else if (r.email_type === 'notification') notificationContent(metadata, org);
  if (r.actor_level < ADMIN_LEVEL) {
    if (own === undefined) own = (await getUser(org, user_id)).email;
    checkRecipient(r.actor_level, recipient, own);
    checkFreeText(r.email_type, metadata);
    recipient = own!; // the address as on record, whatever case it was given in
  }
  const rawKey =
    (typeof metadata.idempotency_key === 'string' && metadata.idempotency_key.trim()) ||
    r.headerKey() ||
    `auto-${randomUUID()}`;
  if (rawKey.length > 200) throw invalid('metadata.idempotency_key', 'at most 200 characters');
  const idempotency_key = `${user_id}:${rawKey}`;
  // A suppressed recipient is refused before anything is counted or started; a repeat of a key
  // already sent still answers its first send (sendEmail checks again just before delivering).
  const suppressed = !(await sentRecord(org, idempotency_key)) && (await isSuppressed(org, recipient));
  if (suppressed) throw suppressedError(recipient, suppressed.reason);
  if (r.actor_level < ADMIN_LEVEL) await reserveSend({ organization_id: org, user_id, idempotency_key });
  const workflowId = `email:${org}:${createHash('sha256').update(idempotency_key).digest('hex').slice(0, 32)}`;
  const req: EmailRequest = {
    organization_id: org,
    user_id,
    conversation_id: r.conversation_id,
    email_type: r.email_type,
    metadata,
    recipient,
    idempotency_key,
  };
  const { result, attached } = await sendRuns.get()(workflowId, req);
  return { sent: result, duplicate: result.duplicate || attached };
}
