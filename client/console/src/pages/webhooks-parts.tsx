/**
 * What the webhook pages share: the API's shapes, the calls that read an endpoint and its queue,
 * and how a queue's figures read (ages, rates, states).
 */
import type { ResponseBody } from '../../../src/index.ts';
import { api, ok } from '../api.ts';
import { Badge } from '../ui.tsx';

export type Endpoint = ResponseBody<'getWebhooksEndpoints'>['endpoints'][number];
export type Stats = ResponseBody<'getWebhooksEndpointsByIdStats'>['stats'];
export type Delivery = ResponseBody<'getWebhooksDeliveries'>['deliveries'][number];
export type DeliveryStatus = Delivery['status'];
export const DELIVERY_STATUSES: DeliveryStatus[] = ['pending', 'retrying', 'succeeded', 'failed'];

export const idPath = (id: string) => ({ params: { path: { id } } });

export async function statsOf(id: string): Promise<Stats> {
  return (await ok(api().GET('/api/webhooks/endpoints/{id}/stats', idPath(id)))).stats;
}

/** "45 s", "12 min", "3 h 5 min", "2 d 4 h": how long the oldest delivery has waited. */
export function age(seconds: number | null | undefined): string {
  if (seconds == null) return '—';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}

/** "66.7 % of 3 attempts", or "no attempts" when the rate is unknown. */
export function rate(last: Stats['last_24h']): string {
  if (last.success_rate == null) return 'no attempts';
  const pct = Math.round(last.success_rate * 1000) / 10;
  return `${pct} % of ${last.attempts} attempt${last.attempts === 1 ? '' : 's'}`;
}

export function StateBadge({ state }: { state: Stats['state'] }) {
  const tone = state === 'active' ? 'ok' : state === 'paused' ? 'warn' : 'bad';
  return <Badge tone={tone}>{state}</Badge>;
}

export function StatusBadge({ status }: { status: DeliveryStatus }) {
  const tone = status === 'succeeded' ? 'ok' : status === 'failed' ? 'bad' : status === 'retrying' ? 'warn' : undefined;
  return <Badge tone={tone}>{status}</Badge>;
}

/** The receiver's answer of an attempt: its HTTP status, or that it never answered. */
export const answer = (status: number | null) => (status == null ? 'no answer' : `HTTP ${status}`);

/** A datetime-local value (the browser's local time, to the minute) for an instant. */
export function localInput(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}
