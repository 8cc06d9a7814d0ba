/**
 * The privacy component's data: exports, erasures, the export quota and the places that bound
 * how many exports and erasures run at once. The only file that touches its models. Exports,
 * erasures and places are read by `_id`; a user's exports by the (organization_id, user_id,
 * created_at) index.
 */
import { byId, insertOnce } from '../core/db/index.ts';
import { busy } from '../core/errors.ts';
import type { Requester } from './constants.ts';
import {
  type ErasureDoc,
  type ErasureSlotDoc,
  type ExportDoc,
  type ExportSlotDoc,
  type QuotaDoc,
  UserErasure,
  UserErasureSlot,
  UserExport,
  UserExportQuota,
  UserExportSlot,
} from './models.ts';

export type { ErasureDoc, ExportDoc };

// ---- exports

export async function insertExport(doc: {
  _id: string;
  organization_id: string;
  user_id: string;
  requested_by: Requester;
}): Promise<ExportDoc> {
  return (await UserExport.create({ ...doc, status: 'processing', parts: {} })).toObject() as unknown as ExportDoc;
}

export const exportById = (export_id: string) => byId<ExportDoc>(UserExport, export_id);

/** The organization's exports asked for since `since` still gathered, oldest first (the (organization_id, …) index). */
export async function exportsGathered(
  organization_id: string,
  since: Date,
): Promise<Array<Pick<ExportDoc, '_id' | 'created_at'>>> {
  return UserExport.find(
    { organization_id, status: 'processing', created_at: { $gte: since } },
    { _id: 1, created_at: 1 },
  )
    .sort({ created_at: 1, _id: 1 })
    .lean<Array<Pick<ExportDoc, '_id' | 'created_at'>>>();
}

export async function deleteExport(export_id: string): Promise<void> {
  await UserExport.deleteOne({ _id: export_id });
}

export async function allExportsOf(organization_id: string, user_id: string): Promise<ExportDoc[]> {
  return UserExport.find({ organization_id, user_id }).lean<ExportDoc[]>();
}

export async function setExportPart(
  export_id: string,
  component: string,
  counts: Record<string, number>,
): Promise<void> {
  await UserExport.updateOne({ _id: export_id }, { $set: { [`parts.${component}`]: counts } });
}

/** Marks a processing export ready; false when it is no longer processing (erased meanwhile). */
export async function markExportReady(
  export_id: string,
  set: { object_key: string; bytes: number; ready_at: Date; expires_at: Date },
): Promise<boolean> {
  const res = await UserExport.updateOne(
    { _id: export_id, status: 'processing' },
    { $set: { status: 'ready', ...set } },
  );
  return res.modifiedCount > 0;
}

export async function markExportFailed(export_id: string, error: string): Promise<void> {
  await UserExport.updateOne({ _id: export_id, status: 'processing' }, { $set: { status: 'failed', error } });
}

export async function markExportExpired(export_id: string): Promise<void> {
  await UserExport.updateOne({ _id: export_id }, { $set: { status: 'expired' }, $unset: { object_key: 1, parts: 1 } });
}

export async function deleteExports(ids: string[]): Promise<number> {
  if (!ids.length) return 0;
  return (await UserExport.deleteMany({ _id: { $in: ids } })).deletedCount ?? 0;
}

/**
 * Takes one export from the user's daily allowance (a fixed 24-hour window): false when spent.
 * Each step is one conditional update on the `_id`, so concurrent requests never take more.
 */
export async function takeExportQuota(
  organization_id: string,
  user_id: string,
  perDay: number,
  now = new Date(),
): Promise<boolean> {
  const _id = `${organization_id}:${user_id}`;
  const windowFrom = new Date(now.getTime() - 86_400_000);
  for (let attempt = 0; attempt < 20; attempt++) {
    const taken = await UserExportQuota.findOneAndUpdate(
      { _id, window_start: { $gt: windowFrom }, count: { $lt: perDay } },
      { $inc: { count: 1 } },
    ).lean<QuotaDoc>();
    if (taken) return true;
    const current = await byId<QuotaDoc>(UserExportQuota, _id);
    // The window holds: spent, or a concurrent update got in the way (try again).
    if (current && current.window_start > windowFrom) {
      if (current.count >= perDay) return false;
      continue;
    }
    if (!current) {
      if (await insertOnce(UserExportQuota, { _id, window_start: now, count: 1 })) return true;
      continue;
    }
    const reset = await UserExportQuota.updateOne(
      { _id, window_start: current.window_start },
      { $set: { window_start: now, count: 1 } },
    );
    if (reset.modifiedCount) return true;
  }
  return false;
}

export async function dropExportQuota(organization_id: string, user_id: string): Promise<void> {
  await UserExportQuota.deleteOne({ _id: `${organization_id}:${user_id}` });
  await UserExportSlot.deleteOne({ _id: `${organization_id}:${user_id}` });
}

/** An export gathered for longer than this is abandoned (its run never started, or was stopped): its slot is free. */
const EXPORT_ABANDONED_MS = 86_400_000;
/** A request that claimed a slot writes its export within this; a slot older with no export was abandoned. */
const SLOT_WRITE_MS = 60_000;
const SLOT_WAIT_MS = 50;

/**
 * Claims the user's one export slot for `export_id` (before the export is written): null when it
 * is ours, else the id of the export being gathered that holds it. A slot whose export finished,
 * or whose request died before writing it, is taken over by one conditional update, so of
 * concurrent requests exactly one claims it.
 */
export async function claimExportSlot(
  organization_id: string,
  user_id: string,
  export_id: string,
  now = new Date(),
): Promise<string | null> {
  const _id = `${organization_id}:${user_id}`;
  for (let attempt = 0; attempt < 40; attempt++) {
    if (await insertOnce(UserExportSlot, { _id, export_id, at: now })) return null;
    const slot = await byId<ExportSlotDoc>(UserExportSlot, _id);
    if (!slot) continue;
    const held = await exportById(slot.export_id);
    // An export still gathered a day later lost its run (a crash before it started): it holds nothing.
    if (held?.status === 'processing' && now.getTime() - new Date(held.created_at).getTime() < EXPORT_ABANDONED_MS)
      return slot.export_id;
    // The request that claimed it is still writing its export: wait for it.
    if (!held && now.getTime() - new Date(slot.at).getTime() < SLOT_WRITE_MS) {
      await new Promise((r) => setTimeout(r, SLOT_WAIT_MS));
      continue;
    }
    const taken = await UserExportSlot.updateOne({ _id, export_id: slot.export_id }, { $set: { export_id, at: now } });
    if (taken.modifiedCount) return null;
  }
  throw busy("An export of this user's data is being started; try again shortly", 1);
}

/** Gives the slot back when the export it was claimed for was refused. */
export async function releaseExportSlot(organization_id: string, user_id: string, export_id: string): Promise<void> {
  await UserExportSlot.deleteOne({ _id: `${organization_id}:${user_id}`, export_id });
}

// ---- erasures

export const erasureKey = (organization_id: string, user_id: string) => `${organization_id}:${user_id}`;

/** Creates the user's erasure unless one exists; answers the one that holds. */
export async function insertErasureOnce(
  doc: Omit<ErasureDoc, 'created_at' | 'updated_at' | 'steps' | 'status' | 'completed_at'>,
): Promise<{ erasure: ErasureDoc; created: boolean }> {
  const created = await insertOnce(UserErasure, { ...doc, status: 'processing', steps: {} });
  return { erasure: (await byId<ErasureDoc>(UserErasure, doc._id))!, created };
}

export const erasureById = (key: string) => byId<ErasureDoc>(UserErasure, key);

export async function setErasureStep(key: string, component: string, report: Record<string, number>): Promise<void> {
  await UserErasure.updateOne(
    { _id: key },
    { $set: { [`steps.${component}`]: { status: 'done', report, at: new Date() } } },
  );
}

/** A step's report so far, the step still pending (identity's first end, before its last). */
export async function setErasureReport(key: string, component: string, report: Record<string, number>): Promise<void> {
  await UserErasure.updateOne({ _id: key }, { $set: { [`steps.${component}.report`]: report } });
}

export async function setErasurePending(key: string, components: string[]): Promise<void> {
  const set = Object.fromEntries(components.map((c) => [`steps.${c}`, { status: 'pending', report: {} }]));
  await UserErasure.updateOne({ _id: key, status: 'processing' }, { $set: set });
}

/**
 * Completes the erasure and forgets the person's idp_id (held only while the run needed it) and
 * the admin's reason (free text, which may name the person: the record outlives them).
 */
export async function markErasureCompleted(key: string): Promise<void> {
  await UserErasure.updateOne(
    { _id: key, status: 'processing' },
    { $set: { status: 'completed', completed_at: new Date() }, $unset: { idp_id: 1, reason: 1 } },
  );
}

/** A place whose erasure finished no step for this long is taken over. */
const ERASURE_PLACE_LEASE_MS = 30 * 60_000;

const erasureSlotIds = (organization_id: string, places: number) =>
  Array.from({ length: places }, (_, n) => `${organization_id}#${n}`);

/**
 * Takes one of the organization's `places` for the erasure `key`: true when it holds one (already,
 * or now). A place held by an erasure that completed (its run stopped before giving it back), or
 * whose lease lapsed, is taken over by one conditional update; concurrent takers each win a
 * different place or none.
 */
export async function takeErasureSlot(organization_id: string, key: string, places: number): Promise<boolean> {
  const ids = erasureSlotIds(organization_id, places);
  const held = await UserErasureSlot.find({ _id: { $in: ids } }).lean<ErasureSlotDoc[]>();
  if (held.some((s) => s.erasure === key)) return true;
  for (const _id of ids) {
    const slot = held.find((s) => s._id === _id);
    if (!slot) {
      if (await insertOnce(UserErasureSlot, { _id, erasure: key, at: new Date() })) return true;
      continue;
    }
    const holder = await erasureById(slot.erasure);
    // A holder that completed without giving it back, or that finished no step for a long while
    // (a part failing again and again), gives way.
    if (holder && holder.status !== 'completed' && Date.now() - new Date(slot.at).getTime() < ERASURE_PLACE_LEASE_MS)
      continue;
    if (
      (await UserErasureSlot.updateOne({ _id, erasure: slot.erasure }, { $set: { erasure: key, at: new Date() } }))
        .modifiedCount
    )
      return true;
  }
  return false;
}

/** The erasure finished a step: its place's lease starts again. */
export async function touchErasureSlot(organization_id: string, key: string, places: number): Promise<void> {
  await UserErasureSlot.updateMany(
    { _id: { $in: erasureSlotIds(organization_id, places) }, erasure: key },
    { $set: { at: new Date() } },
  );
}

/** Gives the erasure's place back (a second call finds none). */
export async function releaseErasureSlot(organization_id: string, key: string, places: number): Promise<void> {
  await UserErasureSlot.deleteMany({ _id: { $in: erasureSlotIds(organization_id, places) }, erasure: key });
}
