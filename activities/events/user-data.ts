/**
 * events's part of a user's export and erasure (docs/privacy.md, docs/privacy-components/events.md).
 *
 * The event log (kept EVENT_RETENTION_DAYS for consumers catching up) is kept: in every event
 * whose body names the user, the user's ids (user_id, idp_id, also inside operation ids) are
 * replaced by the tombstone, and the texts that may name the person (an uploaded file's name, a
 * description or reason quoting a phone number) are tombstoned too. The event keeps its id, type
 * and figures, so a consumer still follows balances by seq and balance_after; a delivery retried
 * later sends the tombstoned body. Deliveries store no payload (the body is the event's), only
 * attempts. An endpoint created by the user's key keeps working, its creator tombstoned.
 *
 * Events are recorded by the other components' changes: this erasure runs after theirs (and runs
 * again at the end), so an event their erasure recorded (the ledger's pending ones) is covered.
 */
import { PHONE_LIKE, wholeTokens } from '../core/scrub.ts';
import type { ErasureScope, ExportPart, UserData, UserScope } from '../core/user-data.ts';
import { viewEvent } from './log.ts';
import { endpointsCreatedBy, eventsContaining, rewriteEventBodies, tombstoneEndpointCreator } from './store.ts';

/** Free texts of an event's data that may name the person: replaced whole, or scrubbed of phone numbers. */
const PERSONAL_TEXT = new Set(['filename']);
const REASON_TEXT = new Set(['description', 'status_reason', 'reason', 'message']);

/** Every string in a JSON value, mapped by `f(value, key)`. */
function mapStrings(v: unknown, f: (s: string, key: string | null) => string, key: string | null = null): unknown {
  if (typeof v === 'string') return f(v, key);
  if (Array.isArray(v)) return v.map((x) => mapStrings(x, f, key));
  if (v && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, mapStrings(x, f, k)]));
  return v;
}

/**
 * An event is the user's when it names their user_id (every event about a person carries it). The
 * idp_id alone never selects one: it is any text the identity provider chose (`12345`, `action`,
 * a user name), which may be a word of another user's event.
 */
const needles = (scope: UserScope) => [JSON.stringify(scope.user_id).slice(1, -1)];

/** Whether the event's data names the user (their user_id as a whole token). */
function namesUser(data: unknown, scope: UserScope): boolean {
  const own = wholeTokens([scope.user_id])!;
  let hit = false;
  mapStrings(data, (s) => {
    own.lastIndex = 0;
    if (own.test(s)) hit = true;
    return s;
  });
  return hit;
}

/** The body with the person replaced, or null when it does not name them (a longer id only contained theirs). */
function tombstonedBody(body: string, scope: ErasureScope): string | null {
  const event = JSON.parse(body) as { data?: unknown };
  if (!namesUser(event.data, scope)) return null;
  // The user's own event: their ids go wherever they occur in it.
  const named = wholeTokens([scope.user_id, scope.idp_id])!;
  const data = mapStrings(event.data, (s) => s.replace(named, scope.tombstone));
  // The event names the person: their free texts go too.
  const clean = mapStrings(data, (s, key) =>
    key && PERSONAL_TEXT.has(key)
      ? scope.tombstone
      : key && REASON_TEXT.has(key)
        ? s.replace(PHONE_LIKE, scope.tombstone)
        : s,
  );
  return JSON.stringify({ ...event, data: clean });
}

async function exportEvents(scope: UserScope): Promise<ExportPart> {
  const docs = await eventsContaining(scope.organization_id, needles(scope));
  // Another user an event names (the other side of a referral) is not the user's data.
  const other = (s: string) =>
    s.replace(/(?<![A-Za-z0-9_-])usr_[A-Za-z0-9_-]+/g, (id) => (id === scope.user_id ? id : '[another user]'));
  const events = docs
    .filter((d) => namesUser((JSON.parse(d.body) as { data?: unknown }).data, scope))
    .map((d) => {
      const v = viewEvent(d);
      return { ...v, data: mapStrings(v.data, other) };
    });
  const endpoints = (await endpointsCreatedBy(scope.organization_id, scope.user_id)).map((e) => ({
    endpoint_id: e._id,
    created_at: new Date(e.created_at).toISOString(),
  }));
  return { data: { events, endpoints_created: endpoints }, files: [] };
}

const MAX_ROUNDS = 20;

async function eraseEvents(scope: ErasureScope): Promise<Record<string, number>> {
  const report = { events_tombstoned: 0, endpoint_creators_tombstoned: 0 };
  // An event recorded meanwhile (a change finishing in the background) is found by the next round.
  for (let round = 0; round < MAX_ROUNDS; round += 1) {
    const changes = [];
    for (const d of await eventsContaining(scope.organization_id, needles(scope))) {
      const body = tombstonedBody(d.body, scope);
      if (body !== null && body !== d.body) changes.push({ _id: d._id, from: d.body, body });
    }
    if (!changes.length) break;
    report.events_tombstoned += await rewriteEventBodies(changes);
  }
  for (const e of await endpointsCreatedBy(scope.organization_id, scope.user_id)) {
    if (await tombstoneEndpointCreator(scope.organization_id, e._id, scope.user_id, scope.tombstone))
      report.endpoint_creators_tombstoned += 1;
  }
  return report;
}

export const eventsUserData: UserData = {
  export: exportEvents,
  erase: eraseEvents,
};
