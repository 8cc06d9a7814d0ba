/** Gift values the edge validates against, kept apart from the schemas so it imports no model. */
export const GIFT_TYPES = ['mobile_top-ups', 'electronic_pins', 'service_payments'] as const;
export type GiftType = (typeof GIFT_TYPES)[number];

/** Fields each gift type must carry to be created; what a redemption needs besides is checked in redemptions.ts. */
export const REQUIRED_BY_TYPE: Record<GiftType, readonly string[]> = {
  'mobile_top-ups': ['telco_supplier', 'recharge_amount', 'points_value'],
  electronic_pins: ['supplier', 'electronic_pin_amount', 'points_value'],
  service_payments: ['service_provider'],
};

export const GIFT_FIELDS = [
  'gift_name',
  'gift_type',
  'country',
  'url_photo',
  'telco_supplier',
  'recharge_amount',
  'points_value',
  'supplier',
  'electronic_pin_amount',
  'service_provider',
  'denominations',
  'points_per_unit',
  'operator_id',
] as const;

/**
 * What a gift imported from the provider's catalogue carries besides (written by the sync only:
 * an admin's PUT keeps them). `available: false`: withdrawn by the provider, kept for the past
 * redemptions that name it, not redeemable.
 */
export const PROVIDER_GIFT_FIELDS = ['provider_product_id', 'provider_currency', 'provider_rate', 'available'] as const;

export const DENOMINATION_TYPES = ['fixed', 'range'] as const;
/** A fixed list holds at most this many amounts. */
export const MAX_FIXED_AMOUNTS = 50;

/**
 * `needs_review`: the provider's outcome is unknown (no final answer within the processing limit,
 * or its calls kept failing): the points stay held until an admin settles it as one of
 * SETTLE_OUTCOMES.
 */
export const REDEMPTION_STATUSES = ['processing', 'needs_review', 'completed', 'refunded', 'failed'] as const;
export type RedemptionStatus = (typeof REDEMPTION_STATUSES)[number];
export const SETTLE_OUTCOMES = ['completed', 'refunded'] as const;
export type SettleOutcome = (typeof SETTLE_OUTCOMES)[number];
