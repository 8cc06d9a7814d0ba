/**
 * Packs an export: `manifest.json`, one `<component>.json` per part and the user's files under
 * `files/<component>/`, streamed from storage into the zip and the zip streamed back into storage
 * (nothing held whole in memory but one part's records).
 */
import type { Readable } from 'node:stream';

import { ZipFile } from 'yazl';

import { runtime } from '../core/runtime.ts';
import type { ExportFile } from '../core/user-data.ts';

export interface PackedPart {
  name: string;
  data: Record<string, unknown[]>;
  files: ExportFile[];
}

export interface Manifest {
  format: 'user-export/1';
  export_id: string;
  organization_id: string;
  user_id: string;
  created_at: string;
  components: Record<string, { records: Record<string, number>; files: string[]; missing_files: string[] }>;
}

/** A path segment safe in every unzip tool: no separators, no `..`, bounded. */
const segment = (s: string) =>
  s
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^\.+/, '_')
    .slice(0, 120) || '_';
const zipPath = (component: string, name: string) =>
  `files/${segment(component)}/${name.split('/').map(segment).join('/')}`;

async function sizeOf(key: string): Promise<number | null> {
  const { minio, minioSettings } = runtime();
  try {
    return (await minio.statObject(minioSettings.bucket, key)).size;
  } catch (err) {
    if ((err as { code?: string }).code === 'NotFound' || (err as { code?: string }).code === 'NoSuchKey') return null;
    throw err;
  }
}

/** Writes the zip to `key`; answers its manifest and size. */
export async function packZip(
  key: string,
  head: Omit<Manifest, 'format' | 'components'>,
  parts: PackedPart[],
): Promise<{ manifest: Manifest; bytes: number }> {
  const { minio, minioSettings } = runtime();
  const zip = new ZipFile();
  const manifest: Manifest = { format: 'user-export/1', ...head, components: {} };
  const taken = new Set<string>();
  for (const part of parts) {
    const entry = (manifest.components[part.name] = {
      records: {} as Record<string, number>,
      files: [] as string[],
      missing_files: [] as string[],
    });
    for (const [k, v] of Object.entries(part.data)) entry.records[k] = v.length;
    zip.addBuffer(Buffer.from(JSON.stringify(part.data, null, 2)), `${segment(part.name)}.json`);
    for (const file of part.files) {
      let path = zipPath(part.name, file.name);
      for (let n = 2; taken.has(path); n++) path = zipPath(part.name, `${n}-${file.name}`);
      const size = await sizeOf(file.key);
      if (size === null) {
        entry.missing_files.push(path);
        continue;
      }
      taken.add(path);
      entry.files.push(path);
      zip.addReadStreamLazy(path, { size }, (cb) => {
        minio.getObject(minioSettings.bucket, file.key).then(
          (s) => cb(null, s),
          (err) => cb(err as Error, undefined as never),
        );
      });
    }
  }
  zip.addBuffer(Buffer.from(JSON.stringify(manifest, null, 2)), 'manifest.json');
  zip.end();
  const failed = new Promise<never>((_, reject) => zip.on('error', reject));
  await Promise.race([
    minio.putObject(minioSettings.bucket, key, zip.outputStream as Readable, undefined, {
      'Content-Type': 'application/zip',
    }),
    failed,
  ]);
  return { manifest, bytes: (await sizeOf(key)) ?? 0 };
}
