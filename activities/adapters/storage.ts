/** Object storage engine (MinIO / any S3-compatible server) behind the storage activities. */
import { runtime } from '../core/runtime.ts';

export async function putObject(key: string, body: Buffer, contentType: string): Promise<void> {
  const { minio, minioSettings } = runtime();
  await minio.putObject(minioSettings.bucket, key, body, body.length, { 'Content-Type': contentType });
}

export async function getObject(key: string): Promise<Buffer | null> {
  const { minio, minioSettings } = runtime();
  try {
    const stream = await minio.getObject(minioSettings.bucket, key);
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  } catch (err) {
    if ((err as { code?: string }).code === 'NoSuchKey') return null;
    throw err;
  }
}

export async function removeObject(key: string): Promise<void> {
  const { minio, minioSettings } = runtime();
  await minio.removeObject(minioSettings.bucket, key);
}

/** File names become object-key segments: no separators, no dot-dot, bounded length. */
export function safeName(name: string | undefined, fallback = 'upload'): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  const cleaned = base
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._]+/, '')
    .slice(-100);
  return cleaned || fallback;
}
