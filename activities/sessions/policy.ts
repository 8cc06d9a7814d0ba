/**
 * An organization's session limits: a lifetime from creation and an inactivity timeout. They are
 * applied when a session is used or listed (nothing sweeps): a session found past a limit is ended
 * then, its end record naming the limit and the moment it passed, and it answers as any ended one.
 */
import { Cache } from '../core/db/index.ts';
import type { EndReason } from './constants.ts';
import { policyDoc, type SessionDoc, type SessionPolicyDoc, writePolicy } from './store.ts';

/**
 * Last activity is written at most once per this interval (store.ts touchActivity), so the
 * recorded time may lag the real one by up to this much: the inactivity timeout counts from the
 * recorded time plus this lag, which may end a session up to a minute late, never early.
 */
export const ACTIVITY_WRITE_MS = 60_000;

/**
 * Each process keeps an organization's policy for 10 s (every verification reads it): a change made
 * through another edge replica applies there within that; through this one at once.
 */
const policies = new Cache<string, SessionPolicyDoc | null>({ max: 10_000, ttlMs: 10_000 });

export interface SessionPolicy {
  organization_id: string;
  lifetime_seconds: number | null;
  idle_timeout_seconds: number | null;
  updated_at: string | null;
}

const view = (organization_id: string, doc: SessionPolicyDoc | null): SessionPolicy => ({
  organization_id,
  lifetime_seconds: doc?.lifetime_seconds ?? null,
  idle_timeout_seconds: doc?.idle_timeout_seconds ?? null,
  updated_at: doc?.updated_at ? doc.updated_at.toISOString() : null,
});

export const policyOf = (organization_id: string) =>
  policies.getOrLoad(organization_id, () => policyDoc(organization_id));

export async function getSessionPolicy(organization_id: string): Promise<SessionPolicy> {
  return view(organization_id, await policyOf(organization_id));
}

/** Sets or (null) removes each limit given; the rest stay. */
export async function setSessionPolicy(
  organization_id: string,
  patch: { lifetime_seconds?: number | null; idle_timeout_seconds?: number | null },
): Promise<SessionPolicy> {
  const doc = await writePolicy(organization_id, patch);
  policies.set(organization_id, doc);
  return view(organization_id, doc);
}

/** The limit a session has passed at `now` and when it passed it, else undefined. */
export function pastLimit(
  session: Pick<SessionDoc, 'created_at' | 'last_activity'>,
  policy: SessionPolicyDoc | null,
  now: number,
): { reason: EndReason; at: Date } | undefined {
  const ends = endsBy(session, policy);
  if (ends && ends.at.getTime() <= now) return ends;
  return undefined;
}

/** When the policy ends the session if nothing else happens (`inactivity` moves with activity). */
export function endsBy(
  session: Pick<SessionDoc, 'created_at' | 'last_activity'>,
  policy: SessionPolicyDoc | null,
): { reason: EndReason; at: Date } | undefined {
  const lifetime = policy?.lifetime_seconds
    ? new Date(new Date(session.created_at).getTime() + policy.lifetime_seconds * 1000)
    : undefined;
  const idle = policy?.idle_timeout_seconds
    ? new Date(new Date(session.last_activity).getTime() + policy.idle_timeout_seconds * 1000 + ACTIVITY_WRITE_MS)
    : undefined;
  if (lifetime && (!idle || lifetime <= idle)) return { reason: 'lifetime', at: lifetime };
  if (idle) return { reason: 'inactivity', at: idle };
  return undefined;
}
