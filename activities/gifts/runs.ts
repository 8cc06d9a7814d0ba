/**
 * A redemption as the API asks for it: start its workflow `redemption:<id>` (or join the one a
 * retry already started), wait briefly for its outcome, and settle one in review. The component
 * holds no Temporal client: the composition root hands the workflow operations in
 * (`configureGifts`, workers/root.ts; workers/runs/starts.ts implements them).
 */
import { noteChange } from '../core/audit-note.ts';
import { notFound, PlatformError } from '../core/errors.ts';
import { handedIn } from '../core/wiring.ts';
import { whilePledged } from '../loyalty/index.ts';
import { holdOperation, type RedemptionInput } from './fulfilment.ts';
import type { RedemptionDoc, SettleOutcome } from './models.ts';
import {
  prepareRedemption,
  type RedeemRequest,
  type RedemptionView,
  sameRedemption,
  type Viewer,
  viewRedemption,
} from './redemptions.ts';
import { findRedemption } from './store.ts';

/** How long a redeem request waits for the provider before answering `processing`. */
const REDEEM_WAIT_MS = 5000;

export interface RedemptionRuns {
  /** whether the redemption's run is going on or has completed (a retried request joins it) */
  liveOrDone(redemption_id: string): Promise<boolean>;
  /** starts the run; false when this redemption's run already exists (a retried request) */
  start(input: RedemptionInput, owner: { organization_id: string; user_id: string }): Promise<boolean>;
  /**
   * Resolves with the run's outcome within `wait_ms`, else once its points are held (`held` says
   * whether the record shows that already, so no worker is needed to answer).
   */
  untilSettledOrHeld(redemption_id: string, wait_ms: number, held: () => Promise<boolean>): Promise<void>;
  /** the run's settle update; rejects when the run ended meanwhile */
  settle(
    redemption_id: string,
    s: { outcome: SettleOutcome; reason: string | null; settled_by: string },
  ): Promise<{ duplicate: boolean }>;
}

const runs = handedIn<RedemptionRuns>("gifts' redemption runs");

export function configureGifts(deps: { runs: RedemptionRuns }): void {
  runs.set(deps.runs);
}

async function record(redemption_id: string): Promise<RedemptionDoc> {
  const doc = await findRedemption(redemption_id);
  if (!doc) throw new PlatformError('internal', `redemption ${redemption_id} has no record`);
  return doc;
}

/**
 * Redeems a gift: the points are held at once and the provider delivers in the run. Answers the
 * redemption as it stands after REDEEM_WAIT_MS at most (`processing` or `needs_review` when not
 * final); `duplicate` when an earlier request with the same idempotency key made it.
 */
export async function redeemGift(
  req: RedeemRequest,
  viewer: Viewer,
): Promise<{ duplicate: boolean; redemption: RedemptionView }> {
  const r = runs.get();
  const prepared = await prepareRedemption(req);
  const { redemption_id, input } = prepared;
  let duplicate = prepared.existing !== null;
  const untilHeld = () =>
    r.untilSettledOrHeld(redemption_id, REDEEM_WAIT_MS, async () => (await findRedemption(redemption_id)) !== null);
  const startAndWait = async (run: RedemptionInput) => {
    if (!(await r.start(run, { organization_id: req.organization_id, user_id: req.user_id }))) duplicate = true;
    await untilHeld();
  };
  if (input) {
    let admitted = false;
    try {
      // Points this process already promised to runs whose holds are not written yet count: a
      // redemption they leave uncovered is refused here, without a run (loyalty's pledges).
      const pledge = { ...input, operation_id: holdOperation(redemption_id) };
      await whilePledged(pledge, () => {
        admitted = true;
        return startAndWait(input);
      });
    } catch (err) {
      // A retry of a request whose run is under way elsewhere (its hold already spent the
      // points) joins that run (its outcome, a refusal included, is the answer); it starts none.
      if (admitted || !req.idempotency_key || !(await r.liveOrDone(redemption_id).catch(() => false))) throw err;
      duplicate = true;
      await untilHeld();
    }
  } else if (prepared.existing?.status === 'processing') {
    await untilHeld();
  }
  const doc = await record(redemption_id);
  // (a retry that joined a run before its record existed is checked here)
  sameRedemption(doc, req);
  return { duplicate, redemption: viewRedemption(doc, viewer) };
}

/**
 * An admin's settlement of a redemption in `needs_review`, applied by the redemption's own run (it
 * takes one settlement, so two different ones at once cannot both win). The same outcome again
 * answers duplicate; another outcome, or a redemption not in review, is 409.
 */
export async function settleInReview(
  organization_id: string,
  redemption_id: string,
  s: { outcome: SettleOutcome; reason: string | null },
  viewer: Viewer,
): Promise<{ duplicate: boolean; redemption: RedemptionView }> {
  const r = runs.get();
  const decided = (doc: RedemptionDoc) => {
    if (!doc.settlement) return null;
    if (doc.settlement.outcome !== s.outcome)
      throw new PlatformError(
        'conflict',
        `Redemption ${redemption_id} was already settled as ${doc.settlement.outcome}`,
      );
    return { duplicate: true, redemption: viewRedemption(doc, viewer) };
  };
  const doc = await findRedemption(redemption_id);
  if (!doc || doc.organization_id !== organization_id) throw notFound(`Redemption not found: ${redemption_id}`);
  const done = decided(doc);
  if (done) return done;
  if (doc.status !== 'needs_review')
    throw new PlatformError(
      'conflict',
      `Redemption ${redemption_id} is ${doc.status}; only a redemption in needs_review can be settled`,
    );
  let duplicate: boolean;
  try {
    ({ duplicate } = await r.settle(redemption_id, { ...s, settled_by: viewer.user_id }));
  } catch (err) {
    // The run ended meanwhile (a concurrent request settled it): the record says how.
    const now = await findRedemption(redemption_id);
    const again = now && decided(now);
    if (again) return again;
    throw err;
  }
  const settled = await record(redemption_id);
  if (!duplicate) noteChange('status', doc.status, settled.status);
  return { duplicate, redemption: viewRedemption(settled, viewer) };
}
