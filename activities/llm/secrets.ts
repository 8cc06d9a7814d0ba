/** Provider secrets at rest: AES-256-GCM with a key derived from CONFIG_ENCRYPTION_KEY. */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { config } from '../config';
import { PlatformError } from '../errors';

function key(): Buffer {
  const secret = config().CONFIG_ENCRYPTION_KEY;
  if (!secret) throw new PlatformError(500, 'CONFIG_ENCRYPTION_KEY is not set: provider secrets cannot be stored or read');
  return createHash('sha256').update(secret).digest();
}

export function encryptSecret(plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key(), iv);
  const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return `v1:${iv.toString('base64')}:${cipher.getAuthTag().toString('base64')}:${data.toString('base64')}`;
}

export function decryptSecret(stored: string): string {
  const [v, iv, tag, data] = stored.split(':');
  if (v !== 'v1') throw new PlatformError(500, 'unknown secret format');
  const decipher = createDecipheriv('aes-256-gcm', key(), Buffer.from(iv, 'base64'));
  decipher.setAuthTag(Buffer.from(tag, 'base64'));
  try {
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]).toString('utf8');
  } catch {
    throw new PlatformError(500, 'a stored provider secret cannot be decrypted with CONFIG_ENCRYPTION_KEY');
  }
}

/** What may be shown of a secret: its first 3 and last 4 characters. */
export const maskSecret = (s: string) => (s.length <= 8 ? '••••' : `${s.slice(0, 3)}…${s.slice(-4)}`);
