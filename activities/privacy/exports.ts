/**
 * A user's data handed back (docs/privacy.md): an export is asked for over HTTP, gathered by the
 * durable run `user-export:<export_id>` (one activity per component, then the zip), downloadable
 * until it expires, then removed by the same run.
 */
import { removeObject } from '../adapters/storage.ts';
import { busy, conflict, notFound, PlatformError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { runtime } from '../core/runtime.ts';
import { findUser } from '../identity/index.ts';
import { EXPORTS_GATHERED_PER_ORGANIZATION, type Requester } from './constants.ts';
import { privacyRuns, userDataPart, userDataParts } from './registry.ts';
import { privacySettings } from './settings.ts';
import {
  claimExportSlot,
  deleteExport,
  exportById,
  type ExportDoc,
  exportsGathered,
  insertExport,
  markExportExpired,
  markExportFailed,
  markExportReady,
  releaseExportSlot,
  setExportPart,
  takeExportQuota,
} from './store.ts';
import { type PackedPart, packZip } from './zip.ts';

export interface ExportView {
  export_id: string;
  user_id: string;
  status: ExportDoc['status'];
  /** per component, how many records of each kind and files it exported (as each part is gathered) */
  counts: Record<string, Record<string, number>>;
  bytes: number | null;
  error: string | null;
  created_at: string;
  ready_at: string | null;
  expires_at: string | null;
}

const iso = (d?: Date) => (d ? new Date(d).toISOString() : null);

function viewExport(d: ExportDoc): ExportView {
  return {
    export_id: d._id,
    user_id: d.user_id,
    status: d.status,
    counts: d.parts ?? {},
    bytes: d.bytes ?? null,
    error: d.error ?? null,
    created_at: iso(d.created_at)!,
    ready_at: iso(d.ready_at),
    expires_at: iso(d.expires_at),
  };
}

const objectPrefix = (export_id: string) => `privacy/exports/${export_id}/`;
const partKey = (export_id: string, part: string) => `${objectPrefix(export_id)}parts/${part}.json`;
const zipKey = (export_id: string) => `${objectPrefix(export_id)}export.zip`;

/**
 * Starts an export of the user's data. One at a time per user: while one is gathered, asking again
 * answers that one; at most USER_EXPORTS_PER_DAY a day (429 beyond), since each one reads
 * everything the user has.
 */
export async function requestExport(organization_id: string, user_id: string, by: Requester): Promise<ExportView> {
  const cfg = privacySettings();
  const since = new Date(Date.now() - 86_400_000);
  // One at a time per user, claimed atomically: concurrent requests of one user take one place.
  const export_id = newId('exp');
  for (let attempt = 0; ; attempt += 1) {
    const running = await claimExportSlot(organization_id, user_id, export_id);
    if (!running) break;
    const doc = await exportById(running);
    if (doc) return viewExport(doc);
    // Refused and deleted meanwhile (its slot given back): claim again.
    if (attempt >= 3) throw busy("An export of this user's data is being started; try again shortly", 1);
  }
  const refuse = async (err: PlatformError) => {
    await deleteExport(export_id);
    await releaseExportSlot(organization_id, user_id, export_id);
    return err;
  };
  // The organization's exports gathered now: written first, then counted, so concurrent requests
  // all see each other and never admit more than the cap between them (the later ones go).
  const doc = await insertExport({ _id: export_id, organization_id, user_id, requested_by: by });
  const gathered = await exportsGathered(organization_id, since);
  const place = gathered.findIndex((e) => e._id === doc._id);
  if (place < 0 || place >= EXPORTS_GATHERED_PER_ORGANIZATION) {
    throw await refuse(
      new PlatformError(
        'rate_limited',
        `At most ${EXPORTS_GATHERED_PER_ORGANIZATION} exports of an organization are gathered at a time; try again when one is ready`,
      ),
    );
  }
  if (!(await takeExportQuota(organization_id, user_id, cfg.USER_EXPORTS_PER_DAY))) {
    throw await refuse(
      new PlatformError('rate_limited', `At most ${cfg.USER_EXPORTS_PER_DAY} exports of a user's data in 24 hours`),
    );
  }
  try {
    await privacyRuns().startExport(doc._id, { organization_id, user_id });
  } catch (err) {
    // Never left `processing` without a run: it would hold the user's and the organization's places.
    await markExportFailed(doc._id, 'the export could not be started');
    throw err;
  }
  return viewExport(doc);
}

/** The user's export, or 404 (another user's export is as unknown as a missing one). */
export async function getExport(organization_id: string, user_id: string, export_id: string): Promise<ExportView> {
  return viewExport(await ownExport(organization_id, user_id, export_id));
}

async function ownExport(organization_id: string, user_id: string, export_id: string): Promise<ExportDoc> {
  const doc = await exportById(export_id);
  if (!doc || doc.organization_id !== organization_id || doc.user_id !== user_id)
    throw notFound(`Export not found: ${export_id}`);
  return doc;
}

/** The ready zip as a stream, with its size; 409 while it is gathered or after it failed, 410 once expired. */
export async function openExportDownload(organization_id: string, user_id: string, export_id: string) {
  const doc = await ownExport(organization_id, user_id, export_id);
  if (doc.status === 'processing') throw conflict('The export is still being prepared');
  if (doc.status === 'failed') throw conflict(`The export failed: ${doc.error ?? 'unknown error'}`);
  if (doc.status === 'expired' || !doc.object_key || (doc.expires_at && doc.expires_at.getTime() <= Date.now()))
    throw new PlatformError('gone', 'The export has expired');
  const { minio, minioSettings } = runtime();
  const stream = await minio.getObject(minioSettings.bucket, doc.object_key);
  return { stream, size: doc.bytes ?? 0, filename: `user-export-${doc._id}.zip` };
}

// ---- the run's steps (workflows/user-export.ts)

interface ExportScope {
  doc: ExportDoc;
  scope: { organization_id: string; user_id: string; idp_id: string };
}

async function exportScope(export_id: string): Promise<ExportScope | null> {
  const doc = await exportById(export_id);
  if (!doc || doc.status !== 'processing') return null;
  const user = await findUser(doc.organization_id, doc.user_id);
  if (!user) return null; // erased meanwhile
  return { doc, scope: { organization_id: doc.organization_id, user_id: doc.user_id, idp_id: user.idp_id } };
}

/** The parts to gather; none when the export is gone or the user was erased meanwhile. */
export async function beginUserExport(export_id: string): Promise<string[]> {
  const found = await exportScope(export_id);
  if (!found) {
    await markExportFailed(export_id, 'the user no longer exists');
    return [];
  }
  return userDataParts();
}

/** Gathers one component's part into storage (the zip is packed from there). */
export async function exportUserPart(input: { export_id: string; part: string }): Promise<void> {
  const found = await exportScope(input.export_id);
  if (!found) return;
  const out = await userDataPart(input.part).export(found.scope);
  const counts: Record<string, number> = Object.fromEntries(Object.entries(out.data).map(([k, v]) => [k, v.length]));
  counts.files = out.files.length;
  const body = Buffer.from(JSON.stringify({ data: out.data, files: out.files }));
  const { minio, minioSettings } = runtime();
  await minio.putObject(minioSettings.bucket, partKey(input.export_id, input.part), body, body.length, {
    'Content-Type': 'application/json',
  });
  // Erased while this part was gathered: the erasure may have swept the export's objects already.
  if (!(await exportScope(input.export_id))) {
    await removeObject(partKey(input.export_id, input.part));
    return;
  }
  await setExportPart(input.export_id, input.part, counts);
}

/** Packs the gathered parts into the zip and marks the export ready until `ttl_ms` from now. */
export async function packUserExport(input: { export_id: string; parts: string[]; ttl_ms: number }): Promise<void> {
  const found = await exportScope(input.export_id);
  if (!found) {
    // The user was erased meanwhile (or the export is gone): the parts gathered so far go too.
    await removeExportObjects(input.export_id);
    return;
  }
  const { minio, minioSettings } = runtime();
  const packed: PackedPart[] = [];
  for (const name of input.parts) {
    const stream = await minio.getObject(minioSettings.bucket, partKey(input.export_id, name));
    const chunks: Buffer[] = [];
    for await (const c of stream) chunks.push(c as Buffer);
    const part = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Omit<PackedPart, 'name'>;
    packed.push({ name, ...part });
  }
  const key = zipKey(input.export_id);
  const { doc } = found;
  const { bytes } = await packZip(
    key,
    {
      export_id: doc._id,
      organization_id: doc.organization_id,
      user_id: doc.user_id,
      created_at: doc.created_at.toISOString(),
    },
    packed,
  );
  const now = new Date();
  const ready = await markExportReady(input.export_id, {
    object_key: key,
    bytes,
    ready_at: now,
    expires_at: new Date(now.getTime() + input.ttl_ms),
  });
  if (!ready) await removeObject(key); // erased while packing: nothing of the user stays behind
  await removeParts(input.export_id, input.parts);
}

/** Every object of the export (its parts and its zip), whatever step wrote them. */
export async function removeExportObjects(export_id: string): Promise<number> {
  const { minio, minioSettings } = runtime();
  const keys: string[] = [];
  for await (const o of minio.listObjectsV2(minioSettings.bucket, objectPrefix(export_id), true))
    if (o.name) keys.push(o.name);
  for (const key of keys) await removeObject(key);
  return keys.length;
}

async function removeParts(export_id: string, parts: string[]): Promise<void> {
  for (const name of parts) await removeObject(partKey(export_id, name));
}

export async function failUserExport(input: { export_id: string; parts: string[]; error: string }): Promise<void> {
  await markExportFailed(input.export_id, input.error.slice(0, 300));
  await removeParts(input.export_id, input.parts);
}

/** At expiry: the zip removed, the record kept (without counts) so a late download answers 410. */
export async function expireUserExport(export_id: string): Promise<void> {
  await removeObject(zipKey(export_id));
  await markExportExpired(export_id);
}
