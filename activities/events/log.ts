/** The event log: what happened in an organization, kept EVENT_RETENTION_DAYS, for consumers catching up. */
import { notFound, rateLimited } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { PING_GAP_SECONDS } from './constants.ts';
import { recordEvent } from './emit.ts';
import type { EventDoc } from './models.ts';
import { endpointOf, type EventFilter, eventsPage, takePingSlot } from './store.ts';

/** An event as delivered: the same object every endpoint received (its `body`). */
export const viewEvent = (e: EventDoc) => ({
  ...(JSON.parse(e.body) as {
    id: string;
    type: string;
    created_at: string;
    organization_id: string;
    data: Record<string, unknown>;
  }),
  recorded_at: new Date(e.recorded_at).toISOString(),
});

export async function listEvents(f: EventFilter, page: number, limit: number) {
  const rows = await eventsPage(f, (page - 1) * limit, limit);
  return { events: rows.slice(0, limit).map(viewEvent), page, limit, has_more: rows.length > limit };
}

/** A `ping` to one endpoint now (enabled or not: it tests the endpoint); answers the event's id. */
export async function sendPing(organization_id: string, endpoint_id: string): Promise<string> {
  const endpoint = await endpointOf(organization_id, endpoint_id);
  if (!endpoint) throw notFound('Webhook endpoint not found');
  if (!(await takePingSlot(organization_id, endpoint_id, PING_GAP_SECONDS * 1000))) {
    throw rateLimited(`One test ping per endpoint every ${PING_GAP_SECONDS} s`, PING_GAP_SECONDS);
  }
  const key = newId('ping');
  return recordEvent(
    { organization_id, type: 'ping', key, data: { endpoint_id, message: 'A test event sent from the platform' } },
    endpoint_id,
  );
}
