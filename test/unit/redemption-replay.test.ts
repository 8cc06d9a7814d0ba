/**
 * Workflow versioning: a redemption run recorded by the code before `needs_review` existed (an
 * unknown provider outcome then released the points at once) replays on today's code without a
 * non-determinism error, because the new branch sits behind patched('needs-review').
 * The history (test/fixtures/redemption-history-pre-review.bin, a binary temporal History) was
 * recorded once by running the older workflows/redemption.ts on a local Temporal dev server with
 * stand-in activities: the hold taken, the order failing for good, then releaseRedemption.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

import { temporal } from '@temporalio/proto';
import { describe, expect, it } from 'vitest';

import { replayRedemption } from '../helpers/replay.ts';

const fixture = fileURLToPath(new URL('../fixtures/redemption-history-pre-review.bin', import.meta.url));

describe('redemption workflow versioning', () => {
  it('replays a run recorded before needs_review (released on an unknown outcome) with the current code', async () => {
    const history = temporal.api.history.v1.History.decode(fs.readFileSync(fixture));
    const types = history.events.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
    // What the old code did: no review, the points released at once.
    expect(types).toEqual(['reserveRedemption', 'fulfilRedemption', 'releaseRedemption']);
    await expect(replayRedemption(history, 'redemption-pre-review')).resolves.toBeUndefined();
  }, 180_000);

  // test/fixtures/redemption-history-settle-refund.bin: recorded the same way with the code before
  // "refunded" settlements asked the provider: needs_review, a "completed" settlement that asked
  // and was refused (409), then a "refunded" one applied without asking. Under a reused patch id
  // the replay would ask there (the first settlement recorded that id's marker).
  it('replays a run whose refund settlement did not ask the provider (after a refused "completed" that did)', async () => {
    const history = temporal.api.history.v1.History.decode(
      fs.readFileSync(fileURLToPath(new URL('../fixtures/redemption-history-settle-refund.bin', import.meta.url))),
    );
    const types = history.events.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
    expect(types).toEqual([
      'reserveRedemption',
      'fulfilRedemption',
      'reviewRedemption',
      'checkRedemption',
      'settleReviewed',
    ]);
    await expect(replayRedemption(history, 'redemption-settle-refund')).resolves.toBeUndefined();
  }, 180_000);
});
