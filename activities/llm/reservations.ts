/**
 * Reservation, not overdraft. Before a model call is sent, its most tokens (the prompt's estimate
 * plus the answer's limit) are held on three meters, in this order:
 *  1. the organization's agent in this UTC minute: calls within `rpm`, tokens within `tpm` (429);
 *  2. the organization's agent in its budget window (UTC day, ISO week, month) (429 until it resets);
 *  3. the user's tokens: held by the user's calls in progress plus this one within what remains (402).
 * A refusal releases what the earlier steps held, and nothing is sent. After the call its holds
 * are settled with the real count (the difference is released). A hold counts for HOLD_MS at
 * most, so a call that crashed between the two stops holding tokens then; HOLD_MS is far above
 * the longest attempt (timeout_ms ≤ 120 s).
 */
import { tokenUsage } from '../billing/index.ts';
import { PlatformError, rateLimited } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import type { AgentName } from './constants.ts';
import { held, Meter, withHold, withSettled } from './meter.ts';
import { type Budget, budgetWindow, type Limits, minuteWindow, secondsUntil } from './settings.ts';

export const HOLD_MS = 10 * 60_000;

const rate = new Meter('rate');
const budgets = new Meter('budget');
const balances = new Meter('balance');

export interface Caller {
  organization_id: string;
  user_id: string;
}

export interface Reservation {
  id: string;
  tokens: number;
  rate: { key: string; ends: Date };
  budget: { key: string; ends: Date };
  balance: { key: string };
}

const limited = (message: string, retryAfter: number) => rateLimited(message, retryAfter);

const budgetKey = (who: Caller, agent: AgentName, b: Budget, start: Date) =>
  `${who.organization_id}|${agent}|${b.period}|${start.toISOString()}`;

/** Holds `tokens` for one attempt of a call of `agent`, or throws the refusal (429, 402) having held nothing. */
export async function reserve(
  who: Caller,
  agent: AgentName,
  s: { limits: Limits; budget: Budget },
  tokens: number,
  now = new Date(),
): Promise<Reservation> {
  const id = newId('hold');
  const exp = new Date(now.getTime() + HOLD_MS);
  const minute = minuteWindow(now);
  const window = budgetWindow(s.budget.period, now);
  const r: Reservation = {
    id,
    tokens,
    rate: { key: `${who.organization_id}|${agent}|${minute.start.toISOString()}`, ends: minute.end },
    budget: { key: budgetKey(who, agent, s.budget, window.start), ends: window.end },
    balance: { key: `${who.organization_id}|${who.user_id}` },
  };
  const { rpm, tpm } = s.limits;
  await rate.append(r.rate.key, `hold:${id}`, minute.end, (st) => {
    const h = held(st, now);
    const wait = secondsUntil(minute.end, now);
    if (st.requests + h.requests + 1 > rpm)
      throw limited(`Rate limit of the ${agent} model for this organization: ${rpm} calls a minute`, wait);
    if (tokens > tpm)
      throw limited(
        `This ${agent} call may use up to ${tokens} tokens, more than this organization's limit of ${tpm} tokens a minute`,
        wait,
      );
    if (st.used + h.tokens + tokens > tpm)
      throw limited(`Token limit of the ${agent} model for this organization: ${tpm} tokens a minute`, wait);
    return withHold(st, { id, tokens, requests: 1, exp }, now);
  });
  try {
    await budgets.append(r.budget.key, `hold:${id}`, window.end, (st) => {
      if (st.used + held(st, now).tokens + tokens > s.budget.tokens) {
        throw limited(
          `The token budget of the ${agent} model for this organization is spent: ${s.budget.tokens} tokens ${s.budget.period} (UTC); it resets at ${window.end.toISOString()}`,
          secondsUntil(window.end, now),
        );
      }
      return withHold(st, { id, tokens, requests: 1, exp }, now);
    });
  } catch (err) {
    await release(rate, r.rate.key, id, minute.end, now);
    throw err;
  }
  try {
    await balances.append(r.balance.key, `hold:${id}`, undefined, async (st) => {
      // Read after the head: every settled call's usage record precedes its settling entry.
      const { remaining_tokens } = await tokenUsage(who.organization_id, who.user_id);
      const free = remaining_tokens - held(st, now).tokens;
      if (tokens > free) {
        throw new PlatformError(
          'payment_required',
          `Not enough tokens for this ${agent} call: it may use up to ${tokens} tokens and ${Math.max(0, free)} remain${free < remaining_tokens ? ` (${remaining_tokens - free} are held by calls in progress)` : ''}; buy a token package`,
        );
      }
      return withHold(st, { id, tokens, requests: 1, exp }, now);
    });
  } catch (err) {
    await release(budgets, r.budget.key, id, window.end, now);
    await release(rate, r.rate.key, id, minute.end, now);
    throw err;
  }
  return r;
}

async function release(m: Meter, key: string, id: string, ends: Date | undefined, now: Date) {
  await m
    .append(key, `release:${id}`, ends, (st) => withSettled(st, id, 0, 0, now))
    .catch((err) =>
      process.stderr.write(`gateway: releasing hold ${id} failed (it expires by itself): ${(err as Error).message}\n`),
    );
}

/**
 * Replaces the holds by what the attempt used (`tokens`; `sent`: whether the provider was asked).
 * The caller records the usage first, so a reservation that reads the balance after this entry
 * sees it. A failure here is logged: the holds then expire by themselves.
 */
export async function settle(r: Reservation, tokens: number, sent: boolean, now = new Date()): Promise<void> {
  const log = (err: unknown) =>
    process.stderr.write(`gateway: settling hold ${r.id} failed (it expires by itself): ${(err as Error).message}\n`);
  await balances
    .append(r.balance.key, `settle:${r.id}`, undefined, (st) => withSettled(st, r.id, 0, 0, now))
    .catch(log);
  await budgets
    .append(r.budget.key, `settle:${r.id}`, r.budget.ends, (st) => withSettled(st, r.id, tokens, 1, now))
    .catch(log);
  // A minute that is over limits nobody any more.
  if (now < r.rate.ends)
    await rate
      .append(r.rate.key, `settle:${r.id}`, r.rate.ends, (st) => withSettled(st, r.id, tokens, sent ? 1 : 0, now))
      .catch(log);
}

/** The budget's window now: spent (settled), held by calls in progress, what remains and when it resets. */
export async function budgetStatus(organization_id: string, agent: AgentName, b: Budget, now = new Date()) {
  const window = budgetWindow(b.period, now);
  const st = await budgets.read(budgetKey({ organization_id, user_id: '' }, agent, b, window.start));
  const reserved = held(st, now).tokens;
  return {
    tokens: b.tokens,
    period: b.period,
    window_start: window.start.toISOString(),
    resets_at: window.end.toISOString(),
    used: st.used,
    reserved,
    remaining: Math.max(0, b.tokens - st.used - reserved),
  };
}
