/**
 * Redemptions as the edge sees them: checking a request before its workflow starts, and the
 * redemption as its owner, an admin or another user may read it.
 */
import { createHash } from 'node:crypto';

import type { GiftOrder } from '../adapters/gift-provider.ts';
import { warnLine } from '../core/background.ts';
import { decryptSecret } from '../core/encryption.ts';
import { conflict, invalid, notFound, PlatformError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { getBalance } from '../loyalty/index.ts';
import type { RedemptionInput, RedemptionLimits } from './fulfilment.ts';
import { checkFunding } from './funding.ts';
import { giftNotFound } from './gifts.ts';
import type { GiftDoc, RedemptionDoc, RedemptionStatus, SettleOutcome } from './models.ts';
import { giftProvider } from './provider.ts';
import { giftsSettings } from './settings.ts';
import { findGift, findRedemption, pageRedemptions } from './store.ts';

export interface RedeemRequest {
  organization_id: string;
  user_id: string;
  gift_id: string;
  idempotency_key?: string;
  phone_number?: string;
  account_reference?: string;
  /** the denomination asked for (gifts with denominations), in the gift's currency */
  amount?: number;
}

/** A redemption id per (organization, user, idempotency key): a retry reaches the same workflow. */
const redemptionIdFor = (organization_id: string, user_id: string, key?: string) =>
  key
    ? `rdm_${createHash('sha256').update(`${organization_id}\u0000${user_id}\u0000${key}`).digest('base64url').slice(0, 22)}`
    : newId('rdm');

/** When a redemption's outcome counts as unknown (it then waits for an admin): set per run, from the configuration. */
const redemptionLimits = (): RedemptionLimits => ({
  processing_ms: giftsSettings().GIFT_PROCESSING_LIMIT_SECONDS * 1000,
  attempts: giftsSettings().GIFT_PROVIDER_ATTEMPTS,
});

const E164 = /^\+[1-9]\d{7,14}$/;

/** The phone number as stored: without spaces, dots, dashes and parentheses. */
const phoneOf = (req: RedeemRequest) => req.phone_number?.replace(/[\s().-]/g, '');

/**
 * A redemption an idempotency key made answers a request with that key only if it asked for the
 * same thing: another gift, or the same gift to another number or account, is 409 (answering the
 * first would tell the user their new number or account got the gift).
 */
export function sameRedemption(
  existing: Pick<RedemptionDoc, 'gift_id' | 'phone_number' | 'account_reference' | 'amount'>,
  req: RedeemRequest,
): void {
  if (existing.gift_id !== req.gift_id) throw conflict('This idempotency key was already used to redeem another gift');
  const phone = phoneOf(req);
  if (phone && existing.phone_number && phone !== existing.phone_number)
    throw conflict('This idempotency key was already used for a top-up to another phone_number');
  const reference = req.account_reference?.trim();
  if (reference && existing.account_reference && reference !== existing.account_reference)
    throw conflict('This idempotency key was already used for a payment to another account_reference');
  if (req.amount !== undefined && existing.amount !== undefined && req.amount !== existing.amount)
    throw conflict('This idempotency key was already used for another amount');
}

/** Amounts are compared to the cent: 9.999 is not 10. */
const cents = (n: number) => Math.round(n * 100);

/**
 * The amount a redemption asks for and its price in points: a gift with denominations needs an
 * `amount` in its list or range (400 naming it, before anything is held); one without takes none.
 */
function priced(gift: GiftDoc, amount: number | undefined): { amount: number | null; points: number } {
  const d = gift.denominations;
  if (!d) {
    if (amount !== undefined)
      throw invalid('amount', `gift ${gift.gift_id} has a single amount: amount is only for gifts with denominations`);
    if (!gift.points_value)
      throw new PlatformError(
        'conflict',
        `Gift ${gift.gift_id} has no points_value and cannot be redeemed with points`,
      );
    return { amount: null, points: gift.points_value };
  }
  if (amount === undefined)
    throw invalid(
      'amount',
      d.type === 'fixed'
        ? `required: one of ${d.amounts.join(', ')} ${d.currency}`
        : `required: from ${d.min} to ${d.max} ${d.currency}`,
    );
  if (d.type === 'fixed') {
    const asked = cents(amount);
    const listed = d.amounts.find((a) => cents(a) === asked);
    if (listed === undefined)
      throw invalid(
        'amount',
        `${amount} is not a denomination of this gift: one of ${d.amounts.join(', ')} ${d.currency}`,
      );
    // Priced and ordered at the listed amount, never at a near miss such as 24.996 for 25.
    amount = listed;
  }
  if (d.type === 'range' && (cents(amount) < cents(d.min) || cents(amount) > cents(d.max)))
    throw invalid('amount', `${amount} is outside this gift's range: from ${d.min} to ${d.max} ${d.currency}`);
  if (d.type === 'range' && Math.abs(cents(amount) - amount * 100) > 1e-6)
    throw invalid('amount', 'at most 2 decimal places');
  if (!gift.points_per_unit)
    throw new PlatformError(
      'conflict',
      `Gift ${gift.gift_id} has no points_per_unit and cannot be redeemed with points`,
    );
  // Rounded up: a redemption never costs less than its price (the 1e-9 absorbs binary fractions).
  return { amount, points: Math.max(1, Math.ceil(amount * gift.points_per_unit - 1e-9)) };
}

/** What the order costs in the provider account's currency, when the gift says (null: not known). */
function costOf(gift: GiftDoc, amount: number | null): { amount: number; currency: string } | null {
  const d = gift.denominations;
  if (!d || amount === null) return null;
  if (gift.provider_currency && gift.provider_rate)
    return { amount: Math.round(amount * gift.provider_rate * 100) / 100, currency: gift.provider_currency };
  return { amount, currency: d.currency };
}

const operatorKey = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, '');

/**
 * A top-up gift that names its operator (`operator_id`) refuses a number the provider detects as
 * another operator's (400 naming phone_number), before anything is held. A number the provider
 * cannot place, or a detection that fails, is let through: the order itself then decides.
 */
async function checkOperator(gift: GiftDoc, phone: string): Promise<void> {
  if (!gift.operator_id || !gift.country) return;
  const detected = await giftProvider()
    .detectOperator(phone, gift.country)
    .catch((err: unknown) => {
      warnLine('gifts: operator detection failed; the order decides', err, { gift_id: gift.gift_id });
      return null;
    });
  if (!detected || operatorKey(detected.operator_id) === operatorKey(gift.operator_id)) return;
  // The detected operator is not named: the route is no free carrier lookup.
  throw invalid(
    'phone_number',
    `the provider places this number with another operator than this gift's (${gift.telco_supplier ?? gift.operator_id})`,
  );
}

/** The hold decides for good; this only refuses early (409, as the hold would) a member already short. */
async function checkPoints(req: RedeemRequest, points: number): Promise<void> {
  const balance = await getBalance(req.organization_id, req.user_id).then(
    (b) => b.points,
    () => 0,
  );
  if (balance < points) throw conflict(`Not enough points: balance ${balance}, needed ${points}`);
}

/**
 * What a redeem request starts: the workflow's input, or the redemption its idempotency key
 * already made (409 when that key was used for another gift; one still processing is joined). The fields the gift's type needs
 * are checked here, before anything is held: 422 naming the field.
 */
export async function prepareRedemption(
  req: RedeemRequest,
): Promise<{ redemption_id: string; existing: RedemptionDoc | null; input: RedemptionInput | null }> {
  const redemption_id = redemptionIdFor(req.organization_id, req.user_id, req.idempotency_key);
  const existing = req.idempotency_key ? await findRedemption(redemption_id) : null;
  if (existing) {
    sameRedemption(existing, req);
    return { redemption_id, existing, input: null };
  }
  const gift = await findGift(req.organization_id, req.gift_id);
  if (!gift) throw giftNotFound(req.gift_id);
  if (gift.available === false)
    throw conflict(`Gift ${gift.gift_id} was withdrawn by the gift provider and cannot be redeemed`);
  const price = priced(gift, req.amount);
  // Points first, when the provider is asked anything before the hold: a member who cannot pay
  // learns nothing of the provider's account or a number's operator, and costs it no call.
  if ((gift.gift_type === 'mobile_top-ups' && gift.operator_id) || costOf(gift, price.amount))
    await checkPoints(req, price.points);
  const order: GiftOrder = {
    custom_identifier: redemption_id,
    kind: gift.gift_type,
    product: '',
    amount: null,
    country: gift.country ?? null,
  };
  if (gift.gift_type === 'mobile_top-ups') {
    const phone = phoneOf(req);
    if (!phone) throw invalid('phone_number', 'required for a mobile top-up (E.164, e.g. +5215512345678)');
    if (!E164.test(phone))
      throw invalid('phone_number', 'must be an E.164 number: + and 8 to 15 digits, e.g. +5215512345678');
    Object.assign(order, {
      product: gift.telco_supplier ?? '',
      amount: gift.recharge_amount ?? null,
      phone_number: phone,
    });
    await checkOperator(gift, phone);
  } else if (gift.gift_type === 'electronic_pins') {
    Object.assign(order, { product: gift.supplier ?? '', amount: gift.electronic_pin_amount ?? null });
  } else {
    const reference = req.account_reference?.trim();
    if (!reference)
      throw invalid(
        'account_reference',
        'required for a service payment (the account or contract number with the biller)',
      );
    Object.assign(order, { product: gift.service_provider ?? '', account_reference: reference });
  }
  const cost = costOf(gift, price.amount);
  if (price.amount !== null)
    Object.assign(order, {
      amount: price.amount,
      product_id: gift.provider_product_id ?? null,
      account: req.organization_id,
      cost,
    });
  // Last, once the request is known to be well formed: the provider's account must cover it.
  await checkFunding(req.organization_id, cost);
  const input: RedemptionInput = {
    redemption_id,
    organization_id: req.organization_id,
    user_id: req.user_id,
    gift_id: gift.gift_id,
    gift_name: gift.gift_name,
    gift_type: gift.gift_type,
    points: price.points,
    order,
    ...(price.amount !== null && gift.denominations
      ? { denomination: { amount: price.amount, currency: gift.denominations.currency } }
      : {}),
    limits: redemptionLimits(),
  };
  return { redemption_id, existing, input };
}

export interface RedemptionView {
  id: string;
  gift_id: string;
  gift_name: string;
  gift_type: string | null;
  user_id: string;
  points_spent: number;
  points_refunded: number;
  points_lapsed: number;
  balance_after: number;
  status: RedemptionStatus;
  status_reason: string | null;
  provider: string | null;
  provider_transaction_id: string | null;
  phone_number: string | null;
  account_reference: string | null;
  amount: number | null;
  currency: string | null;
  pin_code: string | null;
  pin_masked: boolean;
  /** settled_by and the admin's own reason for admin readers only (a basic owner: null and a fixed reason) */
  settlement: { outcome: SettleOutcome; settled_by: string | null; reason: string | null; settled_at: string } | null;
  created_at: string;
  updated_at: string;
}

/**
 * Who reads: the owner sees an electronic PIN in clear, anyone else (admins) only its last 4
 * characters. `level` 0 (a basic key) never sees who settled a redemption or the admin's note.
 */
export interface Viewer {
  user_id: string;
  level: number;
}

/** What a basic reader is told of an admin's settlement, instead of the admin's note. */
function settledForUser(r: RedemptionDoc): string {
  if (r.settlement?.outcome === 'refunded') return 'Not delivered: the points were given back after review';
  if (r.gift_type === 'electronic_pins' && !r.pin_encrypted)
    return 'Confirmed as delivered after review; the PIN could not be retrieved here: please contact support';
  return 'Confirmed as delivered after review';
}

const maskPin = (pin: string) => pin.replace(/[A-Za-z0-9]/g, (c, i) => (i >= pin.length - 4 ? c : '•'));

export function viewRedemption(r: RedemptionDoc, viewer: Viewer): RedemptionView {
  const owner = viewer.user_id === r.user_id;
  const admin = viewer.level > 0;
  const s = r.settlement;
  const pin = r.pin_encrypted ? decryptSecret(r.pin_encrypted) : null;
  return {
    id: r.redemption_id,
    gift_id: r.gift_id,
    gift_name: r.gift_name,
    gift_type: r.gift_type ?? null,
    user_id: r.user_id,
    points_spent: r.points_spent,
    points_refunded: r.points_refunded ?? 0,
    points_lapsed: r.points_lapsed ?? 0,
    balance_after: r.balance_after,
    status: r.status,
    status_reason: s && !admin ? settledForUser(r) : (r.status_reason ?? null),
    provider: r.provider ?? null,
    provider_transaction_id: r.provider_transaction_id ?? null,
    phone_number: r.phone_number ?? null,
    account_reference: r.account_reference ?? null,
    amount: r.amount ?? null,
    currency: r.currency ?? null,
    pin_code: pin === null ? null : owner ? pin : maskPin(pin),
    pin_masked: pin !== null && !owner,
    settlement: s
      ? {
          outcome: s.outcome,
          settled_by: admin ? s.settled_by : null,
          reason: admin ? (s.reason ?? null) : settledForUser(r),
          settled_at: new Date(s.settled_at).toISOString(),
        }
      : null,
    created_at: r.created_at.toISOString(),
    updated_at: (r.updated_at ?? r.created_at).toISOString(),
  };
}

/**
 * One redemption of the organization. `own_only` (a basic key): another user's is 404, the same
 * answer as one that does not exist.
 */
export async function getRedemption(
  organization_id: string,
  redemption_id: string,
  viewer: Viewer & { own_only: boolean },
): Promise<RedemptionView> {
  const doc = await findRedemption(redemption_id);
  if (!doc || doc.organization_id !== organization_id || (viewer.own_only && doc.user_id !== viewer.user_id))
    throw notFound(`Redemption not found: ${redemption_id}`);
  return viewRedemption(doc, viewer);
}

export async function listRedemptions(
  organization_id: string,
  filter: { user_id: string | null; status: RedemptionStatus | null },
  page: number,
  limit: number,
  viewer: Viewer,
) {
  const { docs, total } = await pageRedemptions(organization_id, filter.user_id, filter.status, page, limit);
  return {
    redemptions: docs.map((d) => viewRedemption(d, viewer)),
    page,
    limit,
    total,
    has_more: page * limit < total,
  };
}
