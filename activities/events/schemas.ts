/**
 * What each event type's `data` may carry. Events are kept 30 days, delivered outside the platform
 * and only tombstoned by an erasure, so they carry ids, numbers, codes, dates and the catalogue's
 * names, never free text a person wrote (a reason, a note, a file name, an error message, a
 * receipt's lines). The write path holds every event to its type's schema here: a field the
 * schema does not declare is left out, and a value not of its declared kind is written as null;
 * either is logged (field names only). So a component cannot leak text by adding a field, and a new
 * type cannot be recorded without a schema (the map is keyed by every EventType).
 */
import type { EventType } from './constants.ts';

/**
 * id: a platform or client-chosen identifier (no white space, no `@`: never an address); user: a
 * platform user id (`usr_…`, or an erased user's `del_…`); code: a word of a vocabulary
 * (`purchase`, `refused`, `llm:gpt-4o-mini`); label: a name the organization wrote for everyone (a
 * gift's or a product's name, a document folder); path: a storage key made of ids; mime: a media type.
 */
type Scalar = 'id' | 'user' | 'code' | 'label' | 'path' | 'mime' | 'date' | 'number' | 'integer' | 'boolean';
type FieldKind = Scalar | { enum: readonly string[] } | { object: Shape } | { array: FieldKind };
export type Shape = Readonly<Record<string, FieldKind>>;

const ID = /^[^\s@]{1,200}$/;
const USER = /^(?:usr|del)_[A-Za-z0-9_-]{1,64}$/;
const CODE = /^[A-Za-z0-9][A-Za-z0-9_.:/+-]{0,63}$/;
const PATH = /^[A-Za-z0-9._-]{1,200}(?:\/[A-Za-z0-9._-]{1,200}){0,8}$/;
const MIME = /^[a-z0-9][a-z0-9.+-]{0,63}\/[a-z0-9][a-z0-9.+-]{0,127}$/i;
const DATE = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;
const MAX_LABEL = 200;
const MAX_ITEMS = 500;

const POINTS: Shape = {
  user_id: 'user',
  operation_id: 'id',
  entry_id: 'id',
  seq: 'integer',
  amount: 'number',
  balance_after: 'number',
  reason: 'code',
  // an action credit's action (`purchase`); null for every other entry (a reversal's reason is an admin's words)
  description: 'code',
  reverses_entry_id: 'id',
  expires_at: 'date',
  available_at: 'date',
};

const REDEMPTION: Shape = {
  redemption_id: 'id',
  user_id: 'user',
  gift_id: 'id',
  gift_name: 'label',
  gift_type: 'code',
  status: { enum: ['completed', 'refunded', 'needs_review'] },
  points_spent: 'number',
  points_refunded: 'number',
  points_lapsed: 'number',
  hold_entry_id: 'id',
  refund_entry_id: 'id',
  provider: 'code',
  provider_transaction_id: 'id',
  settlement: { object: { outcome: 'code', settled_by: 'user', settled_at: 'date' } },
};

const SCAN: Shape = {
  scan_id: 'id',
  user_id: 'user',
  source: { enum: ['ticket_scan', 'receipt'] },
  status: { enum: ['pending_validation', 'completed', 'rejected'] },
  venue_id: 'id',
  matched_venue_id: 'id',
  total_points: 'number',
  max_points_per_scan: 'number',
  points_capped: 'boolean',
  points_processed: 'boolean',
  points_processed_at: 'date',
  operation_id: 'id',
  validation_status: 'code',
  validation_expires_at: 'date',
  // the catalogue's products the receipt matched: never the receipt's own lines
  products: {
    array: { object: { id: 'id', name: 'label', quantity: 'number', points: 'number', validation_status: 'code' } },
  },
  flags: { array: 'code' },
  duplicate_of: 'id',
  rejection_reason: {
    enum: ['duplicate', 'no_products_recognized', 'validation_expired', 'all_products_rejected', 'other'],
  },
  receipt: { object: { date: 'date', total: 'number' } },
};

export const EVENT_SCHEMAS: Readonly<Record<EventType, Shape>> = {
  'points.credited': POINTS,
  'points.debited': POINTS,
  'points.reversed': POINTS,
  'points.expired': POINTS,
  'redemption.completed': REDEMPTION,
  'redemption.refunded': REDEMPTION,
  'redemption.needs_review': REDEMPTION,
  // the gift provider's balance fell under the organization's threshold (at most once until it rises again)
  'gifts.low_balance': { provider: 'code', balance: 'number', currency: 'code', threshold: 'number' },
  'scan.pending_validation': SCAN,
  'scan.completed': SCAN,
  'scan.rejected': SCAN,
  'referral.completed': {
    referral_id: 'id',
    referrer_user_id: 'user',
    referred_user_id: 'user',
    referrer_points: 'number',
    referred_points: 'number',
    status: 'code',
    created_at: 'date',
    completed_at: 'date',
  },
  'tier.changed': {
    user_id: 'user',
    from_tier: 'id',
    to_tier: 'id',
    change: { enum: ['upgrade', 'downgrade', 'renewal', 'manual'] },
    valid_until: 'date',
    earned_in_window: 'number',
    // the member's change number (1, 2, 3…): the order of a member's changes; renewals and hand sets
    // that keep the tier take a number without an event, so a gap is not a missed event
    seq: 'integer',
  },
  'campaign.status_changed': {
    campaign_id: 'id',
    version: 'integer',
    from_status: { enum: ['draft', 'scheduled', 'active', 'paused', 'ended'] },
    to_status: { enum: ['draft', 'scheduled', 'active', 'paused', 'ended'] },
    // the admin key that made the change
    by: 'id',
  },
  'campaign.budget_exhausted': { campaign_id: 'id', version: 'integer', budget: 'number' },
  // a support answer handed to a person: the handoff to claim; reason is a word of a vocabulary, never the question
  'support.escalated': {
    handoff_id: 'id',
    conversation_id: 'id',
    user_id: 'user',
    reason: 'code',
    created_at: 'date',
  },
  'document.processed': {
    media_id: 'id',
    user_id: 'user',
    workflow_id: 'id',
    folder_structure: { object: { folder_name: 'label', category: 'code', subcategory: 'code' } },
    classification: { object: { confidence: 'number', engine: 'code' } },
    format: 'code',
    mime_type: 'mime',
    pages: 'number',
    size_bytes: 'number',
    word_count: 'number',
    text_source: 'code',
    // `<organization>/<user>/thumbnails/<media_id>.jpg`: ids only, never the uploaded file's name
    thumbnail_path: 'path',
  },
  'tokens.purchased': {
    transaction_id: 'id',
    user_id: 'user',
    package_id: 'id',
    tokens: 'number',
    price: 'number',
    currency: 'code',
    provider: 'code',
    sandbox: 'boolean',
    payment_intent_id: 'id',
    expires_at: 'date',
  },
  'scheduled_event.run_failed': {
    event_id: 'id',
    run_id: 'id',
    user_id: 'user',
    type_of_event: 'code',
    trigger: 'code',
    scheduled_time: 'date',
    started_at: 'date',
    finished_at: 'date',
    // the kind of failure, not the message (which may quote a recipient or a provider's answer)
    failure: { enum: ['not_allowed', 'limit', 'refused', 'internal'] },
  },
  'user.erased': { user_id: 'user', erasure_id: 'id', erased_at: 'date' },
  ping: { endpoint_id: 'id', message: { enum: ['A test event sent from the platform'] } },
};

function scalar(kind: Scalar, v: unknown): boolean {
  switch (kind) {
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'integer':
      return Number.isInteger(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'label':
      return typeof v === 'string' && v.length <= MAX_LABEL;
    default:
      return (
        typeof v === 'string' && { id: ID, user: USER, code: CODE, path: PATH, mime: MIME, date: DATE }[kind].test(v)
      );
  }
}

/** `value` held to `kind`: a conforming value as it is (objects and arrays rebuilt from their declared parts), anything else null. */
function conform(kind: FieldKind, value: unknown, at: string, refused: string[]): unknown {
  if (value === null || value === undefined) return null;
  if (typeof kind === 'string') {
    if (scalar(kind, value)) return value;
  } else if ('enum' in kind) {
    if (typeof value === 'string' && kind.enum.includes(value)) return value;
  } else if ('object' in kind) {
    if (typeof value === 'object' && !Array.isArray(value))
      return shaped(kind.object, value as Record<string, unknown>, at, refused);
  } else if (Array.isArray(value)) {
    return value.slice(0, MAX_ITEMS).map((v, i) => conform(kind.array, v, `${at}[${i}]`, refused));
  }
  refused.push(at);
  return null;
}

function shaped(shape: Shape, data: Record<string, unknown>, at: string, refused: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data)) {
    const path = at ? `${at}.${k}` : k;
    const kind = shape[k];
    if (!kind) refused.push(path);
    else if (v !== undefined) out[k] = conform(kind, v, path, refused);
  }
  return out;
}

/**
 * The event's data as its type's schema allows it, and the fields that were left out or nulled
 * (their paths, never their values): what recordEvent writes.
 */
export function conformEventData(
  type: EventType,
  data: Record<string, unknown>,
): { data: Record<string, unknown>; refused: string[] } {
  const refused: string[] = [];
  const shape = EVENT_SCHEMAS[type];
  if (!shape) return { data: {}, refused: Object.keys(data) };
  return { data: shaped(shape, data, '', refused), refused };
}
