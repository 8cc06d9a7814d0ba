/**
 * Member tiers: a member's tier follows from the points earned in the program's qualifying window
 * (never from the spendable balance: a redemption lowers nothing; a reversal lowers what was
 * earned). The points earned in a window are two ledger values apart (earned_after, member.ts),
 * so no count is kept beside the ledger. Upgrades apply at the award that reaches them; a tier
 * holds until its `valid_until` (the window after the one that earned it, plus the grace days),
 * when the scheduled review re-qualifies the member. docs/components/loyalty.md, "Tiers".
 */
import { noteChange } from '../core/audit-note.ts';
import { Cache, versionsOf } from '../core/db/index.ts';
import { invalid, notFound } from '../core/errors.ts';
import { recordEvent } from '../events/index.ts';
import { addMonths, localMidnight, localTime } from './calendar.ts';
import { earnedOf, ledgerHead } from './member.ts';
import { getRules } from './rules.ts';
import { earnedBefore } from './store.ts';
import type {
  MemberTierDoc,
  TierChangeDoc,
  TierChangeKind,
  TierDef,
  TierProgramDoc,
  TierWindow,
} from './tier-models.ts';
import {
  insertMemberTier,
  insertTierChange,
  memberKey,
  membersDue,
  readMemberTier,
  readTierProgram,
  setMemberAttributes,
  setMemberWindow,
  tierChangesOf,
  updateMemberTier,
  writeTierProgram,
} from './tier-store.ts';

export type { TierDef } from './tier-models.ts';

export const MAX_TIERS = 10;
const DAY_MS = 86_400_000;

export interface TierProgram {
  organization_id: string;
  /** lowest threshold first */
  tiers: TierDef[];
  window: TierWindow;
  grace_days: number;
  updated_at: string | null;
}

const programs = new Cache<string, TierProgram>({ max: 10_000, ttlMs: 2000 });

/** The organization's tiers (none until an admin sets them), kept 2 s per process like the rules. */
export const getTierProgram = (organization_id: string): Promise<TierProgram> =>
  programs.getOrLoad(organization_id, async () => {
    const doc = await readTierProgram(organization_id);
    return {
      organization_id,
      tiers: doc?.tiers ?? [],
      window: doc?.window ?? { type: 'rolling_months', months: 12 },
      grace_days: doc?.grace_days ?? 0,
      updated_at: doc?.updated_at.toISOString() ?? null,
    };
  });

export interface TierProgramInput {
  tiers: { tier_id: string; name: string; threshold: number; multiplier?: string; unlocks?: string[] }[];
  window: TierWindow;
  grace_days?: number;
}

/**
 * Replaces the tiers. Members keep their standing: an upgrade the new thresholds give applies at
 * their next earning, a downgrade at their review; a member whose tier is no longer defined
 * counts as the tier reached with no points (if any) until then.
 */
export async function putTierProgram(
  organization_id: string,
  input: TierProgramInput,
  updated_by: string,
): Promise<TierProgram> {
  const tiers = [...input.tiers]
    .map((t) => ({
      tier_id: t.tier_id,
      name: t.name,
      threshold: t.threshold,
      multiplier: t.multiplier ?? '1',
      unlocks: [...new Set(t.unlocks ?? [])],
    }))
    .sort((a, b) => a.threshold - b.threshold);
  if (tiers.length > MAX_TIERS) throw invalid('tiers', `at most ${MAX_TIERS} tiers`);
  const ids = new Set(tiers.map((t) => t.tier_id));
  if (ids.size !== tiers.length) throw invalid('tiers', 'each tier_id once');
  if (new Set(tiers.map((t) => t.threshold)).size !== tiers.length) throw invalid('tiers', 'each threshold once');
  const before = await getTierProgram(organization_id);
  const doc: TierProgramDoc = {
    _id: organization_id,
    tiers,
    window: input.window,
    grace_days: input.grace_days ?? 0,
    updated_by,
    updated_at: new Date(),
  };
  await writeTierProgram(doc);
  noteChange('tiers', before.tiers, tiers);
  noteChange('window', before.window, doc.window);
  noteChange('grace_days', before.grace_days, doc.grace_days);
  programs.delete(organization_id);
  return getTierProgram(organization_id);
}

// ---- members' standings, kept in memory ----

/**
 * Every award reads its member's standing (the tier multiplier, tier and country conditions):
 * each process keeps them per organization until the organization's version moves, which every
 * change of a standing moves (core/db/versions.ts: the others hear of it within about a second).
 * A window's count this process writes itself is kept in place (no move: another process that
 * holds an older one counts the window once more and keeps its own).
 */
const MAX_STANDINGS = 50_000;
const standings = new Map<string, Map<string, MemberTierDoc | null>>();
const standingVersions = versionsOf('loyalty-standings', (organization_id) => {
  standings.delete(organization_id);
});

export async function cachedStanding(organization_id: string, user_id: string): Promise<MemberTierDoc | null> {
  const wait = standingVersions.heed(organization_id);
  if (wait) await wait;
  let kept = standings.get(organization_id);
  if (!kept) standings.set(organization_id, (kept = new Map()));
  const hit = kept.get(user_id);
  if (hit !== undefined) return hit;
  const doc = await readMemberTier(organization_id, user_id);
  // Into the map read from: a move meanwhile dropped it, so what was read then is not kept.
  if (kept.size >= MAX_STANDINGS) kept.delete(kept.keys().next().value!);
  kept.set(user_id, doc);
  return doc;
}

function keepStanding(organization_id: string, user_id: string, doc: MemberTierDoc | null): void {
  standings.get(organization_id)?.set(user_id, doc);
}

/** A member erased: their standing goes from every process's memory too. */
export const forgetStanding = (organization_id: string, user_id: string) => standingChanged(organization_id, user_id);

/** A standing changed: dropped here, and every process told (the version moves). */
async function standingChanged(organization_id: string, user_id: string): Promise<void> {
  standings.get(organization_id)?.delete(user_id);
  await standingVersions.move(organization_id);
}

// ---- windows ----

/** The start of the qualifying window holding `at`, in the program's time zone. */
function windowStart(window: TierWindow, at: Date, tz: string): Date {
  const t = localTime(at, tz);
  if (window.type === 'calendar_year') return localMidnight(t.year, 1, 1, tz);
  return localMidnight(t.year, t.month - (window.months - 1), 1, tz);
}

/** Until when a tier qualified by the window holding `at` holds: the next window's end, plus grace. */
function validUntilFor(program: TierProgram, at: Date, tz: string): Date {
  const grace = program.grace_days * DAY_MS;
  if (program.window.type === 'calendar_year') {
    const t = localTime(at, tz);
    return new Date(localMidnight(t.year + 2, 1, 1, tz).getTime() + grace);
  }
  return new Date(addMonths(at, program.window.months, tz).getTime() + grace);
}

/** The highest tier whose threshold the points reach (null below every threshold). */
function tierFor(program: TierProgram, earned: number): TierDef | null {
  let found: TierDef | null = null;
  for (const t of program.tiers) if (earned >= t.threshold) found = t;
  return found;
}

const rank = (program: TierProgram, tier_id: string | null) =>
  tier_id === null ? -1 : program.tiers.findIndex((t) => t.tier_id === tier_id);

/**
 * The member's tier now: as their standing says while its tier is defined, else (no standing yet,
 * or a tier since removed) the tier reached with no points (a threshold of 0), if any.
 */
export function currentTier(program: TierProgram, standing: MemberTierDoc | null): TierDef | null {
  const held = standing?.tier_id ? program.tiers.find((t) => t.tier_id === standing.tier_id) : undefined;
  return held ?? tierFor(program, 0);
}

/** Points the member earned in the window holding `at`: two ledger values apart (`earned` is the ledger's now). */
async function earnedInWindow(
  organization_id: string,
  user_id: string,
  start: Date,
  earned: number,
  standing: MemberTierDoc | null,
): Promise<{ earned_in_window: number; before: number; fresh: boolean }> {
  if (standing?.window_start && standing.window_start.getTime() === start.getTime())
    return {
      earned_in_window: earned - standing.earned_before_window,
      before: standing.earned_before_window,
      fresh: false,
    };
  const before = await earnedBefore(organization_id, user_id, start);
  return { earned_in_window: earned - before, before, fresh: true };
}

// ---- changes ----

const blankStanding = (organization_id: string, user_id: string, now: Date): MemberTierDoc => ({
  _id: memberKey(organization_id, user_id),
  organization_id,
  user_id,
  tier_id: null,
  since: now,
  valid_until: null,
  review_at: null,
  manual: null,
  changes: 0,
  window_start: null,
  earned_before_window: 0,
  attributes: {},
  updated_at: now,
});

interface Change {
  to: TierDef | null;
  kind: TierChangeKind;
  valid_until: Date | null;
  earned_in_window: number | null;
  reason?: string;
  by?: string;
  manual?: MemberTierDoc['manual'];
  window?: { start: Date; before: number };
}

/**
 * Writes change n+1 on the standing read (n): false when another change got there first. The
 * history entry and the `tier.changed` event are keyed by n+1, so a retry writes neither twice.
 */
async function applyTierChange(
  program: TierProgram,
  standing: MemberTierDoc | null,
  organization_id: string,
  user_id: string,
  c: Change,
  now: Date,
): Promise<boolean> {
  const from = currentTier(program, standing);
  const set: Partial<MemberTierDoc> = {
    tier_id: c.to?.tier_id ?? null,
    since: from?.tier_id === c.to?.tier_id && standing ? standing.since : now,
    valid_until: c.valid_until,
    review_at: c.manual ? c.manual.until : c.valid_until,
    manual: c.manual ?? null,
    ...(c.window && { window_start: c.window.start, earned_before_window: c.window.before }),
  };
  const n = standing?.changes ?? 0;
  const ok = standing
    ? await updateMemberTier(organization_id, user_id, n, set)
    : await insertMemberTier({ ...blankStanding(organization_id, user_id, now), ...set, changes: 1 });
  if (!ok) return false;
  await standingChanged(organization_id, user_id);
  const change: TierChangeDoc = {
    _id: `${memberKey(organization_id, user_id)}|${n + 1}`,
    organization_id,
    user_id,
    n: n + 1,
    from_tier: from?.tier_id ?? null,
    to_tier: c.to?.tier_id ?? null,
    kind: c.kind,
    earned_in_window: c.earned_in_window,
    valid_until: c.valid_until,
    reason: c.reason ?? null,
    by: c.by ?? null,
    at: now,
  };
  await insertTierChange(change);
  if (change.from_tier !== change.to_tier) {
    await recordEvent({
      organization_id,
      type: 'tier.changed',
      key: `tier:${user_id}:${n + 1}`,
      at: now,
      data: {
        user_id,
        from_tier: change.from_tier,
        to_tier: change.to_tier,
        change: c.kind,
        valid_until: c.valid_until?.toISOString() ?? null,
        earned_in_window: c.earned_in_window,
        seq: n + 1,
      },
    });
  }
  return true;
}

/**
 * After an entry that earned points: upgrades the member when the points earned in the window
 * now reach a higher tier (at once, valid through the next window). `earned` is the ledger's
 * earned_after. A member changed by another writer meanwhile is read again (a few times).
 */
export async function afterEarning(
  organization_id: string,
  user_id: string,
  earned: number,
  known: MemberTierDoc | null | undefined,
  now = new Date(),
): Promise<void> {
  const program = await getTierProgram(organization_id);
  if (!program.tiers.length) return;
  let standing = known === undefined ? await readMemberTier(organization_id, user_id) : known;
  const tz = (await getRules(organization_id)).time_zone;
  const start = windowStart(program.window, now, tz);
  for (let attempt = 0; attempt < 5; attempt += 1) {
    // A tier set by hand holds until its date, upgrades included: the review then re-qualifies.
    if (standing?.manual && new Date(standing.manual.until).getTime() > now.getTime()) return;
    const win = await earnedInWindow(organization_id, user_id, start, earned, standing);
    const held = currentTier(program, standing);
    const reached = tierFor(program, win.earned_in_window);
    if (rank(program, reached?.tier_id ?? null) <= rank(program, held?.tier_id ?? null)) {
      // The points earned before the window are kept with the member, so the next award reads none.
      if (!win.fresh) return;
      if (standing) {
        await setMemberWindow(organization_id, user_id, start, win.before);
        keepStanding(organization_id, user_id, { ...standing, window_start: start, earned_before_window: win.before });
        return;
      }
      const blank = {
        ...blankStanding(organization_id, user_id, now),
        tier_id: held?.tier_id ?? null,
        window_start: start,
        earned_before_window: win.before,
      };
      keepStanding(
        organization_id,
        user_id,
        (await insertMemberTier(blank)) ? blank : await readMemberTier(organization_id, user_id),
      );
      return;
    }
    const ok = await applyTierChange(
      program,
      standing,
      organization_id,
      user_id,
      {
        to: reached,
        kind: 'upgrade',
        valid_until: validUntilFor(program, now, tz),
        earned_in_window: win.earned_in_window,
        window: { start, before: win.before },
      },
      now,
    );
    if (ok) return;
    standing = await readMemberTier(organization_id, user_id);
  }
}

/** Sets a member's tier by hand until a date (then the review re-qualifies them). */
export async function setTierByHand(
  organization_id: string,
  user_id: string,
  input: { tier_id: string | null; reason: string; until: Date },
  by: string,
  now = new Date(),
): Promise<MemberTierView> {
  const program = await getTierProgram(organization_id);
  const to = input.tier_id === null ? null : program.tiers.find((t) => t.tier_id === input.tier_id);
  if (to === undefined)
    throw invalid('tier_id', `unknown tier; the tiers are ${program.tiers.map((t) => t.tier_id).join(', ') || 'none'}`);
  if (input.until.getTime() <= now.getTime()) throw invalid('until', 'a date in the future');
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const standing = await readMemberTier(organization_id, user_id);
    const ok = await applyTierChange(
      program,
      standing,
      organization_id,
      user_id,
      {
        to,
        kind: 'manual',
        valid_until: input.until,
        earned_in_window: null,
        reason: input.reason,
        by,
        manual: { reason: input.reason, until: input.until, by },
      },
      now,
    );
    if (ok) {
      noteChange('tier_id', standing?.tier_id ?? null, to?.tier_id ?? null);
      return memberTierView(organization_id, user_id, now);
    }
  }
  throw new Error('the member tier changed five times while being set');
}

/**
 * Re-qualifies one member at the end of their tier's validity: the points of the window that
 * ended (calendar years: the previous year) or of the current one, whichever reach higher. Met
 * again: renewed through the next window; not met: down to the tier the points reach.
 */
async function reviewMember(standing: MemberTierDoc, now: Date): Promise<void> {
  const { organization_id, user_id } = standing;
  const program = await getTierProgram(organization_id);
  const tz = (await getRules(organization_id)).time_zone;
  const earned = await earnedOf(organization_id, await ledgerHead(organization_id, user_id));
  const start = windowStart(program.window, now, tz);
  const current = earned - (await earnedBefore(organization_id, user_id, start));
  let qualifying = current;
  let validFrom = now;
  if (program.window.type === 'calendar_year') {
    const t = localTime(now, tz);
    const prevStart = localMidnight(t.year - 1, 1, 1, tz);
    const previous =
      (await earnedBefore(organization_id, user_id, start)) - (await earnedBefore(organization_id, user_id, prevStart));
    if (
      rank(program, tierFor(program, previous)?.tier_id ?? null) >
      rank(program, tierFor(program, current)?.tier_id ?? null)
    ) {
      qualifying = previous;
      validFrom = new Date(start.getTime() - 1);
    }
  }
  const to = tierFor(program, qualifying);
  const held = currentTier(program, standing);
  const kind: TierChangeKind =
    rank(program, to?.tier_id ?? null) < rank(program, held?.tier_id ?? null)
      ? 'downgrade'
      : to?.tier_id === held?.tier_id
        ? 'renewal'
        : 'upgrade';
  // A tier reached with no points holds for good.
  const valid_until = to && to.threshold > 0 ? validUntilFor(program, validFrom, tz) : null;
  await applyTierChange(
    program,
    standing,
    organization_id,
    user_id,
    { to, kind, valid_until, earned_in_window: qualifying, window: { start, before: earned - current } },
    now,
  );
}

export interface TierReview {
  reviewed: number;
}

/** The scheduled review: the members whose tier's validity ended, a batch at a time (never the whole membership). */
export async function reviewTiers(input: { now?: string }): Promise<TierReview> {
  const now = input.now ? new Date(input.now) : new Date();
  let reviewed = 0;
  for (;;) {
    const due = await membersDue(now, 200);
    for (const m of due) {
      await reviewMember(m, now);
      reviewed += 1;
    }
    if (due.length < 200) return { reviewed };
  }
}

// ---- reading ----

export interface MemberTierView {
  tier: { tier_id: string; name: string; multiplier: string } | null;
  earned_in_window: number;
  window: { type: string; start: string };
  next_tier: { tier_id: string; name: string; threshold: number; points_needed: number } | null;
  valid_until: string | null;
  since: string | null;
  set_by_hand: { reason: string; until: string } | null;
}

export async function memberTierView(
  organization_id: string,
  user_id: string,
  now = new Date(),
): Promise<MemberTierView> {
  const program = await getTierProgram(organization_id);
  if (!program.tiers.length) throw notFound('The organization has no tiers');
  const tz = (await getRules(organization_id)).time_zone;
  const [standing, head] = await Promise.all([
    readMemberTier(organization_id, user_id),
    ledgerHead(organization_id, user_id),
  ]);
  const start = windowStart(program.window, now, tz);
  const { earned_in_window } = await earnedInWindow(
    organization_id,
    user_id,
    start,
    await earnedOf(organization_id, head),
    standing,
  );
  const tier = currentTier(program, standing);
  const next = program.tiers[rank(program, tier?.tier_id ?? null) + 1] ?? null;
  return {
    tier: tier && { tier_id: tier.tier_id, name: tier.name, multiplier: tier.multiplier },
    earned_in_window,
    window: { type: program.window.type, start: start.toISOString() },
    next_tier: next && {
      tier_id: next.tier_id,
      name: next.name,
      threshold: next.threshold,
      points_needed: Math.max(0, next.threshold - earned_in_window),
    },
    valid_until:
      standing?.tier_id && standing.tier_id === tier?.tier_id ? (standing.valid_until?.toISOString() ?? null) : null,
    since: standing?.tier_id && standing.tier_id === tier?.tier_id ? standing.since.toISOString() : null,
    set_by_hand: standing?.manual
      ? { reason: standing.manual.reason, until: new Date(standing.manual.until).toISOString() }
      : null,
  };
}

export async function tierHistory(organization_id: string, user_id: string, limit: number, before?: number) {
  const rows = await tierChangesOf(organization_id, user_id, limit, before);
  return rows.map((r) => ({
    n: r.n,
    from_tier: r.from_tier,
    to_tier: r.to_tier,
    change: r.kind,
    earned_in_window: r.earned_in_window,
    valid_until: r.valid_until?.toISOString() ?? null,
    reason: r.reason,
    by: r.by,
    at: r.at.toISOString(),
  }));
}

/** Sets what campaigns may ask of a member (their country…), replacing what was set. */
export async function setMemberAttributesOf(
  organization_id: string,
  user_id: string,
  attributes: Record<string, string>,
): Promise<Record<string, string>> {
  const before = await readMemberTier(organization_id, user_id);
  const doc = await setMemberAttributes(
    organization_id,
    user_id,
    attributes,
    blankStanding(organization_id, user_id, new Date()),
  );
  await standingChanged(organization_id, user_id);
  noteChange('attributes', before?.attributes ?? {}, doc.attributes);
  return doc.attributes;
}
