/**
 * Who may report an earning action and how often one user may earn it. An end user's key reports
 * only self-service actions; every action may carry a limit per user and window, which holds for
 * admins too: it belongs to the action, not to the caller.
 */
export const LIMIT_PERIODS = ['ever', 'day', 'week', 'month'] as const;
export type LimitPeriod = (typeof LIMIT_PERIODS)[number];
export const MAX_LIMIT = 1000;

export interface ActionLimit {
  max: number;
  per: LimitPeriod;
}

export interface ActionPolicy {
  /** a basic key may report this action for its own user */
  self_service: boolean;
  /** null: unlimited */
  limit: ActionLimit | null;
}

const selfService = (per: LimitPeriod): ActionPolicy => ({ self_service: true, limit: { max: 1, per } });
const adminOnly = (): ActionPolicy => ({ self_service: false, limit: null });

/**
 * What a user can claim by themselves is what the app can observe on the device, once; what
 * happens elsewhere (a purchase, a review) is reported by the organization's back end.
 */
const DEFAULT_POLICIES: Record<string, ActionPolicy> = {
  daily_login: selfService('day'),
  profile_completed: selfService('ever'),
  app_download: selfService('ever'),
  newsletter_signup: selfService('ever'),
  purchase: adminOnly(),
  review: adminOnly(),
  survey_completed: adminOnly(),
  social_share: adminOnly(),
};

/** The default policy of an action name: as above for the known names, admin-only and unlimited otherwise. */
export function defaultPolicy(action: string): ActionPolicy {
  const p = Object.hasOwn(DEFAULT_POLICIES, action) ? DEFAULT_POLICIES[action] : adminOnly();
  return { self_service: p.self_service, limit: p.limit && { ...p.limit } };
}

/**
 * The window an award falls in, in UTC: `ever`, the day `2026-11-22`, the week by its Monday
 * `week-2026-11-16`, the month `2026-11`. Part of the ledger operation id of a limited award.
 */
export function windowOf(per: LimitPeriod, at: Date): string {
  const day = at.toISOString().slice(0, 10);
  switch (per) {
    case 'ever':
      return 'ever';
    case 'day':
      return day;
    case 'month':
      return day.slice(0, 7);
    case 'week': {
      const monday = new Date(
        Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() - ((at.getUTCDay() + 6) % 7)),
      );
      return `week-${monday.toISOString().slice(0, 10)}`;
    }
  }
}

export function describeLimit(limit: ActionLimit): string {
  const times = `${limit.max} time${limit.max === 1 ? '' : 's'}`;
  return limit.per === 'ever' ? `${times} ever` : `${times} per ${limit.per} (UTC)`;
}
