/** The events' vocabulary, shared with the edge (schemas) and free of I/O. docs/components/events.md describes each type's data. */
export const EVENT_TYPES = [
  'points.credited',
  'points.reversed',
  'points.expired',
  'points.debited',
  'redemption.completed',
  'redemption.refunded',
  'redemption.needs_review',
  'gifts.low_balance',
  'scan.completed',
  'scan.pending_validation',
  'scan.rejected',
  'referral.completed',
  'tier.changed',
  'campaign.status_changed',
  'campaign.budget_exhausted',
  'document.processed',
  'support.escalated',
  'tokens.purchased',
  'scheduled_event.run_failed',
  'user.erased',
  'ping',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** pending: an attempt is due; retrying: the last failed, the next is scheduled; succeeded / failed: final. */
export const DELIVERY_STATUSES = ['pending', 'retrying', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const MAX_ENDPOINTS_PER_ORGANIZATION = 20;
/** A test ping per endpoint at most this often (each is an event kept 30 days and a delivery run). */
export const PING_GAP_SECONDS = 10;
/** Events and deliveries are kept this long (the event log's catch-up window). */
export const EVENT_RETENTION_DAYS = 30;
/** A rotated secret keeps signing this long by default, and at most 7 days. */
export const DEFAULT_ROTATION_GRACE_SECONDS = 86_400;
export const MAX_ROTATION_GRACE_SECONDS = 7 * 86_400;
