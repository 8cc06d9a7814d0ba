/**
 * Each organization signs its scheduled webhook events with its own secret (never a platform-wide
 * one: a tenant that verifies its own deliveries must not be able to sign another's). An admin
 * creates it and rotates it; it is shown only in that answer and stored encrypted with the
 * configuration key. A rotation keeps the previous secret signing beside the new one for a grace,
 * so a receiver switches at its own pace; at most two sign at once.
 */
import { randomBytes } from 'node:crypto';

import { noteChange } from '../core/audit-note.ts';
import { decryptSecret, encryptSecret } from '../core/encryption.ts';
import { conflict, PlatformError } from '../core/errors.ts';
import { WEBHOOK_SECRET_DEFAULT_GRACE_SECONDS } from './constants.ts';
import { insertWebhookSecret, replaceWebhookSecrets, type WebhookSecretDoc, webhookSecretOf } from './store.ts';

export interface WebhookSecretView {
  organization_id: string;
  created_at: string;
  /** when the current secret was made (the first one's creation, or the last rotation) */
  rotated_at: string;
  /** after a rotation: until when the previous secret also signs; null when it no longer does */
  previous_secret_expires_at: string | null;
}

const ROTATE_ROUTE = 'POST /api/scheduler-service/webhook-secret/rotate';

/** Why a scheduled webhook of an organization without a secret is refused (saved or run). */
const noWebhookSecret = () =>
  new PlatformError(
    'invalid',
    `Scheduled webhooks are signed with the organization's own secret, and this organization has none: an admin creates it with ${ROTATE_ROUTE} (shown once)`,
  );

const inGrace = (s: WebhookSecretDoc['secrets'][number], now: Date) => Boolean(s.expires_at && s.expires_at > now);

function view(doc: WebhookSecretDoc, now = new Date()): WebhookSecretView {
  const previous = doc.secrets.slice(1).find((s) => inGrace(s, now));
  return {
    organization_id: doc._id,
    created_at: doc.created_at.toISOString(),
    rotated_at: doc.updated_at.toISOString(),
    previous_secret_expires_at: previous?.expires_at ? previous.expires_at.toISOString() : null,
  };
}

/** Whether the organization has a secret, and its dates (never the secret). */
export async function webhookSecretStatus(organization_id: string): Promise<WebhookSecretView | null> {
  const doc = await webhookSecretOf(organization_id);
  return doc ? view(doc) : null;
}

/** The organization has a secret (checked when a webhook event is saved): 422 otherwise. */
export async function requireWebhookSecret(organization_id: string): Promise<void> {
  if (!(await webhookSecretOf(organization_id))) throw noWebhookSecret();
}

/** The secrets that sign a delivery now: the current one, then a rotated one still in its grace. 422 when there is none. */
export async function webhookSigningSecrets(organization_id: string, now = new Date()): Promise<string[]> {
  const doc = await webhookSecretOf(organization_id);
  if (!doc?.secrets.length) throw noWebhookSecret();
  return doc.secrets.filter((s, i) => i === 0 || inGrace(s, now)).map((s) => decryptSecret(s.value));
}

const newWebhookSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * Creates the organization's secret, or replaces it: the current one keeps signing for
 * `grace_seconds` (0: stops at once); one rotated out earlier stops, even within its grace. Two
 * rotations at once: the second is 409 and neither secret is lost.
 */
export async function rotateWebhookSecret(
  organization_id: string,
  grace_seconds = WEBHOOK_SECRET_DEFAULT_GRACE_SECONDS,
): Promise<{ signing_secret: WebhookSecretView; secret: string }> {
  const now = new Date();
  const secret = newWebhookSecret();
  const current = await webhookSecretOf(organization_id);
  let doc: WebhookSecretDoc | null;
  if (!current) {
    doc = await insertWebhookSecret(organization_id, [{ value: encryptSecret(secret) }]);
  } else {
    const previous =
      grace_seconds > 0
        ? [{ value: current.secrets[0].value, expires_at: new Date(now.getTime() + grace_seconds * 1000) }]
        : [];
    doc = await replaceWebhookSecrets(organization_id, current.secrets[0].value, [
      { value: encryptSecret(secret) },
      ...previous,
    ]);
  }
  if (!doc) throw conflict('The secret was created or rotated meanwhile by another request; rotate again if needed');
  noteChange('secret', current ? '***' : null, '***'); // that it changed, never what it is
  return { signing_secret: view(doc, now), secret };
}
