/**
 * Loyalty's once-only facts (docs/privacy.md, "What an erasure never reopens"). As a person's
 * erasure begins, before anything is erased, this gathers what a once-only rule must still know
 * when the same person joins again: the limited awards earned in windows that are still open (and
 * ever), whether they were referred, and the users they were paired with by a referral. Counts,
 * a flag and other users' ids: nothing of the person, and no link to the erased account's records.
 * Identity keeps them under the person's marker; the awards and referral checks read them back.
 */
import type { OnceFacts, UserScope } from '../core/user-data.ts';
import { returningFacts } from '../identity/index.ts';
import { usesOfUser } from './campaign-store.ts';
import { LIMIT_PERIODS, windowOf } from './policies.ts';
import { actionAwardCounts, operationsStartingWith, referralOf, referralsNaming } from './store.ts';

export interface LoyaltyFacts {
  /** `<action>:<window>:` → limited earnings in that window (windows still open when gathered, and `ever`) */
  earned: Record<string, number>;
  /**
   * Campaign uses a limit counts: `<campaign>|<window>` → uses in that window (still open when
   * gathered), `<campaign>|nth` → the n-th award bonus was had (engine.ts useOf).
   */
  campaigns: Record<string, number>;
  /** awards per action (a campaign's n-th award condition counts them) */
  awards: Record<string, number>;
  referred: boolean;
  /** the other side of each of the person's referrals */
  partners: string[];
}

/** `award:<user>:<action>:<window>:<n>` → `<action>:<window>:` (the action may hold colons). */
function slotOf(operation_id: string, user_id: string): string | null {
  const rest = operation_id.slice(`award:${user_id}:`.length);
  const parts = rest.split(':');
  if (parts.length < 3 || !/^\d+$/.test(parts[parts.length - 1])) return null;
  return `${parts.slice(0, -1).join(':')}:`;
}

/** Gathered from the user's own records, before the erasure touches them. */
export async function gatherLoyaltyFacts(
  { organization_id, user_id }: UserScope,
  now = new Date(),
): Promise<OnceFacts | null> {
  const open = new Set(LIMIT_PERIODS.map((p) => windowOf(p, now)));
  const earned: Record<string, number> = {};
  for (const op of await operationsStartingWith(organization_id, `award:${user_id}:`)) {
    const slot = slotOf(op.operation_id, user_id);
    if (!slot || !open.has(slot.split(':').at(-2)!)) continue;
    earned[slot] = (earned[slot] ?? 0) + 1;
  }
  const [own, referrals, uses, awards] = await Promise.all([
    referralOf(organization_id, user_id),
    referralsNaming(organization_id, user_id),
    usesOfUser(organization_id, user_id),
    actionAwardCounts(organization_id, user_id),
  ]);
  const campaigns: Record<string, number> = {};
  for (const u of uses) {
    // Windows still open when gathered (and `nth`, which never closes).
    if (u.used <= 0 || (u.window !== 'nth' && !open.has(u.window))) continue;
    const slot = `${u.campaign_id}|${u.window}`;
    campaigns[slot] = (campaigns[slot] ?? 0) + u.used;
  }
  const partners = [
    ...new Set(
      referrals
        .map((r) => (r.referrer_user_id === user_id ? r.referred_user_id : r.referrer_user_id))
        .filter((u) => u !== user_id),
    ),
  ];
  const list = (m: Record<string, number>) => Object.entries(m).map(([slot, n]) => ({ slot, n }));
  if (
    !own &&
    !partners.length &&
    !Object.keys(earned).length &&
    !Object.keys(campaigns).length &&
    !Object.keys(awards).length
  )
    return null;
  // Stored as lists: an action name may hold characters a document key may not.
  return { earned: list(earned), referred: !!own, partners, campaigns: list(campaigns), awards: list(awards) };
}

/** The facts of every erased account of the person behind this user, merged; null for someone new. */
export async function loyaltyFactsOf(
  organization_id: string,
  user_id: string,
): Promise<(LoyaltyFacts & { first_joined_at: Date }) | null> {
  const r = await returningFacts(organization_id, user_id);
  if (!r) return null;
  const merged: LoyaltyFacts = { earned: {}, referred: false, partners: [], campaigns: {}, awards: {} };
  type Counts = { slot: string; n: number }[];
  for (const f of r.facts) {
    const l = f.loyalty as
      { earned?: Counts; referred?: boolean; partners?: string[]; campaigns?: Counts; awards?: Counts } | undefined;
    if (!l) continue;
    for (const e of l.earned ?? []) merged.earned[e.slot] = (merged.earned[e.slot] ?? 0) + e.n;
    for (const e of l.campaigns ?? []) merged.campaigns[e.slot] = (merged.campaigns[e.slot] ?? 0) + e.n;
    for (const e of l.awards ?? []) merged.awards[e.slot] = (merged.awards[e.slot] ?? 0) + e.n;
    merged.referred ||= !!l.referred;
    merged.partners.push(...(l.partners ?? []));
  }
  return { ...merged, first_joined_at: r.first_joined_at };
}

export const earnedIn = (facts: LoyaltyFacts, slot: string) => facts.earned[slot] ?? 0;
