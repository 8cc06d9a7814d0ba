/**
 * Points per action (with who may report it and how often), per referral, the cap per scan, and
 * when points expire or wait, per organization, with defaults until an admin sets them (awards by
 * action are awards.ts).
 */
import { noteChange } from '../core/audit-note.ts';
import { Cache } from '../core/db/index.ts';
import { invalid } from '../core/errors.ts';
import type { EarningRule } from './earning.ts';
import { type ActionLimit, type ActionPolicy, defaultPolicy } from './policies.ts';
import { readRules as readStoredRules, startExpiryCursor, writeRules } from './store.ts';

const DEFAULT_ACTIONS: Record<string, number> = {
  daily_login: 5,
  profile_completed: 50,
  purchase: 10,
  review: 20,
  survey_completed: 15,
  social_share: 5,
  app_download: 25,
  newsletter_signup: 10,
};
const DEFAULT_REFERRAL_POINTS = 100;
const DEFAULT_REFERRED_POINTS = 50;
const DEFAULT_MAX_POINTS_PER_SCAN = 500;
/** A user may be referred only this many days after their account was created. */
const DEFAULT_REFERRAL_WINDOW_DAYS = 30;

export interface Rules {
  organization_id: string;
  actions: Record<string, number>;
  policies: Record<string, ActionPolicy>;
  referral_points: number;
  referred_points: number;
  max_points_per_scan: number;
  /** null: points never expire; else each credit lapses this many days after it may be spent */
  points_expire_after_days: number | null;
  /** receipt and ticket-scan credits wait this many days before they may be spent */
  pending_days: number;
  /** a referral is accepted only within this many days of the referred user's account creation */
  referral_window_days: number;
  /** per action that earns by amount: how points follow from it (earning.ts) */
  earning: Record<string, EarningRule>;
  /** the program's calendar: campaign days and hours, calendar-year tier windows */
  time_zone: string;
  /** a referrer's n-th successful referral pays these points more, once */
  referral_milestones: ReferralMilestone[];
  is_default: boolean;
  updated_at: string | null;
}

interface ReferralMilestone {
  count: number;
  points: number;
}

/** An action as an admin sets it: points alone (the name's default policy), or with its policy. */
type ActionInput =
  number | { points: number; self_service?: boolean; limit?: ActionLimit | null; earning?: EarningInput | null };
/** An earning rule as an admin sends it: the rate and currency, the rest defaulted. */
interface EarningInput {
  rate: string;
  currency: string;
  rounding?: EarningRule['rounding'];
  min_amount?: string | null;
  max_points?: number | null;
  categories?: Record<string, string>;
}
type PolicyInput = { self_service?: boolean; limit?: ActionLimit | null };
export interface RulesInput {
  actions?: Record<string, ActionInput>;
  policies?: Record<string, PolicyInput>;
  referral_points?: number;
  referred_points?: number;
  max_points_per_scan?: number;
  points_expire_after_days?: number | null;
  pending_days?: number;
  referral_window_days?: number;
  /** per action: its earning rule, or null to earn fixed points again (the action must be in the resulting set) */
  earning?: Record<string, EarningInput | null>;
  time_zone?: string;
  referral_milestones?: ReferralMilestone[];
}

const earningRule = (e: EarningInput): EarningRule => ({
  rate: e.rate,
  currency: e.currency,
  rounding: e.rounding ?? 'down',
  min_amount: e.min_amount ?? null,
  max_points: e.max_points ?? null,
  categories: { ...e.categories },
});

/**
 * Rules are read on every award: each process keeps them for RULES_CACHE_MS. A change is seen at
 * once by the process that made it and within that time by the others (edge replicas).
 */
const RULES_CACHE_MS = 2000;
const cache = new Cache<string, Rules>({ max: 10_000, ttlMs: RULES_CACHE_MS });

export const getRules = (organization_id: string): Promise<Rules> =>
  cache.getOrLoad(organization_id, () => readRules(organization_id));

const policiesFor = (actions: Record<string, number>, stored: Record<string, ActionPolicy>) =>
  Object.fromEntries(
    Object.keys(actions).map((name) => [name, Object.hasOwn(stored, name) ? stored[name] : defaultPolicy(name)]),
  );

async function readRules(organization_id: string): Promise<Rules> {
  const doc = await readStoredRules(organization_id);
  if (!doc) {
    return {
      organization_id,
      actions: { ...DEFAULT_ACTIONS },
      policies: policiesFor(DEFAULT_ACTIONS, {}),
      referral_points: DEFAULT_REFERRAL_POINTS,
      referred_points: DEFAULT_REFERRED_POINTS,
      max_points_per_scan: DEFAULT_MAX_POINTS_PER_SCAN,
      points_expire_after_days: null,
      pending_days: 0,
      referral_window_days: DEFAULT_REFERRAL_WINDOW_DAYS,
      earning: {},
      time_zone: 'UTC',
      referral_milestones: [],
      is_default: true,
      updated_at: null,
    };
  }
  return {
    organization_id,
    actions: doc.actions,
    policies: policiesFor(doc.actions, doc.policies),
    referral_points: doc.referral_points,
    referred_points: doc.referred_points,
    max_points_per_scan: doc.max_points_per_scan ?? DEFAULT_MAX_POINTS_PER_SCAN,
    points_expire_after_days: doc.points_expire_after_days ?? null,
    pending_days: doc.pending_days ?? 0,
    referral_window_days: doc.referral_window_days ?? DEFAULT_REFERRAL_WINDOW_DAYS,
    earning: doc.earning,
    time_zone: doc.time_zone ?? 'UTC',
    referral_milestones: doc.referral_milestones ?? [],
    is_default: false,
    updated_at: doc.updated_at?.toISOString() ?? null,
  };
}

const applyPolicy = (base: ActionPolicy, p: PolicyInput): ActionPolicy => ({
  self_service: p.self_service ?? base.self_service,
  limit: p.limit === undefined ? base.limit : p.limit && { max: p.limit.max, per: p.limit.per },
});

/**
 * Replaces the organization's rules (fields left out keep their current values). New `actions`
 * replace the action set, each with its name's default policy unless given with one; `policies`
 * then change the policies of actions of the resulting set.
 */
export async function putRules(organization_id: string, input: RulesInput, updated_by: string): Promise<Rules> {
  const current = await readRules(organization_id); // not the cache: merge into what is stored
  let actions = current.actions;
  let policies = current.policies;
  let earning = current.earning;
  if (input.actions) {
    actions = {};
    policies = {};
    earning = {};
    for (const [name, given] of Object.entries(input.actions)) {
      actions[name] = typeof given === 'number' ? given : given.points;
      policies[name] = typeof given === 'number' ? defaultPolicy(name) : applyPolicy(defaultPolicy(name), given);
      // An action named again keeps its earning rule unless the new one says otherwise.
      const kept = Object.hasOwn(current.earning, name) ? current.earning[name] : undefined;
      const rule = typeof given === 'number' || given.earning === undefined ? kept : given.earning;
      if (rule) earning[name] = earningRule(rule);
    }
  }
  for (const [name, given] of Object.entries(input.earning ?? {})) {
    if (!Object.hasOwn(actions, name)) throw invalid(`earning.${name}`, 'not an action of the rules');
    const { [name]: _old, ...rest } = earning;
    earning = given ? { ...rest, [name]: earningRule(given) } : rest;
  }
  for (const [name, given] of Object.entries(input.policies ?? {})) {
    if (!Object.hasOwn(actions, name)) throw invalid(`policies.${name}`, 'not an action of the rules');
    policies = { ...policies, [name]: applyPolicy(policies[name], given) };
  }
  // The amount is what the organization's back end saw: an end user's key never reports it.
  for (const name of Object.keys(earning))
    if (policies[name]?.self_service)
      throw invalid(
        `earning.${name}`,
        'an action that earns by amount is reported by the organization (an admin key): its policy cannot be self_service',
      );
  const next = {
    actions,
    policies,
    referral_points: input.referral_points ?? current.referral_points,
    referred_points: input.referred_points ?? current.referred_points,
    max_points_per_scan: input.max_points_per_scan ?? current.max_points_per_scan,
    points_expire_after_days:
      input.points_expire_after_days === undefined ? current.points_expire_after_days : input.points_expire_after_days,
    pending_days: input.pending_days ?? current.pending_days,
    referral_window_days: input.referral_window_days ?? current.referral_window_days,
    earning,
    time_zone: input.time_zone ?? current.time_zone,
    referral_milestones: input.referral_milestones
      ? [...input.referral_milestones].sort((a, b) => a.count - b.count)
      : current.referral_milestones,
    updated_by,
  };
  // The expiry run looks at organizations that ever set an expiry (their credits keep theirs).
  if (next.points_expire_after_days) await startExpiryCursor(organization_id);
  await writeRules(organization_id, next);
  noteRulesChanges(current, next);
  cache.delete(organization_id);
  return getRules(organization_id);
}

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** For the audit record: the entries of `before` and `after` that differ (null: absent on that side). */
function changedEntries<T>(
  before: Record<string, T>,
  after: Record<string, T>,
): [Record<string, T | null>, Record<string, T | null>] | undefined {
  const from: Record<string, T | null> = {};
  const to: Record<string, T | null> = {};
  for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (same(before[k], after[k])) continue;
    from[k] = before[k] ?? null;
    to[k] = after[k] ?? null;
  }
  return Object.keys(from).length ? [from, to] : undefined;
}

/** Notes what a rules change replaced: per changed action its points and policy, and each changed setting. */
function noteRulesChanges(current: Rules, next: Omit<Rules, 'organization_id' | 'is_default' | 'updated_at'>): void {
  for (const field of ['actions', 'policies', 'earning'] as const) {
    const diff = changedEntries<unknown>(current[field], next[field]);
    if (diff) noteChange(field, diff[0], diff[1]);
  }
  for (const field of [
    'referral_points',
    'referred_points',
    'max_points_per_scan',
    'points_expire_after_days',
    'pending_days',
    'referral_window_days',
    'time_zone',
    'referral_milestones',
  ] as const) {
    if (!same(current[field], next[field])) noteChange(field, current[field], next[field]);
  }
}
