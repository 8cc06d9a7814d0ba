/**
 * Points per action (with who may report it and how often), per referral, the cap per scan, and
 * when points expire or wait, per organization, with defaults until an admin sets them; and awards by action.
 */
import { Cache } from '../core/db';
import { PlatformError, invalid } from '../core/errors';
import { newId } from '../core/ids';
import { appliedRequest, applyChange, type AppendResult, type LedgerChange } from './ledger';
import { defaultPolicy, describeLimit, windowOf, type ActionLimit, type ActionPolicy } from './policies';
import { operationsStartingWith, readRules as readStoredRules, startExpiryCursor, writeRules } from './store';

export const DEFAULT_ACTIONS: Record<string, number> = {
  daily_login: 5,
  profile_completed: 50,
  purchase: 10,
  review: 20,
  survey_completed: 15,
  social_share: 5,
  app_download: 25,
  newsletter_signup: 10,
};
export const DEFAULT_REFERRAL_POINTS = 100;
export const DEFAULT_REFERRED_POINTS = 50;
export const DEFAULT_MAX_POINTS_PER_SCAN = 500;
/** A user may be referred only this many days after their account was created. */
export const DEFAULT_REFERRAL_WINDOW_DAYS = 30;

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
  is_default: boolean;
  updated_at: string | null;
}

/** An action as an admin sets it: points alone (the name's default policy), or with its policy. */
export type ActionInput = number | { points: number; self_service?: boolean; limit?: ActionLimit | null };
export type PolicyInput = { self_service?: boolean; limit?: ActionLimit | null };
export interface RulesInput {
  actions?: Record<string, ActionInput>;
  policies?: Record<string, PolicyInput>;
  referral_points?: number;
  referred_points?: number;
  max_points_per_scan?: number;
  points_expire_after_days?: number | null;
  pending_days?: number;
  referral_window_days?: number;
}

/**
 * Rules are read on every award: each process keeps them for RULES_CACHE_MS. A change is seen at
 * once by the process that made it and within that time by the others (edge replicas).
 */
export const RULES_CACHE_MS = 2000;
const cache = new Cache<string, Rules>({ max: 10_000, ttlMs: RULES_CACHE_MS });

export const getRules = (organization_id: string): Promise<Rules> => cache.getOrLoad(organization_id, () => readRules(organization_id));

const policiesFor = (actions: Record<string, number>, stored: Record<string, ActionPolicy>) =>
  Object.fromEntries(Object.keys(actions).map((name) => [name, Object.hasOwn(stored, name) ? stored[name] : defaultPolicy(name)]));

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
  if (input.actions) {
    actions = {};
    policies = {};
    for (const [name, given] of Object.entries(input.actions)) {
      actions[name] = typeof given === 'number' ? given : given.points;
      policies[name] = typeof given === 'number' ? defaultPolicy(name) : applyPolicy(defaultPolicy(name), given);
    }
  }
  for (const [name, given] of Object.entries(input.policies ?? {})) {
    if (!Object.hasOwn(actions, name)) throw invalid(`policies.${name}`, 'not an action of the rules');
    policies = { ...policies, [name]: applyPolicy(policies[name], given) };
  }
  const next = {
    actions,
    policies,
    referral_points: input.referral_points ?? current.referral_points,
    referred_points: input.referred_points ?? current.referred_points,
    max_points_per_scan: input.max_points_per_scan ?? current.max_points_per_scan,
    points_expire_after_days: input.points_expire_after_days === undefined ? current.points_expire_after_days : input.points_expire_after_days,
    pending_days: input.pending_days ?? current.pending_days,
    referral_window_days: input.referral_window_days ?? current.referral_window_days,
    updated_by,
  };
  // The expiry run looks at organizations that ever set an expiry (their credits keep theirs).
  if (next.points_expire_after_days) await startExpiryCursor(organization_id);
  await writeRules(organization_id, next);
  cache.delete(organization_id);
  return getRules(organization_id);
}

/**
 * The ledger's request_id of an idempotency key a client sent with an award (`operation_id` or
 * the Idempotency-Key header): keys are the client's, unique per user only, hence the user prefix.
 * A reversal finds a credit by the same name (reversal.ts).
 */
export const clientRequestId = (user_id: string, key: string) => `${user_id}:${key}`;

/** 0 basic (an end user's key), 1 admin, 2 system_admin. */
export type ActorLevel = 0 | 1 | 2;

export interface AwardInput {
  organization_id: string;
  user_id: string;
  action_type: string;
  /** the caller's idempotency key: the same key never awards twice */
  operation_id?: string;
  /** the rights of whoever reports the action: basic callers report only self-service actions */
  actor_level: ActorLevel;
}

const answer = (out: AppendResult) => ({ points_awarded: out.entry.amount, duplicate: out.duplicate, entry: out.entry, balance: out.spendable_after });

/** Credits the points the organization's rules give for an action, within the action's policy. */
export async function awardAction(input: AwardInput) {
  const rules = await getRules(input.organization_id);
  const { action_type } = input;
  if (!Object.hasOwn(rules.actions, action_type)) {
    throw invalid('action_type', `unknown action "${action_type}"; known actions: ${Object.keys(rules.actions).sort().join(', ')}`);
  }
  const points = rules.actions[action_type];
  const policy = rules.policies[action_type];
  if (input.actor_level < 1 && !policy.self_service) {
    const mine = Object.keys(rules.policies).filter((n) => rules.policies[n].self_service).sort();
    throw new PlatformError(403, `Action "${action_type}" needs an admin key: a basic API key may only report the self-service actions (${mine.join(', ') || 'none'})`);
  }
  const change = { organization_id: input.organization_id, user_id: input.user_id, amount: points, reason: 'action' as const, description: action_type };
  const keyed = input.operation_id === undefined ? undefined : `award:${input.operation_id}`;
  if (!policy.limit) {
    // A repeated operation answers like the first time (points_awarded as then), flagged duplicate.
    return answer(await applyChange({ ...change, operation_id: keyed ?? `award:${newId('op')}`, new_operation: keyed === undefined, request_id: input.operation_id }));
  }
  return answer(await limitedAward(input, change, policy.limit, keyed));
}

/**
 * A limited action earns at most `max` entries per user and window. The n-th earning of a window
 * (n from 0) is the ledger operation `award:<user>:<action>:<window>:<n>`: the window's earnings
 * are read in one query, the request takes the first n < max not among them, and the ledger's
 * unique operation index decides between concurrent requests that chose the same n (the loser
 * tries the next). An earning is its entry, so the count can neither drift from the entries nor
 * be spent twice: nothing is counted apart and then trusted.
 */
async function limitedAward(input: AwardInput, change: Omit<LedgerChange, 'operation_id'>, limit: ActionLimit, keyed: string | undefined): Promise<AppendResult> {
  const request_id = input.operation_id;
  const earning = `award:${input.user_id}:${input.action_type}:${windowOf(limit.per, new Date())}:`;
  // A retry after the window turned (or after the policy changed) must not earn again.
  const [done, earned] = await Promise.all([
    keyed && request_id ? appliedRequest(input.organization_id, keyed, request_id) : null,
    operationsStartingWith(input.organization_id, earning),
  ]);
  if (done) return done;
  // A copy of this request may have earned between the two reads: then it is the answer.
  const mine = request_id === undefined ? undefined : earned.find((e) => e.request_id === request_id);
  if (mine) {
    const again = await appliedRequest(input.organization_id, mine.operation_id, request_id!);
    if (again) return again;
  }
  const taken = new Set(earned.map((e) => e.operation_id));
  for (let n = 0; n < limit.max; n += 1) {
    if (taken.has(earning + n)) continue;
    const out = await applyChange({ ...change, operation_id: earning + n, request_id });
    if (!out.duplicate) return out;
    // The same request, sent twice at once: the other copy took this earning.
    if (request_id !== undefined && out.request_id === request_id) return out;
  }
  throw new PlatformError(409, `Limit reached for action "${input.action_type}": ${describeLimit(limit)} per user; nothing was credited`, 'action_type');
}
