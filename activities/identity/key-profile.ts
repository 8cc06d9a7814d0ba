/**
 * What an admin sets on a key beside its rights (a name, a small JSON `meta`, credits) and what a
 * key's requests were (usage by day and outcome). Only the admins of the key's organization change
 * them, never for a user holding more rights than the calling key (requireRank); a key that no
 * longer authenticates is not changed (409). A rotation hands name, meta and credits to the
 * successor (rotation.ts); usage stays with each key_id.
 */
import { noteChange } from '../core/audit-note.ts';
import { conflict, notFound } from '../core/errors.ts';
import { forgetKey, type Principal, unusableBecause } from './api-keys.ts';
import { KEY_OUTCOMES, type KeyOutcome, type RefillInterval } from './constants.ts';
import { type CreditsView, creditsView } from './credits.ts';
import { requireRank } from './key-management.ts';
import { pendingUsage } from './key-usage.ts';
import {
  type ApiKeyDoc,
  creditsDoc,
  deleteCredits,
  keyById,
  keysOfUser,
  rotationOf,
  setKeyProfile,
  usageDaysOf,
  writeCredits,
} from './store.ts';

interface KeyCreditsInput {
  remaining: number;
  refill?: { amount: number; interval: RefillInterval } | null;
}

export interface KeyPatch {
  name?: string | null;
  meta?: Record<string, unknown> | null;
  credits?: KeyCreditsInput | null;
}

export interface KeyProfile {
  key_id: string;
  user_id: string;
  name: string | null;
  meta: Record<string, unknown> | null;
  credits: CreditsView | null;
}

/** The key in the organization, else 404 (another organization's key is not told apart from none). */
async function keyOf(organization_id: string, key_id: string): Promise<ApiKeyDoc> {
  const key = await keyById(key_id);
  if (!key || key.organization_id !== organization_id) throw notFound(`API key not found: ${key_id}`);
  return key;
}

async function profileOf(key: ApiKeyDoc): Promise<KeyProfile> {
  const credits = key.credits_id ? await creditsDoc(key.credits_id) : null;
  return {
    key_id: key.key_id,
    user_id: key.user_id,
    name: key.name ?? null,
    meta: key.meta ?? null,
    credits: credits ? creditsView(credits) : null,
  };
}

export async function updateApiKey(
  actor: Principal,
  organization_id: string,
  key_id: string,
  patch: KeyPatch,
): Promise<KeyProfile> {
  const key = await keyOf(organization_id, key_id);
  requireRank(
    actor,
    await keysOfUser(organization_id, key.user_id, { active: true, fields: ['permissions', 'status'] }),
  );
  const why = unusableBecause(key, await rotationOf(key.key_id), Date.now());
  if (why) throw conflict(`API key is ${why}; only a key that still authenticates can be changed`);

  const set: Partial<Pick<ApiKeyDoc, 'name' | 'meta' | 'credits_id'>> = {};
  const unset: ('name' | 'meta' | 'credits_id')[] = [];
  if (patch.name !== undefined) {
    noteChange('name', key.name ?? null, patch.name);
    if (patch.name === null) unset.push('name');
    else set.name = patch.name;
  }
  if (patch.meta !== undefined) {
    if (patch.meta === null) unset.push('meta');
    else set.meta = patch.meta;
  }
  if (patch.credits === null) {
    if (key.credits_id) {
      noteChange('credits', 'set', null);
      await deleteCredits(key.credits_id);
      unset.push('credits_id');
    }
  } else if (patch.credits) {
    const credits_id = key.credits_id ?? key.key_id;
    const before = key.credits_id ? await creditsDoc(key.credits_id) : null;
    noteChange('credits.remaining', before?.remaining ?? null, patch.credits.remaining);
    await writeCredits({
      _id: credits_id,
      organization_id,
      remaining: patch.credits.remaining,
      ...(patch.credits.refill
        ? { refill_amount: patch.credits.refill.amount, refill_interval: patch.credits.refill.interval }
        : {}),
      refilled_at: new Date(),
    });
    if (!key.credits_id) {
      set.credits_id = credits_id;
      // A predecessor still in its rotation's grace spends from the same credits.
      if (key.rotated_from) await sharePredecessorCredits(key.rotated_from, credits_id);
    }
  }
  const updated = (await setKeyProfile(key.key_id, set, unset)) ?? key;
  forgetKey(key.hash);
  return profileOf(updated);
}

async function sharePredecessorCredits(key_id: string, credits_id: string): Promise<void> {
  const previous = await keyById(key_id);
  if (!previous || previous.credits_id) return;
  await setKeyProfile(key_id, { credits_id }, []);
  forgetKey(previous.hash);
}

export interface KeyUsage {
  key_id: string;
  days: number;
  from: string;
  to: string;
  totals: Record<KeyOutcome, number> & { total: number };
  by_day: (Record<KeyOutcome, number> & { day: string; total: number })[];
}

const zero = () => Object.fromEntries(KEY_OUTCOMES.map((o) => [o, 0])) as Record<KeyOutcome, number>;

/**
 * A key's requests by UTC day and outcome over the last `days` days (today included), every day
 * listed. A basic key reads only its own user's keys (another's is 404); an admin its
 * organization's, not those of a user holding more rights.
 */
export async function keyUsage(
  actor: Principal,
  organization_id: string,
  key_id: string,
  days: number,
): Promise<KeyUsage> {
  const key = await keyOf(organization_id, key_id);
  if (actor.level === 0 && key.user_id !== actor.user_id) throw notFound(`API key not found: ${key_id}`);
  requireRank(
    actor,
    await keysOfUser(organization_id, key.user_id, { active: true, fields: ['permissions', 'status'] }),
  );
  const today = new Date();
  const list: string[] = [];
  for (let i = days - 1; i >= 0; i -= 1)
    list.push(
      new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - i))
        .toISOString()
        .slice(0, 10),
    );
  const byDay = new Map(list.map((d) => [d, zero()]));
  const stored = await usageDaysOf(key_id, list[0]);
  const rows = [
    ...stored.map((d) => ({ day: d.day, counts: d as Partial<Record<KeyOutcome, number>> })),
    ...pendingUsage(key_id, list[0]),
  ];
  for (const r of rows) {
    const into = byDay.get(r.day);
    if (!into) continue;
    for (const o of KEY_OUTCOMES) into[o] += r.counts[o] ?? 0;
  }
  const totals = zero();
  const by_day = list.map((day) => {
    const c = byDay.get(day)!;
    for (const o of KEY_OUTCOMES) totals[o] += c[o];
    return { day, ...c, total: KEY_OUTCOMES.reduce((n, o) => n + c[o], 0) };
  });
  return {
    key_id,
    days,
    from: list[0],
    to: list[list.length - 1],
    totals: { ...totals, total: KEY_OUTCOMES.reduce((n, o) => n + totals[o], 0) },
    by_day,
  };
}
