/**
 * The earning engine: what an award gives. Its base (the action's fixed points, or its earning
 * rule applied to the amount), the member's tier multiplier, then each running campaign whose
 * conditions the award meets, by stacking and priority. `evaluate` answers that without writing;
 * `takeGrants` takes each campaign's share from its budget and limits before the award is written,
 * and `giveBack` returns them when it is not. docs/components/loyalty.md, "Campaigns".
 */
import { Background } from '../core/background.ts';
import { invalid } from '../core/errors.ts';
import { recordEvent } from '../events/index.ts';
import { findUser } from '../identity/index.ts';
import { localTime } from './calendar.ts';
import type { CampaignDoc, CampaignUseDoc } from './campaign-models.ts';
import { returnBudget, returnUse, takeBudget, takeUse, usesOf } from './campaign-store.ts';
import { startedCampaigns, statusOf } from './campaigns.ts';
import { earnByAmount, pointsPerAmount, type Purchase, scalePoints } from './earning.ts';
import type { CampaignShare, EntryBreakdown } from './models.ts';
import { decimalMoney, formatMoney, parseMoney, type Rounding } from './money.ts';
import { type LoyaltyFacts, loyaltyFactsOf } from './once-only.ts';
import { windowOf } from './policies.ts';
import type { Rules } from './rules.ts';
import { actionAwardsOf } from './store.ts';
import type { MemberTierDoc } from './tier-models.ts';
import { cachedStanding, currentTier, getTierProgram, type TierProgram } from './tiers.ts';

/** An award's amount as the client sent it (checked here: routes pass it through). */
export interface AmountInput {
  amount?: unknown;
  amount_minor?: unknown;
  currency?: unknown;
  items?: { sku?: string; category?: string; amount?: unknown; amount_minor?: unknown; quantity?: number }[];
}

interface CampaignLine {
  campaign_id: string;
  version: number;
  name: string;
  points: number;
  /** the budget gave less than the effect (or nothing: points 0) */
  budget_capped?: boolean;
  /** the campaign did not give its points, and why */
  refused?: 'budget_exhausted' | 'limit_reached';
}

export interface Breakdown {
  action_type: string;
  rule: 'fixed' | 'by_amount';
  amount: string | null;
  currency: string | null;
  base: number;
  below_min_amount: boolean;
  tier: { tier_id: string; name: string } | null;
  tier_multiplier: string;
  campaigns: CampaignLine[];
  /** campaigns running now that the award does not meet, with the first condition it misses */
  not_applied: { campaign_id: string; reason: string }[];
  /** a cap lowered the points: the rule's max_points, a campaign's per-award cap or its budget */
  capped: boolean;
  total: number;
}

/** What evaluating an award needs to know of its member, read once (the standing, the account). */
interface Member {
  organization_id: string;
  user_id: string;
  standing: MemberTierDoc | null;
  signed_up_at?: Date | null;
  prior_awards?: number;
  /** what the person's erased accounts used (once-only.ts): null for someone new; read when a limit asks */
  facts?: (LoyaltyFacts & { first_joined_at: Date }) | null;
}

/** The once-only facts of the member's erased accounts, read once per award and only when a limit needs them. */
async function factsOf(member: Member): Promise<(LoyaltyFacts & { first_joined_at: Date }) | null> {
  if (member.facts === undefined) member.facts = await loyaltyFactsOf(member.organization_id, member.user_id);
  return member.facts;
}

/** The amount of an award, held to the action's earning rule (422 naming the field otherwise). */
function purchaseOf(rules: Rules, action_type: string, input: AmountInput): Purchase | null {
  const rule = Object.hasOwn(rules.earning, action_type) ? rules.earning[action_type] : undefined;
  const sent = input.amount !== undefined || input.amount_minor !== undefined || input.currency !== undefined;
  if (!rule) {
    if (sent || input.items)
      throw invalid('amount', `action "${action_type}" earns fixed points: it has no earning rule by amount`);
    return null;
  }
  if (!sent)
    throw invalid('amount', `action "${action_type}" earns by amount: send amount (or amount_minor) and currency`);
  const total = parseMoney({ amount: input.amount, amount_minor: input.amount_minor, currency: input.currency }, '');
  const items = (input.items ?? []).map((item, i) => {
    const quantity = item.quantity ?? 1;
    if (!Number.isSafeInteger(quantity) || quantity < 1) throw invalid(`items[${i}].quantity`, 'a positive integer');
    return {
      sku: item.sku,
      category: item.category,
      unit: parseMoney(
        { amount: item.amount, amount_minor: item.amount_minor, currency: total.currency },
        `items[${i}].`,
      ),
      quantity,
    };
  });
  return { total, items };
}

const HHMM = (s: string) => Number(s.slice(0, 2)) * 60 + Number(s.slice(3, 5));

/** Why the campaign does not apply to this award (null: it does). Reads the member's account or awards only when asked. */
async function missedCondition(
  c: CampaignDoc,
  ctx: {
    rules: Rules;
    program: TierProgram;
    action_type: string;
    purchase: Purchase | null;
    member: Member;
    tier_id: string | null;
    now: Date;
  },
): Promise<string | null> {
  const k = c.conditions;
  if (statusOf(c, ctx.now) !== 'active') return 'not_running';
  const tz = c.time_zone ?? ctx.rules.time_zone;
  if (c.schedule.days.length || c.schedule.hours) {
    const t = localTime(ctx.now, tz);
    if (c.schedule.days.length && !c.schedule.days.includes(t.weekday)) return 'day';
    const h = c.schedule.hours;
    if (h) {
      const m = t.hour * 60 + t.minute;
      const from = HHMM(h.from);
      const to = HHMM(h.to);
      if (from <= to ? m < from || m >= to : m < from && m >= to) return 'hours';
    }
  }
  if (k.action_types.length && !k.action_types.includes(ctx.action_type)) return 'action_type';
  if (k.min_amount !== null) {
    if (!ctx.purchase) return 'min_amount';
    if (ctx.purchase.total.minor < decimalMoney(k.min_amount, ctx.purchase.total.currency).minor) return 'min_amount';
  }
  // A line of the category that was paid for (a free or zero line does not count).
  if (
    k.categories.length &&
    !ctx.purchase?.items.some((i) => i.category !== undefined && k.categories.includes(i.category) && i.unit.minor > 0n)
  )
    return 'category';
  if (k.tiers.length && (ctx.tier_id === null || !k.tiers.includes(ctx.tier_id))) return 'tier';
  const unlockers = ctx.program.tiers.filter((t) => t.unlocks.includes(c._id));
  if (unlockers.length && !unlockers.some((t) => t.tier_id === ctx.tier_id)) return 'tier';
  if (k.countries.length && !k.countries.includes(ctx.member.standing?.attributes?.country ?? '')) return 'country';
  if (k.signed_up_after || k.signed_up_before) {
    // A person who erased an account and joined again signed up when they first joined.
    if (ctx.member.signed_up_at === undefined) {
      const [user, facts] = await Promise.all([
        findUser(ctx.member.organization_id, ctx.member.user_id),
        factsOf(ctx.member),
      ]);
      const times = [user?.created_at, facts?.first_joined_at].filter((d): d is Date => !!d).map((d) => d.getTime());
      ctx.member.signed_up_at = times.length ? new Date(Math.min(...times)) : null;
    }
    const at = ctx.member.signed_up_at?.getTime();
    if (at === undefined) return 'signed_up';
    if (k.signed_up_after && at < new Date(k.signed_up_after).getTime()) return 'signed_up';
    if (k.signed_up_before && at >= new Date(k.signed_up_before).getTime()) return 'signed_up';
  }
  if (k.nth !== null) {
    // Awards of the person's erased accounts count too: erasing does not make a purchase the first again.
    ctx.member.prior_awards ??=
      (await actionAwardsOf(ctx.member.organization_id, ctx.member.user_id, ctx.action_type)) +
      ((await factsOf(ctx.member))?.awards[ctx.action_type] ?? 0);
    if (ctx.member.prior_awards + 1 !== k.nth) return 'nth';
  }
  return null;
}

/** The amount a campaign's points per amount apply to: the purchase less the lines of excluded categories (rate "0"). */
function eligible(purchase: Purchase, categories: Record<string, string>): Purchase['total'] {
  const excluded = purchase.items
    .filter(
      (i) => i.category !== undefined && Object.hasOwn(categories, i.category) && Number(categories[i.category]) === 0,
    )
    .reduce((n, i) => n + i.unit.minor * BigInt(i.quantity), 0n);
  return { ...purchase.total, minor: purchase.total.minor - excluded };
}

function effectPoints(
  c: CampaignDoc,
  base: number,
  purchase: Purchase | null,
  rounding: Rounding,
  categories: Record<string, string>,
): { points: number; capped: boolean } {
  const e = c.effect;
  let points =
    e.type === 'bonus'
      ? e.points
      : e.type === 'multiplier'
        ? Math.max(0, scalePoints(base, e.factor, rounding) - base)
        : purchase
          ? pointsPerAmount(eligible(purchase, categories), e.rate, rounding)
          : 0;
  let capped = false;
  if (c.max_points_per_award !== null && points > c.max_points_per_award) {
    points = c.max_points_per_award;
    capped = true;
  }
  return { points, capped };
}

export interface Evaluation {
  breakdown: Breakdown;
  /** the campaigns to take grants for, as `breakdown.campaigns` lists them, and each one's points before any budget */
  applied: CampaignDoc[];
  wants: number[];
  /** the base after the tier multiplier, and whether a cap before the campaigns lowered it */
  tiered: number;
  capped: boolean;
  time_zone: string;
  member: Member;
}

/** What the award would give now: nothing is written. */
export async function evaluate(
  rules: Rules,
  input: { organization_id: string; user_id: string; action_type: string; amount: AmountInput; now?: Date },
): Promise<Evaluation> {
  const now = input.now ?? new Date();
  const { organization_id, user_id, action_type } = input;
  const purchase = purchaseOf(rules, action_type, input.amount);
  const [program, campaigns] = await Promise.all([getTierProgram(organization_id), startedCampaigns(organization_id)]);
  const standing = program.tiers.length || campaigns.length ? await cachedStanding(organization_id, user_id) : null;
  const member: Member = { organization_id, user_id, standing };
  const tier = program.tiers.length ? currentTier(program, standing) : null;
  const rule = purchase ? rules.earning[action_type] : null;
  const rounding: Rounding = rule?.rounding ?? 'down';
  let base: number;
  let capped = false;
  let below_min_amount = false;
  if (rule && purchase) {
    const earned = earnByAmount(rule, purchase);
    base = earned.points;
    capped = earned.capped;
    below_min_amount = earned.below_min_amount;
  } else base = rules.actions[action_type];
  const multiplier = tier?.multiplier ?? '1';
  const tiered = scalePoints(base, multiplier, rounding);

  const ctx = { rules, program, action_type, purchase, member, tier_id: tier?.tier_id ?? null, now };
  const matching: CampaignDoc[] = [];
  const not_applied: Breakdown['not_applied'] = [];
  for (const c of campaigns) {
    // A budget spent (as last read) gives way before stacking: an exclusive one must not shut out the rest.
    const missed = c.budget_left !== null && c.budget_left <= 0 ? 'budget_exhausted' : await missedCondition(c, ctx);
    if (missed) not_applied.push({ campaign_id: c._id, reason: missed });
    else matching.push(c);
  }
  // Each campaign's points first: one that would give none (or whose member limit is used up)
  // gives way before stacking, so it never shuts out the others.
  const points = new Map<CampaignDoc, { points: number; capped: boolean }>();
  const giving: CampaignDoc[] = [];
  for (const c of matching) {
    const e = effectPoints(c, base, purchase, rounding, rule?.categories ?? {});
    if (e.points <= 0) not_applied.push({ campaign_id: c._id, reason: 'no_points' });
    else {
      points.set(c, e);
      giving.push(c);
    }
  }
  // Highest priority first (then the oldest): an exclusive campaign first in line applies alone;
  // otherwise every stackable campaign applies and exclusive ones give way.
  giving.sort((a, b) => b.priority - a.priority || new Date(a.created_at).getTime() - new Date(b.created_at).getTime());
  while (giving[0]?.stacking === 'exclusive' && (giving[0].limit_per_member || giving[0].conditions.nth !== null)) {
    const use = useOf(giving[0], member, await factsOf(member), now);
    if (!use || (await usesOf(use.doc._id)) < use.max) break;
    not_applied.push({ campaign_id: giving[0]._id, reason: 'limit_reached' });
    giving.shift();
  }
  const applied = giving[0]?.stacking === 'exclusive' ? [giving[0]] : giving.filter((c) => c.stacking === 'stackable');
  for (const c of giving) if (!applied.includes(c)) not_applied.push({ campaign_id: c._id, reason: 'exclusive' });
  const lines: CampaignLine[] = [];
  const wants: number[] = [];
  for (const c of applied) {
    const e = points.get(c)!;
    capped ||= e.capped;
    const line: CampaignLine = { campaign_id: c._id, version: c.version, name: c.name, points: e.points };
    // The dry run tells what the budget held when last read; the award takes it for real.
    if (c.budget_left !== null && c.budget_left < e.points) {
      line.points = Math.max(0, c.budget_left);
      line.budget_capped = true;
      if (!line.points) line.refused = 'budget_exhausted';
    }
    lines.push(line);
    wants.push(e.points);
  }
  const kept = applied;
  return {
    breakdown: {
      action_type,
      rule: rule ? 'by_amount' : 'fixed',
      amount: purchase ? formatMoney(purchase.total) : null,
      currency: purchase?.total.currency ?? null,
      base,
      below_min_amount,
      tier: tier && { tier_id: tier.tier_id, name: tier.name },
      tier_multiplier: multiplier,
      campaigns: lines,
      not_applied,
      capped: capped || lines.some((l) => l.budget_capped),
      total: tiered + lines.reduce((n, l) => n + l.points, 0),
    },
    applied: kept,
    wants,
    tiered,
    capped,
    time_zone: rules.time_zone,
    member,
  };
}

/** What the ledger keeps of a breakdown on the award's entry. */
export const entryBreakdown = (b: Breakdown, budgeted: Set<string> = new Set()): EntryBreakdown => ({
  base: b.base,
  tier_id: b.tier?.tier_id ?? null,
  tier_multiplier: b.tier_multiplier,
  campaigns: b.campaigns.map((l) => ({
    campaign_id: l.campaign_id,
    version: l.version,
    points: l.points,
    ...(budgeted.has(l.campaign_id) && l.points > 0 && { budgeted: true }),
    ...(l.refused && { refused: l.refused }),
  })),
  capped: b.capped,
});

const events = new Background("loyalty: a campaign's budget_exhausted event was not recorded");

/** What `takeGrants` took for an award about to be written: what giving it back undoes. */
export interface Taken {
  /** the member's uses taken (use document `_id`s) */
  uses: string[];
  /** points taken from budgets, per campaign */
  budgets: Map<string, number>;
}

/**
 * Takes each applied campaign's share for the award, every campaign at once (one round of
 * conditional updates): a limited campaign's use (the member's uses in the window, or the n-th
 * award's bonus, below its limit) and a budgeted campaign's points (all of the effect, what is
 * left, or nothing). A use taken for a share the budget then refuses is given back. The
 * breakdown's lines and total are brought to what was taken. A campaign with neither writes
 * nothing here: the award's entry is its record.
 */
export async function takeGrants(ev: Evaluation, now = new Date()): Promise<Taken> {
  const { breakdown: b, member } = ev;
  const taken: Taken = { uses: [], budgets: new Map() };
  const lines = ev.applied.map((_c, i) => {
    const line = b.campaigns[i];
    line.points = ev.wants[i];
    line.budget_capped = undefined;
    line.refused = undefined;
    return line;
  });
  const facts = ev.applied.some((c) => c.limit_per_member || c.conditions.nth !== null) ? await factsOf(member) : null;
  const settled = await Promise.all(
    ev.applied.map(async (c, i) => {
      const use = useOf(c, member, facts, now);
      const [used, budget] = await Promise.allSettled([
        use ? takeUse(use.doc, use.max) : true,
        c.budget !== null ? takeBudget(c._id, lines[i].points) : null,
      ]);
      return { c, use: use?.doc._id, used, budget };
    }),
  );
  // A store failure on any take gives back every take that succeeded, then fails the award.
  const failed = settled.find((o) => o.used.status === 'rejected' || o.budget.status === 'rejected');
  if (failed) {
    const back: Taken = { uses: [], budgets: new Map() };
    for (const o of settled) {
      if (o.use && o.used.status === 'fulfilled' && o.used.value) back.uses.push(o.use);
      if (o.budget.status === 'fulfilled' && o.budget.value?.taken) back.budgets.set(o.c._id, o.budget.value.taken);
    }
    await giveBack(back);
    throw ((failed.used.status === 'rejected' ? failed.used : failed.budget) as PromiseRejectedResult).reason;
  }
  const outcomes = settled.map((o) => ({
    use: o.use,
    used: (o.used as PromiseFulfilledResult<boolean>).value,
    budget: (o.budget as PromiseFulfilledResult<{ taken: number; exhausted: boolean } | null>).value,
  }));
  for (const [i, c] of ev.applied.entries()) {
    const line = lines[i];
    const { use, used, budget } = outcomes[i];
    if (use && used) taken.uses.push(use);
    if (budget?.taken) taken.budgets.set(c._id, budget.taken);
    if (!used) {
      line.points = 0;
      line.refused = 'limit_reached';
    } else if (budget) {
      if (budget.taken < line.points) line.budget_capped = true;
      line.points = budget.taken;
      if (!budget.taken) line.refused = 'budget_exhausted';
    }
    // Told after the answer: a failed record never undoes a take (warned; the budget says it anyway).
    if (budget?.exhausted)
      events.run(
        recordEvent({
          organization_id: member.organization_id,
          type: 'campaign.budget_exhausted',
          key: `campaign:${c._id}:exhausted:${c.budget}`,
          at: now,
          data: { campaign_id: c._id, version: c.version, budget: c.budget },
        }),
      );
  }
  // What one side took while the other refused goes back: a use without points, points without a use.
  const back: Taken = { uses: [], budgets: new Map() };
  for (const [i, c] of ev.applied.entries()) {
    const { use, used, budget } = outcomes[i];
    if (use && used && budget && !budget.taken) back.uses.push(use);
    if (!used && budget?.taken) back.budgets.set(c._id, budget.taken);
  }
  if (back.uses.length || back.budgets.size) {
    await giveBack(back);
    taken.uses = taken.uses.filter((u) => !back.uses.includes(u));
    for (const id of back.budgets.keys()) taken.budgets.delete(id);
  }
  b.capped = ev.capped || b.campaigns.some((l) => l.budget_capped);
  b.total = ev.tiered + b.campaigns.reduce((n, l) => n + l.points, 0);
  return taken;
}

/**
 * The member's use document a limited campaign counts, and its limit in the window (less the uses
 * of the person's erased accounts); undefined for a campaign without a per-member limit.
 */
function useOf(
  c: CampaignDoc,
  member: Member,
  facts: LoyaltyFacts | null,
  now: Date,
): { doc: Omit<CampaignUseDoc, 'used'>; max: number } | undefined {
  const window = c.conditions.nth !== null ? 'nth' : c.limit_per_member ? windowOf(c.limit_per_member.per, now) : null;
  if (!window) return undefined;
  const max = c.conditions.nth !== null ? 1 : c.limit_per_member!.max;
  return {
    doc: {
      _id: `${c._id}|${member.user_id}|${window}`,
      organization_id: member.organization_id,
      campaign_id: c._id,
      user_id: member.user_id,
      window,
    },
    max: max - (facts?.campaigns[`${c._id}|${window}`] ?? 0),
  };
}

/** Gives back what `takeGrants` took for an award that was not written (a repeat, a refusal, an error). */
export async function giveBack(taken: Taken): Promise<void> {
  await Promise.all([
    ...taken.uses.map((id) => returnUse(id)),
    ...[...taken.budgets].map(([campaign_id, points]) => returnBudget(campaign_id, points)),
  ]);
}

/**
 * A reversed award's budgeted shares go back to their budgets, by the call that wrote the reversal
 * (a repeat finds it written and gives nothing back again). A member's limited use stays used.
 */
export async function releaseShares(shares: CampaignShare[]): Promise<void> {
  await Promise.all(shares.filter((s) => s.budgeted).map((s) => returnBudget(s.campaign_id, Math.abs(s.points))));
}
