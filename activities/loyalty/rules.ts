/** Points per action and per referral, per organization, with defaults until an admin sets them. */
import { PlatformError } from '../errors';
import { newId } from '../ids';
import { creditPoints } from './ledger';
import { LoyaltyRules, type LoyaltyRulesDoc } from './models';

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

export interface Rules {
  organization_id: string;
  actions: Record<string, number>;
  referral_points: number;
  referred_points: number;
  is_default: boolean;
  updated_at: string | null;
}

/**
 * Rules are read on every award: each process keeps them for RULES_CACHE_MS. A change is seen at
 * once by the process that made it and within that time by the others (edge replicas).
 */
export const RULES_CACHE_MS = 2000;
const cache = new Map<string, { rules: Rules; until: number }>();

export async function getRules(organization_id: string): Promise<Rules> {
  const hit = cache.get(organization_id);
  if (hit && hit.until > Date.now()) return hit.rules;
  const rules = await readRules(organization_id);
  if (cache.size > 10_000) cache.clear();
  cache.set(organization_id, { rules, until: Date.now() + RULES_CACHE_MS });
  return rules;
}

async function readRules(organization_id: string): Promise<Rules> {
  const doc = await LoyaltyRules.findOne({ organization_id }).lean<LoyaltyRulesDoc>();
  if (!doc) {
    return { organization_id, actions: { ...DEFAULT_ACTIONS }, referral_points: DEFAULT_REFERRAL_POINTS, referred_points: DEFAULT_REFERRED_POINTS, is_default: true, updated_at: null };
  }
  return {
    organization_id,
    actions: JSON.parse(doc.actions_json) as Record<string, number>,
    referral_points: doc.referral_points,
    referred_points: doc.referred_points,
    is_default: false,
    updated_at: doc.updated_at.toISOString(),
  };
}

/** Replaces the organization's rules (fields left out keep their current values). */
export async function putRules(organization_id: string, input: { actions?: Record<string, number>; referral_points?: number; referred_points?: number }, updated_by: string): Promise<Rules> {
  const current = await readRules(organization_id); // not the cache: merge into what is stored
  const next = {
    actions_json: JSON.stringify(input.actions ?? current.actions),
    referral_points: input.referral_points ?? current.referral_points,
    referred_points: input.referred_points ?? current.referred_points,
    updated_by,
  };
  // One writer per organization document: an admin's edit. A lost race between two admins
  // saving at the same instant keeps one of the two complete rule sets, never a mix.
  await LoyaltyRules.replaceOne({ organization_id }, { organization_id, ...next, updated_at: new Date() }, { upsert: true });
  cache.delete(organization_id);
  return getRules(organization_id);
}

/** Credits the points the organization's rules give for an action. */
export async function awardAction(input: { organization_id: string; user_id: string; action_type: string; operation_id?: string }) {
  const rules = await getRules(input.organization_id);
  const points = rules.actions[input.action_type];
  if (points === undefined) {
    throw new PlatformError(422, `action_type: unknown action "${input.action_type}"; known actions: ${Object.keys(rules.actions).sort().join(', ')}`, 'action_type');
  }
  const operation_id = `award:${input.operation_id ?? newId('op')}`;
  const result = await creditPoints({
    organization_id: input.organization_id,
    user_id: input.user_id,
    points,
    reason: 'action',
    operation_id,
    new_operation: input.operation_id === undefined,
    description: input.action_type,
  });
  // A repeated operation answers like the first time (points_awarded as then), flagged duplicate.
  return { points_awarded: result.entry.amount, duplicate: result.duplicate, entry: result.entry };
}
