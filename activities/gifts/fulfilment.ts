/**
 * The steps of the redemption workflow (workflows/redemption.ts): reserve the points, have the
 * provider deliver, then settle or release, or, when the provider's outcome is unknown, leave it
 * to an admin (needs_review) and apply the admin's settlement. Each step is idempotent by its
 * ledger operation id (`redemption:<id>:hold`, `redemption:<id>:refund`) and by the order's
 * customIdentifier (the redemption id), so a step run again after a worker died changes nothing
 * twice. A step that writes completed, refunded or needs_review records that state's event
 * (publish.ts) before it answers; run again, it records nothing new.
 */
import { Context } from '@temporalio/activity';

import type { GiftOrder, GiftProvider } from '../adapters/gift-provider.ts';
import { encryptSecret } from '../core/encryption.ts';
import { scrubber } from '../core/scrub.ts';
import { appliedRequest, debitPoints, getBalance, refundDebit } from '../loyalty/index.ts';
import type { GiftType, RedemptionDoc, RedemptionStatus, SettleOutcome } from './models.ts';
import { giftProvider } from './provider.ts';
import { recordRedemptionEvent } from './publish.ts';
import { findRedemption, type PersonalFields, type RedemptionOwner, saveRedemption } from './store.ts';

export interface RedemptionInput {
  redemption_id: string;
  organization_id: string;
  user_id: string;
  gift_id: string;
  gift_name: string;
  gift_type: GiftType;
  points: number;
  order: GiftOrder;
  /** the denomination asked for and its currency (gifts with denominations; absent in older runs) */
  denomination?: { amount: number; currency: string };
  /** when the outcome counts as unknown (absent in runs started before they existed: the defaults) */
  limits?: RedemptionLimits;
}

export interface RedemptionLimits {
  /** an order still PROCESSING after this goes to review (GIFT_PROCESSING_LIMIT_SECONDS) */
  processing_ms: number;
  /** attempts of an order or a status check before its outcome counts as unknown (GIFT_PROVIDER_ATTEMPTS) */
  attempts: number;
}

/** An admin's decision on a redemption in needs_review, as the workflow accepted it. */
export interface Settlement {
  outcome: SettleOutcome;
  settled_by: string;
  reason: string | null;
  /** ISO 8601: when the workflow accepted it */
  settled_at: string;
}

/** What the workflow passes between steps and answers: never a PIN in clear (it would sit in the history). */
export interface RedemptionState {
  redemption_id: string;
  status: RedemptionStatus;
}

export type FulfilAnswer =
  | { state: 'delivered'; transaction_id: string; pin_encrypted: string | null }
  | { state: 'processing'; transaction_id: string }
  | { state: 'refused'; transaction_id: string | null; reason: string };

/**
 * What the provider said when an admin settled a redemption: the workflow asks it once
 * (checkRedemption) before settleReviewed. An answer contradicting the admin (a refusal of a
 * "completed", a delivery of a "refunded") never gets here (the settlement is refused 409);
 * `unconfirmed`: it could not answer, or had nothing final to say.
 */
export type ReviewCheck =
  | { state: 'delivered'; transaction_id: string; pin_encrypted: string | null }
  | { state: 'refused'; transaction_id: string | null; reason: string }
  | { state: 'unconfirmed'; transaction_id: string | null; reason: string };

/** Kept as status_reason and in the ledger: the admin's own note stays in `settlement.reason`, shown to admins only. */
const REFUNDED_AFTER_REVIEW = 'Refunded by an administrator after review';

export const holdOperation = (redemption_id: string) => `redemption:${redemption_id}:hold`;
export const refundOperation = (redemption_id: string) => `redemption:${redemption_id}:refund`;
const FINAL_STATUSES: ReadonlySet<RedemptionStatus> = new Set(['completed', 'refunded', 'failed']);
/** The admin's note is about the person: after their erasure, the tombstone stands in for it (as the erasure wrote). */
const settlementOf = (s: Settlement, erased?: string | null) => ({
  outcome: s.outcome,
  settled_by: s.settled_by,
  reason: erased && s.reason ? erased : s.reason,
  settled_at: new Date(s.settled_at),
});

/** The number or account the gift went to, out of a provider's text (the ledger and the record keep the reason). */
const withoutNumbers = (input: RedemptionInput) =>
  scrubber([input.order.phone_number ?? '', input.order.account_reference ?? ''], '[number]');

/**
 * A reason that may quote the person (a provider's words), and its stand-in after their erasure:
 * without the number, the account or the user's id.
 */
const reasonOf = (input: RedemptionInput, reason: string): PersonalFields => ({
  own: { status_reason: reason },
  erased: (tombstone) => ({ status_reason: scrubber([input.user_id], tombstone, true)(withoutNumbers(input)(reason)) }),
});

/** Personal fields together: each one's own value, or each one's stand-in. */
const together = (...parts: PersonalFields[]): PersonalFields => ({
  own: Object.assign({}, ...parts.map((p) => p.own)),
  erased: (t) => Object.assign({}, ...parts.map((p) => p.erased(t))),
});

/** A settlement: the admin's note is about the person, so the tombstone stands in for it after their erasure (as the erasure writes). */
const settlementField = (s: Settlement): PersonalFields => ({
  own: { settlement: settlementOf(s) },
  erased: (t) => ({ settlement: settlementOf(s, t) }),
});

/** An electronic PIN is the person's gift: after their erasure it is not kept. */
const pinField = (pin_encrypted: string | null | undefined): PersonalFields => ({
  own: pin_encrypted ? { pin_encrypted } : {},
  erased: () => ({}),
});

const state = (doc: RedemptionDoc): RedemptionState => ({ redemption_id: doc.redemption_id, status: doc.status });

/**
 * The state a step wrote, told as its event (publish.ts) before the step answers: a step retried
 * after a crash writes the same state again and reaches this again (recording nothing new).
 */
async function told(doc: RedemptionDoc): Promise<RedemptionState> {
  await recordRedemptionEvent(doc);
  return state(doc);
}

const ownerOf = (input: RedemptionInput): RedemptionOwner => ({
  operation_id: holdOperation(input.redemption_id),
  organization_id: input.organization_id,
  user_id: input.user_id,
  gift_id: input.gift_id,
  gift_name: input.gift_name,
  gift_type: input.gift_type,
  phone_number: input.order.phone_number ?? undefined,
  account_reference: input.order.account_reference ?? undefined,
  amount: input.denomination?.amount,
  currency: input.denomination?.currency,
});

/**
 * Holds the gift's points: one ledger debit, so the balance drops at once and a second
 * redemption cannot spend them (409 and nothing written when they are not there), then records
 * the redemption as processing.
 */
export async function reserveRedemption(input: RedemptionInput): Promise<RedemptionState> {
  const existing = await findRedemption(input.redemption_id);
  if (existing && FINAL_STATUSES.has(existing.status)) return state(existing);
  const hold = await debitPoints({
    organization_id: input.organization_id,
    user_id: input.user_id,
    points: input.points,
    reason: 'redemption',
    operation_id: holdOperation(input.redemption_id),
    description: `gift ${input.gift_id}: ${input.gift_name}`,
  });
  const doc = await saveRedemption(
    input.redemption_id,
    {
      points_spent: -hold.entry.amount,
      points_refunded: 0,
      balance_after: hold.spendable_after ?? hold.entry.balance_after, // what can still be spent
      ledger_entry_id: hold.entry.entry_id,
      status: 'processing',
      provider: giftProvider().name,
    },
    ownerOf(input),
  );
  return state(doc);
}

function attempt(): number {
  try {
    return Context.current().info.attempt;
  } catch {
    return 1; // called outside a worker
  }
}

async function answerOf(f: Awaited<ReturnType<GiftProvider['order']>>): Promise<FulfilAnswer> {
  if (f.state !== 'delivered') return f;
  return { state: 'delivered', transaction_id: f.transaction_id, pin_encrypted: f.pin ? encryptSecret(f.pin) : null };
}

/** Places the order with the provider; a retried attempt finds the first order by its customIdentifier. */
export async function fulfilRedemption(input: RedemptionInput): Promise<FulfilAnswer> {
  return answerOf(await giftProvider().order(input.order, { retry: attempt() > 1 }));
}

/** Asks the provider where an order stands (null: its transaction id is unknown, found by its customIdentifier). */
export async function checkRedemption(input: RedemptionInput, transaction_id: string | null): Promise<FulfilAnswer> {
  return answerOf(await giftProvider().check(input.order, transaction_id));
}

/** Delivered: the hold stays as the debit; an electronic PIN is kept encrypted for its owner. */
export async function settleRedemption(
  input: RedemptionInput,
  delivered: { transaction_id: string; pin_encrypted: string | null },
): Promise<RedemptionState> {
  const doc = await saveRedemption(
    input.redemption_id,
    { status: 'completed', provider_transaction_id: delivered.transaction_id },
    ownerOf(input),
    pinField(delivered.pin_encrypted),
  );
  return told(doc);
}

/**
 * Refused for good (or refunded by an admin's settlement): the hold is given back as one `refund`
 * entry, with the reason. It returns the very lots the hold took, each with its credit's
 * `expires_at` (ledger.refundDebit): a fresh credit would renew points about to lapse at every
 * refused redemption. Points that lapsed while held stay lapsed (`points_lapsed`, not counted in
 * `points_refunded`: points_spent = points_refunded + points_lapsed).
 */
export async function releaseRedemption(
  input: RedemptionInput,
  refusal: { transaction_id: string | null; reason: string },
  settlement?: Settlement,
): Promise<RedemptionState> {
  // The hold's owner gets the points back: the user, or their tombstone after an erasure.
  const refund = await refundDebit({
    organization_id: input.organization_id,
    user_id: input.user_id,
    debit_operation_id: holdOperation(input.redemption_id),
    operation_id: refundOperation(input.redemption_id),
    reason: 'refund',
    description: `gift ${input.gift_id} not delivered: ${withoutNumbers(input)(refusal.reason)}`.slice(0, 500),
  });
  const doc = await saveRedemption(
    input.redemption_id,
    {
      points_spent: input.points,
      // What came back spendable, and what came back lapsed: together the points spent.
      points_refunded: refund.entry.amount - refund.points_lapsed,
      points_lapsed: refund.points_lapsed,
      refund_entry_id: refund.entry.entry_id,
      status: 'refunded',
      ...(refusal.transaction_id ? { provider_transaction_id: refusal.transaction_id } : {}),
    },
    ownerOf(input),
    together(reasonOf(input, refusal.reason), ...(settlement ? [settlementField(settlement)] : [])),
  );
  return told(doc);
}

/**
 * The provider's outcome is unknown (no final answer within the processing limit, or its calls
 * failed past their retries): it may still deliver, so nothing is given back. The hold stays and
 * the redemption waits for an admin (`needs_review`).
 */
export async function reviewRedemption(
  input: RedemptionInput,
  unknown: { transaction_id: string | null; reason: string },
): Promise<RedemptionState> {
  const doc = await saveRedemption(
    input.redemption_id,
    { status: 'needs_review', ...(unknown.transaction_id ? { provider_transaction_id: unknown.transaction_id } : {}) },
    ownerOf(input),
    reasonOf(input, unknown.reason),
  );
  return told(doc);
}

/**
 * Applies an admin's settlement of a redemption in needs_review: completed (the hold is the debit)
 * or refunded (noting whether the provider confirmed the failure). A completed one keeps what the provider said when asked (`check`): the delivered
 * transaction and its PIN, or, when it could not confirm, that it was completed on the admin's
 * word (and, for a PIN, that none was obtained). Runs settled before the check existed pass none.
 * Idempotent: the same arguments write the same record.
 */
export async function settleReviewed(
  input: RedemptionInput,
  settlement: Settlement,
  check?: ReviewCheck,
): Promise<RedemptionState> {
  if (settlement.outcome === 'refunded') {
    // The provider's own words stay out (this reason is the owner's and the ledger's); a
    // delivered check never reaches a refund (the workflow refuses it).
    const said =
      check?.state === 'refused'
        ? '; the provider confirmed the order failed'
        : check
          ? ': the provider did not confirm a delivery'
          : '';
    return releaseRedemption(
      input,
      { transaction_id: check?.transaction_id ?? null, reason: REFUNDED_AFTER_REVIEW + said },
      settlement,
    );
  }
  const pin = input.gift_type === 'electronic_pins';
  let status_reason = 'Completed by an administrator after review';
  if (check?.state === 'delivered') status_reason += '; the provider confirmed the delivery';
  else if (check)
    status_reason += ` on the administrator's word: the provider did not confirm it (${check.reason})${pin ? '; no PIN was obtained' : ''}`;
  else if (pin) status_reason += '; no PIN was obtained';
  const transaction_id = check?.transaction_id ?? null;
  const doc = await saveRedemption(
    input.redemption_id,
    { status: 'completed', ...(transaction_id ? { provider_transaction_id: transaction_id } : {}) },
    ownerOf(input),
    together(
      reasonOf(input, status_reason.slice(0, 1000)),
      settlementField(settlement),
      pinField(check?.state === 'delivered' ? check.pin_encrypted : null),
    ),
  );
  return told(doc);
}

/**
 * The reserve step failed on server errors past its retries, so it is not known whether a hold
 * was written. Run once no attempt can still be running: a hold that is there is released
 * (`refunded`); without one nothing was taken and the redemption is `failed`.
 */
export async function closeUnreserved(input: RedemptionInput, reason: string): Promise<RedemptionState> {
  const op = holdOperation(input.redemption_id);
  const hold = await appliedRequest(input.organization_id, op, op);
  if (hold) {
    if (!(await findRedemption(input.redemption_id))) {
      await saveRedemption(
        input.redemption_id,
        {
          points_spent: -hold.entry.amount,
          balance_after: hold.spendable_after ?? hold.entry.balance_after,
          ledger_entry_id: hold.entry.entry_id,
          status: 'processing',
          provider: giftProvider().name,
        },
        ownerOf(input),
      );
    }
    return releaseRedemption(input, { transaction_id: null, reason });
  }
  const balance = await getBalance(input.organization_id, input.user_id).then(
    (b) => b.points,
    () => 0,
  );
  const doc = await saveRedemption(
    input.redemption_id,
    { points_spent: 0, points_refunded: 0, balance_after: balance, status: 'failed', status_reason: reason },
    ownerOf(input),
  );
  return state(doc);
}
