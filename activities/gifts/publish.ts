/**
 * What gifts publishes to the outgoing event log (activities/events).
 * The redemptions' events: each state a redemption enters that a receiver acts on (completed,
 * refunded, needs_review) is told as one event, keyed by the redemption id (an event's identity is
 * its organization, type and key, and a redemption enters each of these states once). The step
 * that wrote the state records the event right after, before it answers: a step retried after a
 * crash writes the same state again and records it again, which records nothing new. The data
 * never carries the PIN, the phone number or account reference, nor an admin's own note, nor the
 * status's reason (a provider's answer, an admin's word): the status and the settlement tell it.
 */
import { type EventType, recordEvent } from '../events/index.ts';
import type { RedemptionDoc } from './models.ts';

const TYPES: Partial<Record<RedemptionDoc['status'], EventType>> = {
  completed: 'redemption.completed',
  refunded: 'redemption.refunded',
  needs_review: 'redemption.needs_review',
};

/** The event's data: what a receiver needs to act on the redemption. */
function redemptionEventData(r: RedemptionDoc): Record<string, unknown> {
  const s = r.settlement;
  return {
    redemption_id: r.redemption_id,
    user_id: r.user_id,
    gift_id: r.gift_id,
    gift_name: r.gift_name,
    gift_type: r.gift_type ?? null,
    status: r.status,
    points_spent: r.points_spent,
    points_refunded: r.points_refunded ?? 0,
    points_lapsed: r.points_lapsed ?? 0,
    hold_entry_id: r.ledger_entry_id ?? null,
    refund_entry_id: r.refund_entry_id ?? null,
    provider: r.provider ?? null,
    provider_transaction_id: r.provider_transaction_id ?? null,
    settlement: s
      ? { outcome: s.outcome, settled_by: s.settled_by, settled_at: new Date(s.settled_at).toISOString() }
      : null,
  };
}

/** Records the event of the state the redemption is in now (none for processing or failed). */
export async function recordRedemptionEvent(r: RedemptionDoc): Promise<void> {
  const type = TYPES[r.status];
  if (!type) return;
  await recordEvent({
    organization_id: r.organization_id,
    type,
    key: r.redemption_id,
    at: r.updated_at ?? r.created_at,
    data: redemptionEventData(r),
  });
}
