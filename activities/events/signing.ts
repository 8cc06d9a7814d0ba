/**
 * The Standard Webhooks signature (the convention Svix, Resend and others share): secrets are
 * `whsec_<base64 of 32 random bytes>`, the HMAC key is those bytes, and each signature is
 * `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`.
 */
import { createHmac, randomBytes } from 'node:crypto';

export const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The three headers of one attempt; several secrets (a rotation's grace) give space-separated signatures. */
export function signedHeaders(secrets: string[], id: string, body: string, at = new Date()): Record<string, string> {
  const timestamp = Math.floor(at.getTime() / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => sign(s, id, timestamp, body)).join(' '),
  };
}
