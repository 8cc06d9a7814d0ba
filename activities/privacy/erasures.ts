/**
 * A user's data erased (docs/privacy.md): asked for over HTTP by an admin, carried out by the
 * durable run `user-erasure:<organization>:<user_id>`: identity's first end (the user gone for every
 * reader, keys revoked; the person's once-only facts kept under their marker, then the idp_id
 * freed), a place among the organization's erasures, every other component's part twice (the
 * second pass takes what a run of the user still in flight wrote during the first), identity's
 * last end, then `user.erased`.
 */
import { randomBytes } from 'node:crypto';

import { notFound } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import type { OnceFacts, UserScope } from '../core/user-data.ts';
import { recordEvent } from '../events/index.ts';
import { beginIdentityErasure, findUser, idpHeld, isPlatformUserId, releaseIdp } from '../identity/index.ts';
import { ERASURES_RUNNING_PER_ORGANIZATION, type Requester } from './constants.ts';
import { removeExportObjects } from './exports.ts';
import { privacyRuns, userDataPart, userDataParts } from './registry.ts';
import {
  allExportsOf,
  deleteExports,
  dropExportQuota,
  erasureById,
  type ErasureDoc,
  erasureKey,
  insertErasureOnce,
  markErasureCompleted,
  releaseErasureSlot,
  setErasurePending,
  setErasureReport,
  setErasureStep,
  takeErasureSlot,
  touchErasureSlot,
} from './store.ts';

/** The part erased last: identity deletes the user itself once every other part is done. */
export const LAST_PART = 'identity';

export interface ErasureView {
  erasure_id: string;
  user_id: string;
  status: ErasureDoc['status'];
  reason: string | null;
  /** per component: pending or done, and what it did (`{objects_deleted: 3}`) */
  steps: Record<string, { status: 'pending' | 'done'; report: Record<string, number>; at: string | null }>;
  created_at: string;
  completed_at: string | null;
}

const iso = (d?: Date) => (d ? new Date(d).toISOString() : null);

function viewErasure(d: ErasureDoc): ErasureView {
  const steps: ErasureView['steps'] = {};
  for (const [k, v] of Object.entries(d.steps ?? {}))
    steps[k] = { status: v.status, report: v.report ?? {}, at: iso(v.at) };
  return {
    erasure_id: d.erasure_id,
    user_id: d.user_id,
    status: d.status,
    reason: d.reason ?? null,
    steps,
    created_at: iso(d.created_at)!,
    completed_at: iso(d.completed_at),
  };
}

/**
 * Starts erasing the user named by `ref` (user_id or idp_id). Asking again, during or after the
 * erasure, answers the same erasure by user_id (an idp_id is free for a new user at once).
 */
export async function requestErasure(
  organization_id: string,
  user: { user_id: string; idp_id: string },
  by: Requester,
  reason?: string,
): Promise<{ view: ErasureView; created: boolean }> {
  const { erasure, created } = await insertErasureOnce({
    _id: erasureKey(organization_id, user.user_id),
    erasure_id: newId('era'),
    organization_id,
    user_id: user.user_id,
    idp_id: user.idp_id,
    tombstone: `del_${randomBytes(16).toString('hex')}`,
    requested_by: by,
    ...(reason ? { reason } : {}),
  });
  // Started on every request: a start lost to a crash after the insert is made by the next one.
  if (erasure.status === 'processing')
    await privacyRuns().startErasure(erasure._id, { organization_id, user_id: user.user_id }, by);
  return { view: viewErasure(erasure), created };
}

/** The erasure of `ref`: a user_id (during or after the erasure) or the idp_id of a user being erased. */
async function findErasure(organization_id: string, ref: string): Promise<ErasureDoc | null> {
  if (isPlatformUserId(ref)) return erasureById(erasureKey(organization_id, ref));
  const user = await findUser(organization_id, ref);
  return user ? erasureById(erasureKey(organization_id, user.user_id)) : null;
}

export async function getErasure(organization_id: string, ref: string): Promise<ErasureView> {
  const doc = await findErasure(organization_id, ref);
  if (!doc) throw notFound(`No erasure for user: ${ref}`);
  return viewErasure(doc);
}

// ---- the run's steps (workflows/user-erasure.ts)

const scopeOf = (d: ErasureDoc) => ({
  organization_id: d.organization_id,
  user_id: d.user_id,
  idp_id: d.idp_id ?? d.tombstone,
  tombstone: d.tombstone,
});

/** Identity's first end, and the parts the run erases (all but the last). None once completed. */
export async function beginUserErasure(key: string): Promise<{ parts: string[] }> {
  const doc = await erasureById(key);
  if (!doc || doc.status === 'completed') return { parts: [] };
  const scope = scopeOf(doc);
  const begun = await beginIdentityErasure(scope, doc.tombstone);
  // Before the idp_id is freed and before anything is erased: what the once-only rules must still
  // know of the person, kept under their marker (docs/privacy.md, "What an erasure never reopens").
  if (await idpHeld(doc.organization_id, doc.user_id))
    await releaseIdp(scope, doc.tombstone, key, await onceOnlyFacts(scope));
  const parts = userDataParts().filter((p) => p !== LAST_PART);
  await setErasurePending(
    key,
    ['runs', ...parts, LAST_PART, 'privacy'].filter((p) => !doc.steps?.[p]),
  );
  if (!doc.steps?.[LAST_PART]?.report?.keys_revoked) await setErasureReport(key, LAST_PART, { ...begun });
  return { parts };
}

/** Each part's once-only facts about the person, by part name (parts with none are left out). */
async function onceOnlyFacts(scope: UserScope): Promise<Record<string, OnceFacts>> {
  const facts: Record<string, OnceFacts> = {};
  for (const name of userDataParts()) {
    const found = await userDataPart(name).onceOnly?.(scope);
    if (found) facts[name] = found;
  }
  return facts;
}

/** One component's part; the second pass adds what it found to the first pass's report. */
export async function eraseUserPart(input: { key: string; part: string; pass: number }): Promise<void> {
  const doc = await erasureById(input.key);
  if (!doc || doc.status === 'completed') return;
  const report = await userDataPart(input.part).erase(scopeOf(doc));
  const before = input.pass > 1 ? (doc.steps?.[input.part]?.report ?? {}) : {};
  const merged: Record<string, number> = { ...before };
  for (const [k, v] of Object.entries(report)) merged[k] = (merged[k] ?? 0) + v;
  await setErasureStep(input.key, input.part, merged);
  await touchErasureSlot(doc.organization_id, input.key, ERASURES_RUNNING_PER_ORGANIZATION);
}

/** The last end: identity's, the user's own exports, then `user.erased` and the erasure completed. */
export async function finishUserErasure(key: string): Promise<void> {
  const doc = await erasureById(key);
  if (!doc || doc.status === 'completed') return;
  const scope = scopeOf(doc);
  const last = await userDataPart(LAST_PART).erase(scope);
  await setErasureStep(key, LAST_PART, { ...(doc.steps?.[LAST_PART]?.report ?? {}), ...last });
  const exports = await allExportsOf(doc.organization_id, doc.user_id);
  // Every object of each export: the zip, and the parts of one the erasure interrupted.
  for (const e of exports) await removeExportObjects(e._id);
  const exports_deleted = await deleteExports(exports.map((e) => e._id));
  await dropExportQuota(doc.organization_id, doc.user_id);
  await setErasureStep(key, 'privacy', { exports_deleted });
  const completed_at = new Date();
  await recordEvent({
    organization_id: doc.organization_id,
    type: 'user.erased',
    key: doc.erasure_id,
    data: { user_id: doc.user_id, erasure_id: doc.erasure_id, erased_at: completed_at.toISOString() },
    at: completed_at,
  });
  await markErasureCompleted(key);
  await releaseErasureSlot(doc.organization_id, key, ERASURES_RUNNING_PER_ORGANIZATION);
}

/**
 * A place among the organization's erasures that delete at once (ERASURES_RUNNING_PER_ORGANIZATION):
 * true when this one holds one; the run waits and asks again otherwise. A completed erasure needs none.
 */
export async function takeErasurePlace(key: string): Promise<boolean> {
  const doc = await erasureById(key);
  if (!doc || doc.status === 'completed') return true;
  return takeErasureSlot(doc.organization_id, key, ERASURES_RUNNING_PER_ORGANIZATION);
}

/** The user's other runs stopped before the parts are erased, so none writes after its part. */
export async function stopUserRuns(key: string): Promise<void> {
  const doc = await erasureById(key);
  if (!doc || doc.status === 'completed') return;
  const runs_stopped = await privacyRuns().stopUserRuns({ organization_id: doc.organization_id, user_id: doc.user_id });
  await setErasureStep(key, 'runs', {
    ...(doc.steps?.runs?.report ?? {}),
    runs_stopped: (doc.steps?.runs?.report?.runs_stopped ?? 0) + runs_stopped,
  });
}

/** After completion: the user's ended runs deleted from Temporal, whose inputs held the user's data. */
export async function purgeUserRuns(key: string): Promise<void> {
  const doc = await erasureById(key);
  if (!doc) return;
  const runs_deleted = await privacyRuns().purgeUserRuns({
    organization_id: doc.organization_id,
    user_id: doc.user_id,
  });
  await setErasureStep(key, 'runs', { ...(doc.steps?.runs?.report ?? {}), runs_deleted });
}
