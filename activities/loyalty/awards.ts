/**
 * Awards for actions: the points the organization's rules give an action, credited to the ledger
 * within the action's policy (self-service, limits per window).
 */
import { invalid, PlatformError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { countShares } from './campaign-stats.ts';
import {
  type AmountInput,
  type Breakdown,
  entryBreakdown,
  evaluate,
  type Evaluation,
  giveBack,
  takeGrants,
} from './engine.ts';
import { type AppendResult, appliedRequest, applyChange, getBalance, type LedgerChange } from './ledger.ts';
import type { EntryBreakdown } from './models.ts';
import { earnedIn, loyaltyFactsOf } from './once-only.ts';
import { type ActionLimit, describeLimit, windowOf } from './policies.ts';
import { getRules } from './rules.ts';
import { operationsStartingWith } from './store.ts';

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
  /** what was spent, for an action that earns by amount (engine.ts checks it) */
  amount?: AmountInput;
  /**
   * an admin's note on the award (why it was given), kept on the entry beside the action (never
   * in its description, which names the action): a repeat keeps the first award's note
   */
  note?: string;
}

/** The breakdown an award answers: as the entry keeps it (a repeat answers the first award's). */
export type AwardBreakdown = Pick<Breakdown, 'base' | 'tier_multiplier' | 'capped' | 'total'> & {
  tier_id: string | null;
  campaigns: EntryBreakdown['campaigns'];
};

function answerBreakdown(out: AppendResult): AwardBreakdown {
  const b = out.breakdown;
  if (!b)
    return {
      base: out.entry.amount,
      tier_id: null,
      tier_multiplier: '1',
      campaigns: [],
      capped: false,
      total: out.entry.amount,
    };
  // Which shares came from a budget is the ledger's bookkeeping, not the client's.
  const campaigns = b.campaigns.map(({ budgeted: _b, ...c }) => c);
  return { ...b, campaigns, total: out.entry.amount };
}

const answer = (out: AppendResult) => ({
  points_awarded: out.entry.amount,
  duplicate: out.duplicate,
  entry: out.entry as AppendResult['entry'] | null,
  balance: out.spendable_after,
  breakdown: answerBreakdown(out),
});

/** The action's rules as an award under them may use them: known, and reported by someone allowed to. */
async function checkedRules(input: Pick<AwardInput, 'organization_id' | 'action_type' | 'actor_level'>) {
  const rules = await getRules(input.organization_id);
  const { action_type } = input;
  if (!Object.hasOwn(rules.actions, action_type)) {
    throw invalid(
      'action_type',
      `unknown action "${action_type}"; known actions: ${Object.keys(rules.actions).sort().join(', ')}`,
    );
  }
  const policy = rules.policies[action_type];
  if (input.actor_level < 1 && !policy.self_service) {
    const mine = Object.keys(rules.policies)
      .filter((n) => rules.policies[n].self_service)
      .sort();
    throw new PlatformError(
      'forbidden',
      `Action "${action_type}" needs an admin key: a basic API key may only report the self-service actions (${mine.join(', ') || 'none'})`,
    );
  }
  return { rules, policy };
}

/** What an award would give now (the breakdown), writing nothing: POST /loyalty/evaluate. */
export async function evaluateAward(input: Omit<AwardInput, 'operation_id'>): Promise<Breakdown> {
  const { rules } = await checkedRules(input);
  return (await evaluate(rules, { ...input, amount: input.amount ?? {} })).breakdown;
}

/**
 * Credits what the engine gives the action (engine.ts), within the action's policy. The campaigns'
 * shares are taken before the entry is written and given back when it is not (a repeat, a refusal,
 * an error); a process that dies in between leaves them taken (a budget is never overspent).
 */
export async function awardAction(input: AwardInput) {
  const { rules, policy } = await checkedRules(input);
  const keyed = input.operation_id === undefined ? undefined : `award:${input.operation_id}`;
  const ev = await evaluate(rules, { ...input, amount: input.amount ?? {} });
  // A limited action's repeat, or its limit reached, answers before any campaign's share is taken.
  const limitRead = policy.limit ? await readLimit(input, policy.limit, keyed) : null;
  if (limitRead?.done) return answer(limitRead.done);
  if (!limitRead && ev.applied.length && keyed && input.operation_id) {
    // A repeat answers as the first time before any budget is taken again.
    const done = await appliedRequest(input.organization_id, keyed, input.operation_id);
    if (done) return answer(done);
  }
  const taken = ev.applied.length ? await takeGrants(ev) : null;
  const points = ev.breakdown.total;
  if (points <= 0) {
    if (taken) await giveBack(taken);
    // A repeat of an award that earned points (before the rules changed) answers as then.
    const done =
      keyed && input.operation_id ? await appliedRequest(input.organization_id, keyed, input.operation_id) : null;
    return done ? answer(done) : nothingEarned(input, ev);
  }
  const change = {
    organization_id: input.organization_id,
    user_id: input.user_id,
    amount: points,
    reason: 'action' as const,
    description: input.action_type,
    ...(input.note !== undefined && { note: input.note }),
    breakdown: entryBreakdown(ev.breakdown, new Set(taken?.budgets.keys())),
    standing: ev.member.standing,
  };
  let out: AppendResult;
  try {
    out =
      policy.limit && limitRead
        ? await limitedAward(input, change, policy.limit, limitRead)
        : // A repeated operation answers like the first time (points_awarded as then), flagged duplicate.
          await applyChange({
            ...change,
            operation_id: keyed ?? `award:${newId('op')}`,
            new_operation: keyed === undefined,
            request_id: input.operation_id,
          });
  } catch (err) {
    if (taken) await giveBack(taken);
    throw err;
  }
  if (out.duplicate) {
    if (taken) await giveBack(taken);
  } else if (out.breakdown?.campaigns.length)
    countShares(
      input.organization_id,
      input.user_id,
      out.breakdown.campaigns,
      new Date(out.entry.created_at),
      rules.time_zone,
    );
  return answer(out);
}

/** An award that earns nothing (below the rule's minimum amount): no entry, the balance as it is. */
async function nothingEarned(input: AwardInput, ev: Evaluation) {
  const balance = await getBalance(input.organization_id, input.user_id).then(
    (b) => b.points,
    () => 0,
  );
  const b = ev.breakdown;
  return {
    points_awarded: 0,
    duplicate: false,
    entry: null,
    balance,
    breakdown: {
      base: b.base,
      tier_id: b.tier?.tier_id ?? null,
      tier_multiplier: b.tier_multiplier,
      campaigns: entryBreakdown(b).campaigns,
      capped: b.capped,
      total: 0,
    },
  };
}

/**
 * A limited action earns at most `max` entries per user and window. The n-th earning of a window
 * (n from 0) is the ledger operation `award:<user>:<action>:<window>:<n>`: the window's earnings
 * are read in one query, the request takes the first n < max not among them, and the ledger's
 * unique operation index decides between concurrent requests that chose the same n (the loser
 * tries the next). An earning is its entry, so the count can neither drift from the entries nor
 * be spent twice: nothing is counted apart and then trusted.
 */
interface LimitRead {
  /** the earlier answer of this request, if it earned already */
  done: AppendResult | null;
  /** the free earnings of the window to try, in order (their ledger operations) */
  free: string[];
}

/** The window's earnings, read before anything is taken: a repeat or a reached limit answers at once. */
async function readLimit(input: AwardInput, limit: ActionLimit, keyed: string | undefined): Promise<LimitRead> {
  const request_id = input.operation_id;
  const slot = `${input.action_type}:${windowOf(limit.per, new Date())}:`;
  const earning = `award:${input.user_id}:${slot}`;
  // A retry after the window turned (or after the policy changed) must not earn again.
  const [done, earned, before] = await Promise.all([
    keyed && request_id ? appliedRequest(input.organization_id, keyed, request_id) : null,
    operationsStartingWith(input.organization_id, earning),
    earnedByEarlierAccounts(input, slot),
  ]);
  if (done) return { done, free: [] };
  // A copy of this request may have earned between the two reads: then it is the answer.
  const mine = request_id === undefined ? undefined : earned.find((e) => e.request_id === request_id);
  if (mine) {
    const again = await appliedRequest(input.organization_id, mine.operation_id, request_id!);
    if (again) return { done: again, free: [] };
  }
  const taken = new Set(earned.map((e) => e.operation_id));
  const free: string[] = [];
  for (let n = 0; n < limit.max - before; n += 1) if (!taken.has(earning + n)) free.push(earning + n);
  if (!free.length) throw limitReached(input.action_type, limit);
  return { done: null, free };
}

const limitReached = (action_type: string, limit: ActionLimit) =>
  new PlatformError(
    'conflict',
    `Limit reached for action "${action_type}": ${describeLimit(limit)} per user; nothing was credited`,
    'action_type',
  );

/**
 * Writes a limited award at the first free earning of its window: the ledger's unique operation
 * index decides between concurrent requests that chose the same one (the loser tries the next).
 */
async function limitedAward(
  input: AwardInput,
  change: Omit<LedgerChange, 'operation_id'>,
  limit: ActionLimit,
  read: LimitRead,
): Promise<AppendResult> {
  const request_id = input.operation_id;
  for (const operation_id of read.free) {
    const out = await applyChange({ ...change, operation_id, request_id });
    if (!out.duplicate) return out;
    // The same request, sent twice at once: the other copy took this earning.
    if (request_id !== undefined && out.request_id === request_id) return out;
  }
  throw limitReached(input.action_type, limit);
}

/**
 * What the same person earned in this window under accounts erased since (the facts their erasure
 * kept under their marker: once-only.ts): a person who erases and joins again does not earn the
 * once-only rewards again (docs/privacy.md). Nothing to read for anyone else.
 */
async function earnedByEarlierAccounts(input: AwardInput, slot: string): Promise<number> {
  const facts = await loyaltyFactsOf(input.organization_id, input.user_id);
  return facts ? earnedIn(facts, slot) : 0;
}
