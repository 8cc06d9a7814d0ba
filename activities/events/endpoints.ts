/**
 * An organization's webhook endpoints: where its events go, which types each wants, and the
 * secret that signs them (shown once, stored encrypted, rotated with a grace during which both
 * old and new sign).
 */
import { checkWebhookTarget } from '../adapters/webhooks.ts';
import { noteChange } from '../core/audit-note.ts';
import { decryptSecret, encryptSecret } from '../core/encryption.ts';
import { conflict, invalid, notFound } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { DEFAULT_ROTATION_GRACE_SECONDS, EVENT_TYPES, MAX_ENDPOINTS_PER_ORGANIZATION } from './constants.ts';
import type { EndpointDoc } from './models.ts';
import { wakeEndpoint } from './queue.ts';
import { newSecret } from './signing.ts';
import {
  deleteEndpoint,
  endpointOf,
  endpointsOf,
  giveEndpointPlace,
  insertEndpoint,
  takeEndpointPlace,
  updateEndpoint,
} from './store.ts';

export interface EndpointView {
  id: string;
  organization_id: string;
  url: string;
  events: string[];
  enabled: boolean;
  description: string | null;
  /** why the platform disabled it (410 Gone, failing for days); null when enabled or disabled by an admin */
  disabled_reason: string | null;
  /** the first failed attempt since the last success */
  failing_since: string | null;
  /** paused by an admin since then: deliveries queue, nothing is sent (null: not paused) */
  paused_at: string | null;
  /** until when the previous secret also signs (after a rotation) */
  previous_secret_expires_at: string | null;
  /** the key that created it, and that key's user */
  created_by: { key_id: string; user_id: string } | null;
  created_at: string;
  updated_at: string;
}

const iso = (d?: Date | null) => (d ? new Date(d).toISOString() : null);

export function viewEndpoint(e: EndpointDoc, now = new Date()): EndpointView {
  const previous = e.secrets.slice(1).find((s) => s.expires_at && s.expires_at > now);
  return {
    id: e._id,
    organization_id: e.organization_id,
    url: e.url,
    events: e.events,
    enabled: e.enabled,
    description: e.description ?? null,
    disabled_reason: e.disabled_reason ?? null,
    failing_since: iso(e.failing_since),
    paused_at: iso(e.paused_at),
    previous_secret_expires_at: iso(previous?.expires_at),
    created_by: e.created_by ? { key_id: e.created_by.key_id, user_id: e.created_by.user_id } : null,
    created_at: iso(e.created_at)!,
    updated_at: iso(e.updated_at)!,
  };
}

/** The secrets that sign now: the current one and a rotated one still in its grace. */
export function signingSecrets(e: EndpointDoc, now = new Date()): string[] {
  return e.secrets.filter((s, i) => i === 0 || (s.expires_at && s.expires_at > now)).map((s) => decryptSecret(s.value));
}

/** An endpoint wants an event of `type` when it lists it or `*` (a ping goes to the endpoint it tests, whatever it lists). */
export const wants = (e: Pick<EndpointDoc, 'events'>, type: string) =>
  e.events.includes('*') || e.events.includes(type);

function checkEvents(events: string[]): string[] {
  const known = new Set<string>(EVENT_TYPES);
  const bad = events.find((t) => t !== '*' && !known.has(t));
  if (bad) throw invalid('events', `unknown event type ${bad}`);
  if (events.includes('*') && events.length > 1) throw invalid('events', '"*" stands alone');
  return [...new Set(events)];
}

const checkUrl = async (url: string) => (await checkWebhookTarget(url, undefined, undefined, 'url')).toString();

export async function createEndpoint(input: {
  organization_id: string;
  url: string;
  events: string[];
  description?: string;
  created_by: { key_id: string; user_id: string };
}): Promise<{ endpoint: EndpointView; secret: string }> {
  const events = checkEvents(input.events);
  const url = await checkUrl(input.url);
  if (!(await takeEndpointPlace(input.organization_id, MAX_ENDPOINTS_PER_ORGANIZATION))) {
    throw conflict(`An organization has at most ${MAX_ENDPOINTS_PER_ORGANIZATION} webhook endpoints`);
  }
  const secret = newSecret();
  try {
    const doc = await insertEndpoint({
      _id: newId('we'),
      organization_id: input.organization_id,
      url,
      events,
      enabled: true,
      description: input.description,
      secrets: [{ value: encryptSecret(secret) }],
      created_by: { key_id: input.created_by.key_id, user_id: input.created_by.user_id },
    });
    return { endpoint: viewEndpoint(doc.toObject() as unknown as EndpointDoc), secret };
  } catch (err) {
    await giveEndpointPlace(input.organization_id);
    throw err;
  }
}

export async function listEndpoints(organization_id: string): Promise<EndpointView[]> {
  const now = new Date();
  return (await endpointsOf(organization_id)).map((e) => viewEndpoint(e, now));
}

export async function existing(organization_id: string, endpoint_id: string): Promise<EndpointDoc> {
  const e = await endpointOf(organization_id, endpoint_id);
  if (!e) throw notFound('Webhook endpoint not found');
  return e;
}

export const getEndpoint = async (organization_id: string, endpoint_id: string) =>
  viewEndpoint(await existing(organization_id, endpoint_id));

export async function changeEndpoint(
  organization_id: string,
  endpoint_id: string,
  change: { url?: string; events?: string[]; enabled?: boolean; description?: string | null },
): Promise<EndpointView> {
  const set: Record<string, unknown> = {};
  const unset: string[] = [];
  if (change.url !== undefined) set.url = await checkUrl(change.url);
  if (change.events !== undefined) set.events = checkEvents(change.events);
  if (change.description !== undefined) {
    if (change.description === null) unset.push('description');
    else set.description = change.description;
  }
  if (change.enabled !== undefined) {
    set.enabled = change.enabled;
    // Enabled again by an admin: the platform's reason and the failure streak are history.
    if (change.enabled) unset.push('disabled_reason', 'failing_since');
  }
  if (!Object.keys(set).length && !unset.length) return getEndpoint(organization_id, endpoint_id);
  const before = await existing(organization_id, endpoint_id);
  const doc = await updateEndpoint(organization_id, endpoint_id, set, unset);
  if (!doc) throw notFound('Webhook endpoint not found');
  for (const f of ['url', 'events', 'enabled', 'description'] as const)
    if (change[f] !== undefined) noteChange(f, before[f] ?? null, doc[f] ?? null);
  return viewEndpoint(doc);
}

/** Deleting stops its deliveries: each ends at its next attempt (the endpoint is gone). */
export async function removeEndpoint(organization_id: string, endpoint_id: string): Promise<void> {
  if (!(await deleteEndpoint(organization_id, endpoint_id))) throw notFound('Webhook endpoint not found');
  // Its actor ends what the endpoint still had queued now, not at the next one's time.
  await wakeEndpoint(organization_id, endpoint_id, true).catch(() => undefined);
}

/**
 * A new current secret; the current one keeps signing for `grace_seconds` (0: stops at once).
 * At most two secrets sign: one rotated earlier is dropped, even within its grace. Two rotations
 * at once: the second finds the secrets changed under it and is refused (409), never losing either.
 */
export async function rotateSecret(
  organization_id: string,
  endpoint_id: string,
  grace_seconds = DEFAULT_ROTATION_GRACE_SECONDS,
): Promise<{ endpoint: EndpointView; secret: string }> {
  const e = await existing(organization_id, endpoint_id);
  const now = new Date();
  const secret = newSecret();
  const previous =
    grace_seconds > 0
      ? [{ value: e.secrets[0].value, expires_at: new Date(now.getTime() + grace_seconds * 1000) }]
      : [];
  const doc = await updateEndpoint(
    organization_id,
    endpoint_id,
    { secrets: [{ value: encryptSecret(secret) }, ...previous] },
    [],
    { 'secrets.0.value': e.secrets[0].value },
  );
  if (!doc) {
    if (await endpointOf(organization_id, endpoint_id))
      throw conflict('The secret was rotated meanwhile by another request; rotate again if needed');
    throw notFound('Webhook endpoint not found');
  }
  noteChange('secret', '***', '***'); // that it changed, never what it is
  return { endpoint: viewEndpoint(doc, now), secret };
}
