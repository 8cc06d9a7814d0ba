/**
 * Secrets at rest (LLM provider keys, gift PINs, endpoint secrets): AES-256-GCM with a key derived
 * from CONFIG_ENCRYPTION_KEY, else from DATA_DIR/config-key.txt, generated on first use (mode
 * 0600) so storing a provider key works out of the box locally, where the edge and the workers
 * share DATA_DIR (docker compose passes CONFIG_ENCRYPTION_KEY to each process instead: docs/build.md).
 * The file appears whole or not at all (written aside, then hard-linked into place, which fails
 * when another process got there first), so whichever process comes first, all read the same key.
 * The same key, derived per purpose, keys the hashes of keyedHash below.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { config } from './config.ts';
import { PlatformError } from './errors.ts';

const KEY_FILE = 'config-key.txt';

function readKeyFile(file: string): string {
  const secret = fs.readFileSync(file, 'utf8').trim();
  if (!secret) throw new PlatformError('misconfigured', `${file} is empty: provider secrets cannot be stored or read`);
  return secret;
}

/** The configuration key's source, creating DATA_DIR/config-key.txt when neither exists. */
export function ensureConfigEncryptionKey(): { source: 'env' | 'file' | 'generated'; file?: string; secret: string } {
  const cfg = config();
  if (cfg.CONFIG_ENCRYPTION_KEY) return { source: 'env', secret: cfg.CONFIG_ENCRYPTION_KEY };
  const file = path.join(cfg.dataDir, KEY_FILE);
  if (fs.existsSync(file)) return { source: 'file', file, secret: readKeyFile(file) };
  fs.mkdirSync(cfg.dataDir, { recursive: true });
  const aside = `${file}.${process.pid}.${randomBytes(6).toString('hex')}`;
  fs.writeFileSync(aside, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
  let source: 'file' | 'generated' = 'generated';
  try {
    fs.linkSync(aside, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    source = 'file'; // another process created it first: its key is the one
  } finally {
    fs.rmSync(aside, { force: true });
  }
  return { source, file, secret: readKeyFile(file) };
}

// The file is read once per process (and data directory); the hash once per secret.
let fromFile: { dataDir: string; secret: string } | undefined;
let derived: { secret: string; key: Buffer } | undefined;
function key(): Buffer {
  const cfg = config();
  let secret = cfg.CONFIG_ENCRYPTION_KEY;
  if (!secret) {
    if (fromFile?.dataDir !== cfg.dataDir)
      fromFile = { dataDir: cfg.dataDir, secret: ensureConfigEncryptionKey().secret };
    secret = fromFile.secret;
  }
  if (derived?.secret !== secret) derived = { secret, key: createHash('sha256').update(secret).digest() };
  return derived.key;
}

export function encryptSecret(plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key(), iv);
  const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return `v1:${iv.toString('base64')}:${cipher.getAuthTag().toString('base64')}:${data.toString('base64')}`;
}

export function decryptSecret(stored: string): string {
  const [v, iv, tag, data] = stored.split(':');
  if (v !== 'v1') throw new PlatformError('internal', 'unknown secret format');
  const decipher = createDecipheriv('aes-256-gcm', key(), Buffer.from(iv, 'base64'));
  decipher.setAuthTag(Buffer.from(tag, 'base64'));
  try {
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]).toString('utf8');
  } catch {
    throw new PlatformError(
      'misconfigured',
      'a stored provider secret cannot be decrypted with the configuration key (CONFIG_ENCRYPTION_KEY, else DATA_DIR/config-key.txt)',
    );
  }
}

/** What may be shown of a secret: its first 3 and last 4 characters. */
export const maskSecret = (s: string) => (s.length <= 8 ? '••••' : `${s.slice(0, 3)}…${s.slice(-4)}`);

// Keys derived per purpose, so a keyed hash never shares its key with the cipher above.
const purposeKeys = new Map<string, { base: Buffer; key: Buffer }>();

/**
 * A keyed hash (HMAC-SHA256, hex) of `value` under a key derived for `purpose` from the
 * configuration key, which lives outside the database: whoever reads the database alone cannot
 * test a guess (an email, a phone number) against it. Rotating the configuration key makes
 * earlier hashes unmatchable.
 */
export function keyedHash(purpose: string, value: string): string {
  const base = key();
  let k = purposeKeys.get(purpose);
  if (!k || k.base !== base) {
    k = { base, key: Buffer.from(hkdfSync('sha256', base, Buffer.alloc(0), `platform/${purpose}`, 32)) };
    purposeKeys.set(purpose, k);
  }
  return createHmac('sha256', k.key).update(value).digest('hex');
}
