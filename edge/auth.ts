/**
 * Who is calling and what they may touch. Handlers use these helpers so
 * every route applies the same rules: organization scoping, basic keys acting only for their own
 * user, admin and system_admin levels.
 */
import type { H3Event } from 'h3';
import { getRequestHeader, setResponseHeader } from 'h3';

import { config } from '../activities/core/config.ts';
import { forbidden, notFound, unauthorized } from '../activities/core/errors.ts';
import type { KeyOutcome, UserRef } from '../activities/identity/constants.ts';
import {
  authenticateKey,
  countKeyRequest,
  findUserRef,
  type Principal,
  resolveOrCreateUserRef,
  spendKeyCredit,
} from '../activities/identity/index.ts';
import { type AuthLevel, clientAddress } from './http.ts';
import { limited, RateLimiter } from './rate-limit.ts';

export const LEVEL: Record<Exclude<AuthLevel, 'none'>, number> = { key: 0, admin: 1, sysadmin: 2 };

function presentedKey(event: H3Event): string | undefined {
  const header = getRequestHeader(event, 'authorization');
  if (header) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (m) return m[1];
  }
  const x = getRequestHeader(event, 'x-api-key');
  return x?.trim() || undefined;
}

/**
 * Presented keys that failed, per client address and minute. Past AUTH_FAILURES_PER_MINUTE a key
 * from that address is still checked, and only a key that fails is refused with 429: a valid key
 * always passes, so nobody sharing an address (a proxy, a balancer, a carrier NAT) can lock its
 * users out. The check past the budget is the usual one: a cached key costs nothing, a key refused
 * in the last 30 s or malformed costs nothing (the negative cache), a new guess costs the one
 * `_id` read that telling it from a valid key takes, the same as any authenticated request.
 */
const failures = new RateLimiter(0);

export async function authenticate(event: H3Event): Promise<Principal> {
  const key = presentedKey(event);
  if (!key) throw unauthorized();
  const budget = config().AUTH_FAILURES_PER_MINUTE;
  const address = `auth:${clientAddress(event)}`;
  const principal = await authenticateKey(key);
  if (principal) {
    countWhenAnswered(event, principal);
    await spendCredit(event, principal);
    return principal;
  }
  const wait = failures.retryAfter(address, budget);
  if (wait) throw limited(`Too many failed authentications from this address: at most ${budget} per minute`, wait);
  if (budget) failures.record(address);
  throw unauthorized();
}

const outcomeOf = (status: number): KeyOutcome =>
  status >= 500
    ? 'server_error'
    : status === 429
      ? 'rate_limited'
      : status === 403
        ? 'forbidden'
        : status >= 400
          ? 'client_error'
          : 'success';

/** Counts the request in its key's usage by the answer's outcome, once it is sent (or the client left: 499). */
function countWhenAnswered(event: H3Event, p: Principal): void {
  const res = event.node.res;
  let done = false;
  const count = () => {
    if (done) return;
    done = true;
    const outcome = event.context.noCredits ? 'no_credits' : outcomeOf(res.writableFinished ? res.statusCode : 499);
    countKeyRequest(p.key_id, p.organization_id, outcome);
  };
  res.once('finish', count);
  res.once('close', count);
}

/**
 * A key with credits spends one per request (docs/components/identity.md, "Credits"); refused
 * with 429 when none is left. A request already over its per-minute budget spends none: the
 * limiter refuses it next (a request racing into the budget's last place may still spend one).
 */
async function spendCredit(event: H3Event, p: Principal): Promise<void> {
  if (!p.credits_id || budgetSpent(p)) return;
  try {
    const left = await spendKeyCredit(p.credits_id);
    if (left !== null) setResponseHeader(event, 'x-credits-remaining', String(left));
  } catch (err) {
    event.context.noCredits = true;
    throw err;
  }
}

/**
 * The caller's principal when a working key is presented, else undefined: for routes that need no
 * key but tell an administrator more (GET /health). A wrong key counts as a failure as anywhere
 * else, so such a route is no free oracle for guessing; any failure (the store down) is "no key".
 */
export async function optionalPrincipal(event: H3Event): Promise<Principal | undefined> {
  if (!presentedKey(event)) return undefined;
  try {
    return await authenticate(event);
  } catch {
    return undefined;
  }
}

/**
 * Whether the key, or its user, has used its whole budget this minute: the windows the edge takes
 * from on every authenticated request (`key:…` and `user:…`), read without counting.
 */
export function budgetSpent(p: Principal): boolean {
  const limiter = RateLimiter.edge;
  if (!limiter) return false;
  return (
    limiter.spent(`key:${p.key_id}`, p.rate_limit_per_minute) ||
    limiter.spent(`user:${p.user_id}`, p.user_rate_limit_per_minute ?? 0)
  );
}

export function requireLevel(p: Principal, level: Exclude<AuthLevel, 'none'>): void {
  if (p.level >= LEVEL[level]) return;
  throw forbidden(
    level === 'sysadmin'
      ? 'This operation requires the system_admin permission'
      : 'This operation requires the admin permission',
  );
}

/** The organization a request acts in: the key's own unless a system admin names another. */
export function organizationFor(p: Principal, requested?: string | null): string {
  const org = requested || p.organization_id;
  if (org !== p.organization_id && p.level < 2) {
    throw forbidden(`API key does not belong to organization ${org}`);
  }
  return org;
}

/**
 * The user a request acts for. Basic keys act only for their own user (403 for anyone else, known
 * or not); admins may name any user of their organization, which is created on first reference
 * by idp_id; an unknown `usr_…` is 404, never a new user.
 */
export async function actingUser(p: Principal, organization_id: string, ref: string): Promise<UserRef> {
  // The key's own user needs no lookup: the hot path of most basic-key requests.
  if (organization_id === p.organization_id && (ref === p.user_id || ref === p.idp_id)) {
    return { user_id: p.user_id, idp_id: p.idp_id, organization_id };
  }
  if (p.level === 0) {
    const user = await findUserRef(organization_id, ref);
    if (!user || user.user_id !== p.user_id) throw forbidden('A basic API key may only act for its own user');
    return user;
  }
  return resolveOrCreateUserRef(organization_id, ref);
}

/**
 * Like actingUser, for reads: an unknown user is not created but answered with 404 `missing`
 * (a basic key still only reads its own user).
 */
export async function existingUser(
  p: Principal,
  organization_id: string,
  ref: string,
  missing: string,
): Promise<UserRef> {
  if (organization_id === p.organization_id && (ref === p.user_id || ref === p.idp_id)) {
    return { user_id: p.user_id, idp_id: p.idp_id, organization_id };
  }
  const user = await findUserRef(organization_id, ref);
  if (p.level === 0 && (!user || user.user_id !== p.user_id))
    throw forbidden('A basic API key may only act for its own user');
  if (!user) throw notFound(missing);
  return user;
}
